"""JobSet and Kueue, installed from their official OCI charts at pinned versions, as components
any Pulumi program can use: JobSetInstall and KueueInstall, each X(name, args: XArgs, opts).

Args mirror the stack's gke-ai-batch:jobset and gke-ai-batch:kueue keys in snake_case and are
checked on construction by the keys' own config models (by field name) and the stack's rules
that read only them (config/checks/kueue.py), every problem at once, at its arg path. The
Kubernetes provider, protect and the parent come from `opts` through Pulumi's inheritance (a child's providers default to its parent's:
pulumi/resource.py, Resource.__init__, "Infer providers ... from parent"), so nothing here
takes a provider.

`helm.v3.Release`, not `helm.v4.Chart`: on the first `pulumi up` of a new environment the
cluster does not exist yet and the kubeconfig is unknown. Release renders its chart client-side
during preview and needs no cluster (pulumi-kubernetes PR #1886, v3.15.0); Chart v4 is expanded
by the provider, which fails preview with "failed to parse kubeconfig data"
(pulumi-kubernetes issue #3027). The Helm release names are fixed (`jobset`, `kueue`): an
auto-named release would rename Kueue's webhook service and certificates.

No `from __future__ import annotations`: Pulumi's component analyzer
(pulumi.provider.experimental.analyzer) reads these annotations as objects."""

from typing import Any, NotRequired, TypedDict, cast

import pulumi
import pulumi_kubernetes as k8s

from gke_ai_batch.components.component import Component
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.args import accepted, aliased, declared_args, depends_on_of, rule_problems, type_token, validated
from gke_ai_batch.config.batch import FairSharing, JobSetConfig, KueueConfig, WaitForPodsReady
from gke_ai_batch.config.checks.kueue import kueue_release_problems
from gke_ai_batch.config.fleet import MultiKueueSettings
from gke_ai_batch.domain.naming import child_name
from gke_ai_batch.plan.installs import kueue_install_values, webhook_probe
from gke_ai_batch.plan.kueue import JOBSET_CHART, JOBSET_NAMESPACE, KUEUE_CHART, KUEUE_NAMESPACE

RELEASE_TIMEOUT_SECONDS = 600

# The tokens these registered before they were components of the package: aliases, so that
# `pulumi up` of a deployed stack neither replaces nor re-parents a release (nodepools.OLD_TYPE).
JOBSET_OLD_TYPE = "gke-ai-batch:batch:JobSet"
KUEUE_OLD_TYPE = "gke-ai-batch:batch:Kueue"


def _release(
    logical_name: str, name: str, chart: str, version: str, namespace: str, values: dict, opts: pulumi.ResourceOptions
) -> "k8s.helm.v3.Release":
    # Quoted: evaluated at import, the annotation would load the Helm SDK module (and its YAML
    # machinery) for stacks and programs that install nothing with Helm.
    return k8s.helm.v3.Release(
        logical_name,
        name=name,
        chart=chart,
        version=version,
        namespace=namespace,
        create_namespace=True,
        values=values,
        # Helm --wait: the release is done when its Deployments are available.
        skip_await=False,
        timeout=RELEASE_TIMEOUT_SECONDS,
        cleanup_on_fail=True,
        opts=opts,
    )


class JobSetInstallArgs(TypedDict):
    version: NotRequired[str]
    """Chart version of oci://registry.k8s.io/jobset/charts/jobset, an exact release (default:
    the one this project pins, gke_ai_batch/domain/versions.py)."""


class JobSetInstall(Component):
    """JobSet's controller and CRDs, from its chart, in jobset-system."""

    version: pulumi.Output[str]
    """The installed chart version."""
    namespace: pulumi.Output[str]
    """The namespace JobSet runs in."""

    def __init__(self, name: str, args: JobSetInstallArgs, opts: pulumi.ResourceOptions | None = None):
        # Checked before anything registers: bad args leave no half-made component behind.
        component = type(self).__name__
        kept, problems = declared_args(component, name, args, JobSetInstallArgs)
        config, found = validated(JobSetConfig, kept)
        config = accepted(component, name, config, problems + found)
        super().__init__(type_token(type(self)), name, None, aliased(opts, JOBSET_OLD_TYPE))
        self.config: JobSetConfig = config
        self.release = _release(
            child_name(name, "jobset", "jobset"),
            "jobset",
            JOBSET_CHART,
            self.config.version,
            JOBSET_NAMESPACE,
            {},
            pulumi.ResourceOptions(parent=self, depends_on=depends_on_of(opts)),
        )
        # The release is given its chart version, so the SDK's Optional never holds None here.
        self.version = cast(pulumi.Output[str], self.release.version)
        self.namespace = pulumi.Output.from_input(JOBSET_NAMESPACE)
        self.register_outputs({"version": self.version, "namespace": self.namespace})


class WaitForPodsReadyArgs(TypedDict):
    timeout: NotRequired[str]
    """How long an admitted workload may take to get all its pods ready before Kueue evicts it
    (default 30m)."""
    block_admission: NotRequired[bool]
    recovery_timeout: NotRequired[str]


class FairSharingArgs(TypedDict):
    preemption_strategies: NotRequired[list[str]]
    """LessThanOrEqualToFinalShare and/or LessThanInitialShare (default: both, in that order)."""


class MultiKueueArgs(TypedDict):
    """A MultiKueue manager's settings, as the stack's fleet.multiKueue spells them."""

    dispatcher: NotRequired[str]
    """AllAtOnce (default) or Incremental."""
    incremental_step_size: NotRequired[int]
    """Workers the Incremental dispatcher adds per round (Kueue's default 3)."""
    gc_interval: NotRequired[str]
    """How often the manager deletes worker copies whose workload is gone, e.g. '1m'."""
    origin: NotRequired[str]
    """Label value marking the objects this manager creates on workers."""
    worker_lost_timeout: NotRequired[str]
    """How long a workload admitted on a worker that stops answering stays admitted, e.g. '15m'."""


class KueueInstallArgs(TypedDict):
    """Kueue's install: the stack's gke-ai-batch:kueue key in snake_case, less the names of the
    ProvisioningRequest admission check (they name queue objects, not the install)."""

    version: NotRequired[str]
    """Chart version of oci://registry.k8s.io/kueue/charts/kueue, an exact release, 0.15.0 or
    later (default: the one this project pins, gke_ai_batch/domain/versions.py)."""
    integrations: NotRequired[list[str]]
    """Kueue's integration frameworks (default: batch/job and jobset.x-k8s.io/jobset); every
    listed one gets Kueue's fail-closed webhook."""
    # Typed Any: each is a mapping or a boolean, and the component analyzer takes no unions.
    fair_sharing: NotRequired[Any]
    """Fair sharing between the cluster queues of a cohort: true, or a mapping with
    preemption_strategies (FairSharingArgs)."""
    wait_for_pods_ready: NotRequired[Any]
    """A mapping with timeout, block_admission and recovery_timeout (WaitForPodsReadyArgs;
    default: on, 30m), or false to turn it off."""
    manage_jobs_without_queue_name: NotRequired[bool]
    """Kueue also manages Jobs and JobSets that name no queue (default false, Kueue's own: on a
    cluster other teams share, true would suspend their Jobs that name no queue; set it true on a
    cluster you own, so that no Job can leave out its queue and run outside every quota)."""
    resource_metrics: NotRequired[bool]
    """Kueue exports each cluster queue's quota and usage per flavor and resource (default false)."""
    webhook_gate: NotRequired[bool]
    """Wait, after install, until Kueue's webhooks answer a server-side dry run (default true)."""
    probe_image: NotRequired[str]
    """The webhook probe's kubectl image, pinned by tag or digest."""
    multi_kueue: NotRequired[MultiKueueArgs]
    """A MultiKueue manager's settings, written into its Configuration."""


class KueueInstall(Component):
    """Kueue with its manager configuration from the args, then (by default) a probe that holds
    back every Kueue object and workload until Kueue's webhooks answer.

    `depends_on=[kueue]` waits for all of it, the probe included: depending on a component
    depends on every resource under it (pulumi/runtime/rpc.py, _add_dependency: "Local component
    resources act as aggregations of their descendents"; pulumi/pulumi#7732). `ready` lists the
    fewest resources that do the same (the release and the probe Pod, the last of the probe's
    chain), which the stack program's Kueue objects depend on."""

    version: pulumi.Output[str]
    """The installed chart version."""
    namespace: pulumi.Output[str]
    """The namespace Kueue runs in."""

    def __init__(self, name: str, args: KueueInstallArgs, opts: pulumi.ResourceOptions | None = None):
        config, multi_kueue = _kueue_install(type(self).__name__, name, args)
        super().__init__(type_token(type(self)), name, None, aliased(opts, KUEUE_OLD_TYPE))
        self.config: KueueConfig = config
        self.multi_kueue: MultiKueueSettings | None = multi_kueue
        waits = depends_on_of(opts)
        self.release = _release(
            child_name(name, "kueue", "kueue"),
            "kueue",
            KUEUE_CHART,
            self.config.version,
            KUEUE_NAMESPACE,
            kueue_install_values(self.config, self.multi_kueue),
            pulumi.ResourceOptions(parent=self, depends_on=waits),
        )
        self.ready: list[pulumi.Resource] = [self.release]
        # The probe Pod also waits for what the component depends on: its image may be on a
        # registry the nodes may read only once a grant exists.
        previous: list[pulumi.Resource] = [self.release, *waits]
        probe = webhook_probe(self.config)
        for manifest in probe:
            previous = [
                k8s_objects.apply(
                    manifest,
                    pulumi.ResourceOptions(parent=self, depends_on=previous),
                    name=child_name(name, "kueue", k8s_objects.resource_name(manifest)),
                )
            ]
        if probe:
            self.ready = [self.release, *previous]
        self.version = cast(pulumi.Output[str], self.release.version)
        self.namespace = pulumi.Output.from_input(KUEUE_NAMESPACE)
        self.register_outputs({"version": self.version, "namespace": self.namespace})


# The args typed Any, by the config model of their mapping form (args.declared_args).
_LOOSE = {"wait_for_pods_ready": (WaitForPodsReadyArgs, WaitForPodsReady), "fair_sharing": (FairSharingArgs, FairSharing)}


def _kueue_install(component: str, name: str, args: Any) -> tuple[KueueConfig, MultiKueueSettings | None]:
    """The args as the stack's kueue key and a fleet manager's multiKueue, each validated by its
    own model, then judged by the stack's rule that reads only them; ArgsError with every problem."""
    kept, problems = declared_args(component, name, args, KueueInstallArgs, _LOOSE)
    given = kept.pop("multi_kueue", None)
    config, found = validated(KueueConfig, kept)
    multi_kueue, wrong = validated(MultiKueueSettings, given, ("multi_kueue",)) if given is not None else (None, [])
    problems += found + wrong
    if config is not None and not wrong:
        problems += rule_problems(
            kueue_release_problems(config, multi_kueue, ("multiKueue",)),
            {"kueue": ((), KueueConfig), "multiKueue": (("multi_kueue",), MultiKueueSettings)},
        )
    return accepted(component, name, config, problems), multi_kueue


def stack_kueue_args(kueue: KueueConfig, multi_kueue: MultiKueueSettings | None = None) -> dict[str, Any]:
    """KueueInstall's args for a stack's kueue key (and a fleet manager's multiKueue): the keys
    as set in the stack file, in snake_case (gke_ai_batch/components/platform.py)."""
    args = kueue.model_dump(exclude_unset=True, exclude={"provisioning_admission_check", "provisioning_request_config"})
    if multi_kueue is not None:
        args["multi_kueue"] = multi_kueue.model_dump(exclude_unset=True)
    return args


def stack_jobset_args(jobset: JobSetConfig) -> dict[str, Any]:
    return jobset.model_dump(exclude_unset=True)
