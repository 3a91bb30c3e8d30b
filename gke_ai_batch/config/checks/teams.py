"""Teams: namespaces, local queues, RBAC groups, Pod Security and NetworkPolicy."""

from __future__ import annotations

from typing import Callable, Iterator

from gke_ai_batch.domain import naming
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.batch import TeamConfig
from gke_ai_batch.config.checks import check, entry, valid
from gke_ai_batch.config.lookups import copies

# Kubernetes reserves namespaces starting with "kube-"
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/#initial-namespaces).
# GKE owns gke-* and gmp-* namespaces (gke-managed-*, gke-gmp-system, gmp-system, gmp-public),
# and on Autopilot they and kube-system are managed namespaces in which GKE Warden denies
# users' writes (https://cloud.google.com/kubernetes-engine/docs/concepts/autopilot-security,
# "managed namespaces"; error "GKE Warden authz [denied by managed-namespaces-limitation]").
RESERVED_NAMESPACE_PREFIXES = {"kube-": "Kubernetes", "gke-": "GKE", "gmp-": "GKE (Managed Service for Prometheus)"}
# The Pod Security admission labels (https://kubernetes.io/docs/concepts/security/pod-security-admission/).
POD_SECURITY_LABEL_PREFIX = "pod-security.kubernetes.io/"
# Namespaces the Helm releases create and own.
INSTALL_NAMESPACES = ("kueue-system", "jobset-system")
# The Kueue integrations behind the kinds the team Role may create (batch Jobs, JobSets).
TEAM_ROLE_FRAMEWORKS = ("batch/job", "jobset.x-k8s.io/jobset")


@check("teams", on_manager=False)
def teams(cfg, ctx) -> Iterator[RuleError]:
    """Each team: a local queue of its own, a cluster queue the stack has, a namespace of its
    own (Kubernetes docs namespaces, RESERVED_NAMESPACE_PREFIXES), a group GKE can put into
    requests (GKE docs how-to/google-groups-rbac), a NetworkPolicy GKE enforces (GKE docs
    concepts/dataplane-v2); teams sharing a namespace agree on its settings."""
    # Sorted by entry afterwards (stack_problems), so each entry's problems keep this order.
    yield from local_queue_problems(cfg.teams)
    copied = copies(cfg.teams)
    for i, team in valid(cfg.teams):
        if i not in copied:
            yield from team_entry(cfg, ctx, i, team)
    yield from namespace_settings_problems(cfg.teams)


@entry("teams", on_manager=False)
def team_entry(cfg, ctx, i: int, team: TeamConfig) -> Iterator[RuleError]:
    """One team's rules (the teams check's, on each entry that is not a copy)."""
    declared = valid(cfg.cluster_queues)
    queues = list(dict.fromkeys(cq.name for _, cq in declared))
    # Past an invalid queue entry, a name not among the valid ones may be the invalid one's.
    if team.cluster_queue not in queues and len(declared) == len(cfg.cluster_queues):
        yield RuleError(
            ("teams", i, "clusterQueue"),
            f"unknown cluster queue {team.cluster_queue!r}; known: {', '.join(queues) or 'none'}",
        )
    yield from team_namespace_problems(i, team, cfg.cluster.standard)
    if team.group is not None and cfg.cluster.security_group is None:
        # GKE puts a user's groups into the request only through the cluster's security
        # group (authenticatorGroupsConfig); without it a Group subject matches nobody.
        yield RuleError(
            ("teams", i, "group"),
            f"group {team.group!r} needs Google Groups for RBAC on the cluster: set "
            "cluster.securityGroup to gke-security-groups@<your domain> and make this group a "
            "member of it (https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac)",
        )
    if team.group is not None:
        yield from _role_is_queued(cfg, i)
    if team.network_policy and cfg.cluster.standard and not cfg.cluster.dataplane_v2:
        # GKE enforces NetworkPolicy only with Dataplane V2 or the Calico add-on
        # (https://cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2), which this
        # program does not offer: the object would be accepted and do nothing.
        yield RuleError(
            ("teams", i, "networkPolicy"),
            "a NetworkPolicy is enforced only with Dataplane V2, and cluster.dataplaneV2 is false: "
            "it would isolate nothing; set cluster.dataplaneV2 true or networkPolicy false",
        )


def _role_is_queued(cfg, i: int) -> Iterator[RuleError]:
    """The team Role creates Jobs and JobSets (gke_ai_batch/plan/rbac.py) on the promise that
    Kueue holds every one of them: with manageJobsWithoutQueueName false, or a kind whose
    integration is off, a Job without a queue name runs at once, outside every quota
    (Kueue docs: manage-jobs-without-queue-name; Configuration integrations.frameworks)."""
    k = cfg.kueue
    if not cfg.manages_unqueued_jobs:
        why = "is false" if k.manage_jobs_without_queue_name is False else "is unset, which on an existing cluster means false"
        yield RuleError(
            ("teams", i, "group"),
            f"the team's Role may create Jobs and JobSets, and kueue.manageJobsWithoutQueueName {why}: a Job "
            "without a queue name would run outside every quota; set it true",
        )
    missing = [fw for fw in TEAM_ROLE_FRAMEWORKS if fw not in k.integrations]
    if missing:
        yield RuleError(
            ("teams", i, "group"),
            f"the team's Role may create Jobs and JobSets, and kueue.integrations lacks {', '.join(missing)}: "
            "Kueue would not hold those, so they would run outside every quota; add them",
        )


def local_queue_problems(teams: list[TeamConfig]) -> Iterator[RuleError]:
    """A LocalQueue is one object per namespace and name."""
    seen: set[tuple[str, str]] = set()
    for i, team in valid(teams):
        key = (team.namespace, team.local_queue)
        if key in seen:
            yield RuleError(
                ("teams", i, "localQueue"),
                f"namespace {team.namespace!r} already has a local queue {team.local_queue!r}",
            )
        seen.add(key)


def namespace_settings_problems(teams: list[TeamConfig], entry: Callable[[int], str] = lambda i: f"teams[{i}].") -> Iterator[RuleError]:
    """A namespace has one Pod Security level, one NetworkPolicy and one value per label:
    teams that share it must say the same, and its labels leave the pod-security.kubernetes.io/
    keys to podSecurity (the labels are merged into one Namespace, so either would silently
    win; Kubernetes labels are a map, one value per key,
    https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/). `entry` names
    where an entry's own keys are: a stack's teams[i], a Team component's args (one namespace)."""
    first: dict[str, int] = {}
    # namespace -> label key -> (the first team that sets it, its value)
    labelled: dict[str, dict[str, tuple[int, str]]] = {}
    for i, team in valid(teams):
        for key, value in team.labels.items():
            if key.startswith(POD_SECURITY_LABEL_PREFIX):
                yield RuleError(
                    ("teams", i, "labels", key),
                    f"{key} is set from {entry(i)}podSecurity (restricted, baseline or privileged); "
                    "remove the label",
                )
                continue
            j, other = labelled.setdefault(team.namespace, {}).setdefault(key, (i, value))
            if other != value:
                yield RuleError(
                    ("teams", i, "labels", key),
                    f"namespace {team.namespace!r} gets label {key}={other!r} from teams[{j}] (local queue "
                    f"{teams[j].local_queue!r}) and {key}={value!r} here (local queue "
                    f"{team.local_queue!r}); the teams share one Namespace, which has one value per label: "
                    "set the same value on both, or the label on one team only",
                )
        j = first.setdefault(team.namespace, i)
        if j == i:
            continue
        other = teams[j]
        for attr, key in (("pod_security", "podSecurity"), ("network_policy", "networkPolicy")):
            if getattr(team, attr) != getattr(other, attr):
                yield RuleError(
                    ("teams", i, key),
                    f"namespace {team.namespace!r} has {key} {_show(getattr(other, attr))} from teams[{j}], "
                    f"and {_show(getattr(team, attr))} here; teams sharing a namespace share its "
                    f"{key}: set the same on both",
                )


def team_namespace_problems(i: int, team: TeamConfig, standard: bool = True) -> Iterator[RuleError]:
    """One message per namespace: kube-system is reserved and built in, but the fix is one."""
    reserved = next((p for p in RESERVED_NAMESPACE_PREFIXES if team.namespace.startswith(p)), None)
    if reserved is not None:
        owner = RESERVED_NAMESPACE_PREFIXES[reserved]
        managed = (
            "; on Autopilot GKE also denies writes in its managed namespaces"
            if not standard
            else ""
        )
        yield RuleError(
            ("teams", i, "namespace"),
            f"{team.namespace!r}: namespaces starting with {reserved!r} belong to {owner}{managed}; "
            "give the team its own namespace",
        )
    elif team.namespace in INSTALL_NAMESPACES:
        yield RuleError(
            ("teams", i, "namespace"),
            f"{team.namespace!r} belongs to the {team.namespace.split('-')[0]} install; give the team its own",
        )
    elif team.labels and team.namespace in naming.BUILTIN_NAMESPACES:
        yield RuleError(
            ("teams", i, "labels"),
            f"namespace {team.namespace!r} exists in every cluster and is not managed here (the program "
            "patches only its Pod Security labels)",
        )


def _show(value) -> str:
    return str(value).lower() if isinstance(value, bool) else value
