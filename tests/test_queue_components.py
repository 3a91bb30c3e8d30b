"""Kueue's objects from any Pulumi program: ResourceFlavor, ProvisioningCheck, ClusterQueue and
Team with typed args, flavors as data (a pool component's `flavor`), checked by the stack's
rules; and the stack program's URNs, which reach every object's old one through aliases."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

REF = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}

# The issue's example, line for line, plus the flavor's own component. KueueInstall is a stand-in
# (the typed KueueInstall is another branch's): a component the queue waits for.
EXAMPLE = """
import pulumi
import pulumi_kubernetes as k8s

from gke_ai_batch.components.nodepools import TpuSlices
from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor


class KueueInstall(pulumi.ComponentResource):
    def __init__(self, name, args, opts=None):
        super().__init__("test:index:KueueInstall", name, None, opts)
        self.release = k8s.helm.v3.Release(name, chart="kueue", version=args["version"], opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({})


k8s_provider = k8s.Provider("k8s")
ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
tpu = TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "4x4", "slices": 2, "capacity": "spot"})
kueue = KueueInstall("kueue", {"version": "0.19.2"}, opts=pulumi.ResourceOptions(provider=k8s_provider))
flavor = ResourceFlavor("v6e", tpu.flavor, opts=pulumi.ResourceOptions(provider=k8s_provider, depends_on=[kueue]))
cq = ClusterQueue("tpu", {"flavors": [tpu.flavor], "cohort": "ml"}, opts=pulumi.ResourceOptions(provider=k8s_provider, depends_on=[kueue]))
pulumi.export("queue", cq.queue_name)
"""


def _run(tmp_path: Path, source: str):
    from gke_ai_batch.synth import engine

    program = tmp_path / "__main__.py"
    program.write_text(textwrap.dedent(source))
    return engine.run(program, project="lib", stack="test", config={}, outputs_for=lambda t, n, i: {})


def _kueue_objects(recording, kind: str) -> dict:
    return {r.name: r for r in recording.resources if r.type == f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}"}


def test_the_issues_example_registers_a_queue_over_the_slices_flavor(tmp_path):
    recording = _run(tmp_path, EXAMPLE)
    [flavor] = _kueue_objects(recording, "ResourceFlavor").values()
    [queue] = _kueue_objects(recording, "ClusterQueue").values()
    # Named from the component: "<name>-<object>", or the object's own name where they agree.
    assert flavor.name == "v6e-tpu-v6e-slice-4x4-spot" and queue.name == "tpu"
    assert flavor.inputs["metadata"]["name"] == "tpu-v6e-slice-4x4-spot"
    assert flavor.inputs["spec"]["nodeLabels"]["cloud.google.com/gke-tpu-topology"] == "4x4"
    spec = queue.inputs["spec"]
    assert queue.inputs["metadata"]["name"] == "tpu" and spec["cohortName"] == "ml"
    [group] = spec["resourceGroups"]
    [entry] = group["flavors"]
    # The default quota is the slices' whole capacity: 2 slices of 16 chips, as the stack plans it.
    assert entry["name"] == "tpu-v6e-slice-4x4-spot"
    assert entry["resources"][0] == {"name": "google.com/tpu", "nominalQuota": 32}
    assert [r["name"] for r in entry["resources"]] == ["google.com/tpu", "cpu", "memory"]
    # No namespace selector given: Kueue's default, none.
    assert "namespaceSelector" not in spec
    # Both wait for the Kueue install, and reach the cluster through the program's provider.
    release = next(r for r in recording.resources if r.type == "kubernetes:helm.sh/v3:Release")
    for obj in (flavor, queue):
        assert release.urn in obj.dependencies, obj.name
        assert "k8s" in obj.options.get("provider", ""), obj.name
    assert recording.outputs["queue"] == "tpu"


TWICE = """
import pulumi

from gke_ai_batch.components.nodepools import GpuPool, TpuSlices
from gke_ai_batch.components.queues import ClusterQueue, ProvisioningCheck, ResourceFlavor, Team

ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
tpu = TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "4x4", "slices": 2})
dws = GpuPool("h100", {"cluster": ref, "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "max_nodes": 2,
                       "capacity": "queued", "zones": ["us-east5-a"]})
made = {}
for n in ("a", "b"):
    flavors = [ResourceFlavor(f"{n}-tpu", tpu.flavor), ResourceFlavor(f"{n}-dws", dws.flavor)]
    check = ProvisioningCheck(f"{n}-check", {"flavors": [dws.flavor]})
    queue = ClusterQueue(f"{n}-queue", {
        "queue_name": "research",
        "flavors": [{**tpu.flavor, "quotas": {"google.com/tpu": {"nominal": 16, "lending_limit": 8}}}, dws.flavor],
        "cohort": "ml",
        "namespace_selector": {"match_labels": {"team": "research"}},
        "provisioning_check": "dws-prov",
        "preemption": {"reclaim_within_cohort": "Any", "borrow_within_cohort": {"policy": "LowerPriority"}},
    }, pulumi.ResourceOptions(depends_on=[*flavors, check]))
    team = Team(f"{n}-team", {"namespace": "research", "local_queues": [{"name": "main", "cluster_queue": "research"}],
                              "groups": ["research@acme.com"], "pod_security": "restricted", "labels": {"team": "research"}},
                pulumi.ResourceOptions(depends_on=[queue]))
    pulumi.export(f"{n}-local", team.local_queues)
"""


def test_every_queue_component_twice_side_by_side(tmp_path):
    recording = _run(tmp_path, TWICE)
    urns = [r.urn for r in recording.resources]
    assert len(urns) == len(set(urns))
    mine = [r for r in recording.resources if r.type.startswith("gke-ai-batch:index:") and "Pool" not in r.type]
    assert sorted(r.name for r in mine if r.type.endswith((":ResourceFlavor", ":ClusterQueue", ":Team", ":ProvisioningCheck"))) == [
        "a-check", "a-dws", "a-queue", "a-team", "a-tpu", "b-check", "b-dws", "b-queue", "b-team", "b-tpu",
    ]
    queues = _kueue_objects(recording, "ClusterQueue")
    assert sorted(queues) == ["a-queue-research", "b-queue-research"]
    spec = queues["a-queue-research"].inputs["spec"]
    assert spec["namespaceSelector"] == {"matchLabels": {"team": "research"}}
    assert spec["preemption"] == {"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"}}
    assert spec["admissionChecksStrategy"] == {"admissionChecks": [{"name": "dws-prov", "onFlavors": ["nvidia-h100-80gb-queued"]}]}
    # The TPU flavor's given quota; cpu and memory follow the queue's half of the chips.
    tpu = next(f for g in spec["resourceGroups"] for f in g["flavors"] if f["name"].startswith("tpu-"))
    assert tpu["resources"][0] == {"name": "google.com/tpu", "nominalQuota": 16, "lendingLimit": 8}
    checks = _kueue_objects(recording, "ProvisioningRequestConfig")
    assert sorted(checks) == ["a-check-dws-config", "b-check-dws-config"]
    assert checks["a-check-dws-config"].inputs["spec"]["managedResources"] == ["nvidia.com/gpu"]
    # The queue waits for its flavors and its check, through its opts.
    flavor_urns = {r.urn for r in _kueue_objects(recording, "ResourceFlavor").values() if r.name.startswith("a-")}
    assert flavor_urns and flavor_urns <= set(queues["a-queue-research"].dependencies)
    namespaces = {r.name: r for r in recording.resources if r.type == "kubernetes:core/v1:Namespace"}
    assert sorted(namespaces) == ["a-team-research", "b-team-research"]
    labels = namespaces["a-team-research"].inputs["metadata"]["labels"]
    assert labels["team"] == "research" and labels["pod-security.kubernetes.io/enforce"] == "restricted"
    assert labels["pod-security.kubernetes.io/enforce-version"] == "latest"
    binding = next(r for r in recording.resources if r.type.endswith(":RoleBinding") and r.name.startswith("a-"))
    assert binding.inputs["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "research@acme.com"}]
    local = next(r for r in recording.resources if r.type.endswith(":LocalQueue") and r.name.startswith("a-"))
    assert local.inputs["spec"] == {"clusterQueue": "research"}
    assert queues["a-queue-research"].urn in local.dependencies
    assert recording.outputs["a-local"] == ["main"]


def _refused(component, args) -> list[str]:
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        component("q", args)
    return str(caught.value).splitlines()


TPU_FLAVOR = {
    "name": "tpu-v6e-slice-4x4",
    "node_labels": {"cloud.google.com/gke-tpu-topology": "4x4"},
    "capacity": {"google.com/tpu": 32},
}
CPU_FLAVOR = {"name": "cpu", "node_labels": {"pool": "cpu"}, "capacity": {"cpu": 64000}}


def test_a_cluster_queues_every_bad_arg_is_named_at_its_arg_path():
    from gke_ai_batch.components.queues import ClusterQueue

    lines = _refused(ClusterQueue, {
        "flavors": [
            {**TPU_FLAVOR, "quotas": {"google.com/tpu": {"nominal": 8, "lending_limit": 16}}},
            {**CPU_FLAVOR, "node_labels": {"bad key!": "x"}},
            {**TPU_FLAVOR, "name": "dws", "queued": True},
        ],
        "queueing_strategy": "Fifo",
        "cohort_name": "ml",
    })
    assert lines[0].startswith("ClusterQueue q: args.cohort_name: unknown arg (did you mean 'cohort'?)"), lines
    assert lines[1].startswith('ClusterQueue q: args.flavors[1].node_labels["bad key!"]: label key'), lines
    assert len(lines) == 2, lines
    # Once the flavors are sound, the queue's own rules, each at its arg, all at once (the entry's
    # cross-key rules wait for its values, as in a stack).
    lines = _refused(ClusterQueue, {
        "flavors": [
            {**TPU_FLAVOR, "quotas": {"google.com/tpu": {"nominal": 8, "lending_limit": 16}}},
            CPU_FLAVOR,
            {**TPU_FLAVOR, "name": "dws", "queued": True},
        ],
        "queueing_strategy": "Fifo",
    })
    assert lines == [
        "ClusterQueue q: args.queueing_strategy: Input should be 'BestEffortFIFO' or 'StrictFIFO', got 'Fifo'",
        "ClusterQueue q: args.provisioning_check: flavor 'dws' is queued (DWS): its nodes come only through a "
        "ProvisioningRequest; name the admission check of a ProvisioningCheck",
    ], lines


def test_a_queues_stack_rules_apply_with_its_flavors_as_data():
    from gke_ai_batch.components.queues import ClusterQueue

    lines = _refused(ClusterQueue, {
        "flavors": [{**TPU_FLAVOR, "quotas": {"google.com/tpu": {"nominal": 8, "lending_limit": 16}}}, CPU_FLAVOR],
        "cohort": "ml",
    })
    assert lines == [
        'ClusterQueue q: args.flavors[0].quotas["google.com/tpu"].lending_limit: lendingLimit 16 exceeds nominal 8 '
        "(Kueue rejects it)",
        "ClusterQueue q: args.flavors[1].quotas: flavor 'cpu' has no TPU or GPU pools to derive a quota from; give its quotas",
    ]


def test_a_teams_and_a_flavors_bad_args_are_named_at_their_arg_paths():
    from gke_ai_batch.components.queues import ProvisioningCheck, ResourceFlavor, Team

    bad = {
        "namespace": "kube-research",
        "local_queues": [{"name": "main", "cluster_queue": "research"}, {"name": "main", "cluster_queue": "research"}],
        "groups": ["not-an-email"],
        "labels": {"pod-security.kubernetes.io/enforce": "privileged"},
        "pod_security_version": "1.34",
    }
    lines = _refused(Team, bad)
    assert lines[0].startswith("Team q: args.groups[0]: "), lines
    assert lines[1:] == [
        "Team q: args.local_queues[1].name: namespace 'kube-research' already has a local queue 'main'",
        "Team q: args.namespace: 'kube-research': namespaces starting with 'kube-' belong to Kubernetes; give the "
        "team its own namespace",
        'Team q: args.labels["pod-security.kubernetes.io/enforce"]: pod-security.kubernetes.io/enforce is set '
        "from podSecurity (restricted, baseline or privileged); remove the label",
        "Team q: args.pod_security_version: '1.34' is not 'latest' or a Kubernetes minor such as 'v1.34'",
    ], lines
    # A value a rule needs is refused first, as in a stack: its entry's cross-key rules wait.
    second = {"name": "main", "cluster_queue": "Research"}
    lines = _refused(Team, {**bad, "local_queues": [bad["local_queues"][0], second]})
    assert lines[0].startswith("Team q: args.local_queues[1].cluster_queue: 'Research' is not a valid"), lines

    labels = {f"example.com/l{i}": "x" for i in range(9)}
    lines = _refused(ResourceFlavor, {"name": "f", "node_labels": labels, "tolerations": [{"operator": "Exists", "value": "v"}]})
    assert lines[0] == "ResourceFlavor q: args.tolerations[0].value: operator Exists takes no value", lines
    lines = _refused(ResourceFlavor, {"name": "f", "node_labels": labels, "capacity": {"cpu": -1}})
    assert lines[0].startswith("ResourceFlavor q: args.node_labels: flavor 'f' would select on 9 node labels"), lines
    assert lines[1] == "ResourceFlavor q: args.capacity: must map resource names to whole amounts of 0 or more"
    assert _refused(ProvisioningCheck, {"admission_check": "DWS"})[0].startswith(
        "ProvisioningCheck q: args.admission_check: 'DWS' is not a valid"
    )


def test_a_key_spelt_as_the_stack_file_spells_it_is_refused_where_it_is_written():
    """Args are the entry's field names at every level (its model validates them by name): a
    camelCase key is unknown at its own arg path, which names it as written and offers the
    field; label keys and resource names are the caller's, as written."""
    from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor, Team

    lines = _refused(ClusterQueue, {
        "flavors": [{**TPU_FLAVOR, "quotas": {"google.com/tpu": {"nominal": 8, "lendingLimit": 4}}}],
        "cohort": "ml",
        "namespace_selector": {"match_labels": {"teamName": "research"}},
        "preemption": {"reclaimWithinCohort": "Any"},
    })
    assert sorted(lines) == [
        'ClusterQueue q: args.flavors[0].quotas["google.com/tpu"].lendingLimit: unknown key \'lendingLimit\' '
        "(did you mean 'lending_limit'?); allowed: nominal, borrowing_limit, lending_limit",
        "ClusterQueue q: args.preemption.reclaimWithinCohort: unknown key 'reclaimWithinCohort' (did you mean "
        "'reclaim_within_cohort'?); allowed: reclaim_within_cohort, within_cluster_queue, borrow_within_cohort",
    ], lines
    assert _refused(ResourceFlavor, {**TPU_FLAVOR, "tolerations": [{"key": "a", "tolerationSeconds": 3}]}) == [
        "ResourceFlavor q: args.tolerations[0].tolerationSeconds: unknown key 'tolerationSeconds'; allowed: key, "
        "operator, value, effect",
    ]
    lines = _refused(Team, {"namespace": "research", "localQueues": [{"name": "main", "cluster_queue": "q"}]})
    assert lines[0].startswith("Team q: args.localQueues: unknown arg (did you mean 'local_queues'?)"), lines


def test_a_stack_entry_and_a_queue_component_say_the_same_refusal():
    """A flavors, clusterQueues or teams entry of a stack and the component that takes it are
    judged by the same model and rules: the same message, at the stack's key path and at the
    arg path."""
    from pydantic import ValidationError

    from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor, Team
    from gke_ai_batch.config.errors import ArgsError, located_problems
    from gke_ai_batch.config.stack import StackConfig

    labels = {f"example.com/l{i}": "x" for i in range(9)}
    quotas = {"cpu": {"nominal": 8, "lendingLimit": 16}}
    team = {"namespace": "kube-research", "localQueue": "main", "clusterQueue": "q"}
    with pytest.raises(ValidationError) as stack:
        StackConfig.model_validate({
            "cluster": {"name": "ml", "location": "us-east5", "nodeLocations": ["us-east5-b"]},
            "flavors": [{"name": "cpu", "nodeLabels": labels}],
            "clusterQueues": [{"name": "q", "cohort": "ml", "flavors": [{"name": "cpu", "quotas": quotas}]}],
            "teams": [team, team],
        })
    in_stack = dict(located_problems(stack.value, StackConfig))

    def said(component, args) -> dict[str, str]:
        with pytest.raises(ArgsError) as caught:
            component("q", args)
        return dict(caught.value.problems)

    flavor = said(ResourceFlavor, {"name": "cpu", "node_labels": labels})
    assert flavor["args.node_labels"] == in_stack[("flavors", 0, "nodeLabels")]
    queue = said(ClusterQueue, {"flavors": [{"name": "cpu", "quotas": {"cpu": {"nominal": 8, "lending_limit": 16}}}], "cohort": "ml"})
    assert queue['args.flavors[0].quotas.cpu.lending_limit'] == in_stack[("clusterQueues", 0, "flavors", 0, "quotas", "cpu", "lendingLimit")]
    teams = said(Team, {"namespace": "kube-research", "local_queues": [{"name": "main", "cluster_queue": "q"}] * 2})
    assert teams["args.namespace"] == in_stack[("teams", 0, "namespace")]
    assert teams["args.local_queues[1].name"] == in_stack[("teams", 1, "localQueue")]
    assert len(flavor) == len(queue) == 1 and len(teams) == 2, (flavor, queue, teams)


def test_refused_args_register_nothing(tmp_path):
    recording = _run(tmp_path, """
import pulumi
from gke_ai_batch.components.queues import ClusterQueue, Team
from gke_ai_batch.config.errors import ArgsError

for make, args in ((ClusterQueue, {"flavors": [{"name": "Bad"}]}), (Team, {"namespace": "x", "local_queues": []})):
    try:
        make("q", args)
    except ArgsError as e:
        pulumi.export(make.__name__, str(e))
""")
    assert recording.outputs["ClusterQueue"].startswith("ClusterQueue q: args.flavors[0].name: ")
    assert recording.outputs["Team"] == "Team q: args.local_queues: required: at least one {name, cluster_queue}"
    assert [r.type for r in recording.resources] == ["pulumi:pulumi:Stack"]


# -- the stack program's URNs -------------------------------------------------------------------


def _type_chain(urn: str) -> str:
    """The qualified type of a URN (its parents' types, then its own, joined by $)."""
    return urn.split("::")[2]


def _old_urns(resources: list[dict]) -> set[str]:
    """Every URN the engine maps to a resource of this render: its own, its aliases' (a spec
    defaults to the resource's own name, type and parent), and those its parents' aliases give
    it (the engine derives a child's aliases from its parent's)."""
    by_urn = {r["urn"]: r for r in resources}
    memo: dict[str, set[str]] = {}

    def of(urn: str) -> set[str]:
        if urn in memo:
            return memo[urn]
        r = by_urn[urn]
        head = urn.split("::")[0] + "::" + urn.split("::")[1]
        parent = r.get("parent")
        parents = of(parent) if parent in by_urn and by_urn[parent]["type"] != "pulumi:pulumi:Stack" else {None}
        found = set()
        for p in parents:  # the resource under each name its parent ever had
            prefix = f"{_type_chain(p)}$" if p else ""
            found.add(f"{head}::{prefix}{r['type']}::{r['name']}")
        for alias in r.get("options", {}).get("aliases", []):
            if isinstance(alias, str):
                found.add(alias)
                continue
            p = None if alias.get("noParent") else alias.get("parentUrn", parent)
            prefix = f"{_type_chain(p)}$" if p and by_urn.get(p, {}).get("type") != "pulumi:pulumi:Stack" else ""
            found.add(f"{head}::{prefix}{alias.get('type', r['type'])}::{alias.get('name', r['name'])}")
        memo[urn] = found
        return found

    return {u for urn in by_urn for u in of(urn)}


@pytest.mark.parametrize("stack", ["dev", "fleet-dws"])
def test_every_urn_a_stack_had_before_the_queue_components_is_reached_by_an_alias(stack):
    """`pulumi up` of a stack deployed before the components had their own types is a no-op:
    each URN of its old state is a resource's URN or alias now (tests/fixtures: the URN lists
    as they were)."""
    from conftest import synth_stack

    before = (ROOT / "tests" / "fixtures" / "urns-before-queue-components" / f"{stack}.txt").read_text().split()
    resources = [r.to_json() for r in synth_stack(stack).recording.resources]
    reached = _old_urns(resources)
    # But the node role grant, which the bootstrap now makes for the account it creates: a
    # deployed stack forgets it with `pulumi state delete` (docs/bootstrap.md) rather than delete it.
    moved = [u for u in before if u.endswith("$gcp:projects/iAMMember:IAMMember::nodes-role")] if stack == "dev" else []
    assert [u for u in before if u not in reached] == moved and len(moved) == (stack == "dev")
    assert len(before) < len(resources)  # the new components are new URNs; none was lost


def test_the_package_builds_the_queue_components_from_camel_case_inputs(tmp_path):
    """What a TypeScript, Go or YAML program sends (camelCase, numbers as doubles) goes through
    the package's own input mapping to the same objects."""
    recording = _run(tmp_path, """
from pulumi.provider.experimental.component import ComponentProvider
from gke_ai_batch.components.package import COMPONENTS, NAME

provider = ComponentProvider(COMPONENTS, NAME)
flavor = {"name": "tpu", "nodeLabels": {"cloud.google.com/gke-tpu-topology": "4x4"}, "capacity": {"google.com/tpu": 32.0}}
inputs = {
    "ResourceFlavor": flavor,
    "ProvisioningCheck": {"admissionCheck": "dws"},
    "ClusterQueue": {"queueName": "research", "cohort": "ml", "flavors": [{**flavor, "quotas": {"google.com/tpu": 16.0}}],
                     "namespaceSelector": {"matchLabels": {"team": "research"}}},
    "Team": {"namespace": "research", "localQueues": [{"name": "main", "clusterQueue": "research"}], "networkPolicy": False},
}
for component, props in inputs.items():
    args = provider.map_inputs(props, provider._component_defs[component])
    provider._components[component]("pkg", args)
""")
    queue = _kueue_objects(recording, "ClusterQueue")["pkg-research"]
    assert queue.inputs["spec"]["namespaceSelector"] == {"matchLabels": {"team": "research"}}
    assert queue.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"] == [{"name": "google.com/tpu", "nominalQuota": 16}]
    assert sorted(_kueue_objects(recording, "AdmissionCheck")) == ["pkg-dws"]
    assert sorted(_kueue_objects(recording, "LocalQueue")) == ["pkg-research/main"]
    assert not any(r.type.endswith(":NetworkPolicy") for r in recording.resources)


def test_the_library_pages_kueue_example_runs(tmp_path):
    """docs/library.md's Kueue example, as written, under the recording engine."""
    page = (ROOT / "docs" / "library.md").read_text()
    section = page[page.index("## Kueue: flavors, queues and teams"):]
    source = section.split("```python\n", 1)[1].split("```", 1)[0]
    recording = _run(tmp_path, source)
    kinds = sorted(r.type.rsplit(":", 1)[-1] for r in recording.resources if r.type.startswith("kubernetes:") and r.type != "kubernetes:helm.sh/v3:Release")
    assert kinds == ["ClusterQueue", "LocalQueue", "Namespace", "NetworkPolicy", "ResourceFlavor"], kinds
    [queue] = _kueue_objects(recording, "ClusterQueue").values()
    assert queue.inputs["spec"]["namespaceSelector"] == {}


def test_an_output_or_a_bad_resource_name_anywhere_in_the_args_is_named():
    import pulumi

    from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor

    labels = {"pool": pulumi.Output.from_input("x")}
    assert _refused(ClusterQueue, {"flavors": [{"name": "f", "node_labels": labels}]}) == [
        "ClusterQueue q: args.flavors[0].node_labels.pool: must be a plain value known when the component is built, not an Output"
    ]
    # A flavor's resources become a queue's coveredResources, which Kueue wants qualified names.
    lines = _refused(ResourceFlavor, {"name": "f", "capacity": {"google.com/tpu chips": 4}})
    assert lines[0].startswith('ResourceFlavor q: args.capacity["google.com/tpu chips"]: resource name '), lines


def test_a_flavor_of_nodes_made_on_demand_says_its_accelerator():
    """A ComputeClass's flavor has no capacity to read its accelerator off: FlavorArgs says it,
    so a queue lists it after the flavors without accelerators as the stack program does; a
    resource that is no accelerator is refused at its arg path."""
    from conftest import synth_stack
    from gke_ai_batch.components.queues import ResourceFlavor
    from gke_ai_batch.config.errors import ArgsError
    from gke_ai_batch.plan.flavors import FlavorPlan

    result = synth_stack("dev")
    (fallback,) = [f for f in result.plan.flavors if f.name == "l4-fallback"]
    args = fallback.args()
    assert args["accelerator"] == "nvidia.com/gpu" and not args["capacity"]
    assert FlavorPlan.from_args(args).accelerator_resource == "nvidia.com/gpu"
    (queue,) = [r.inputs for r in result.recording.resources if r.type.endswith("v1beta2:ClusterQueue")]
    assert queue == result.plan.queues[0].manifest
    with pytest.raises(ArgsError) as refused:
        ResourceFlavor("f", {"name": "f", "accelerator": "example.com/fpga"})
    assert "args.accelerator: 'example.com/fpga' is not an accelerator resource" in str(refused.value)
