"""Red-team of `python -m synth --program` with programs nobody had tried: what a valid Pulumi
program may do (read another stack, raise any BaseException, declare single-host TPU slices)
ends in a message and a documented exit code, and the report tells what was registered."""

from __future__ import annotations

from gke_ai_batch.synth import EXIT_INTERNAL, EXIT_INVALID_CONFIG, output_files
from gke_ai_batch.synth.stackfile import StackFile

from conftest import ROOT


def _render(tmp_path, program: str, config: str = "config:\n  gcp:project: acme-ml\n"):
    from gke_ai_batch.synth.program import read_project, synthesize_program

    if not (tmp_path / "Pulumi.yaml").exists():
        (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(program)
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(config)
    return synthesize_program(read_project(tmp_path), StackFile.locate(ROOT, None, stack))


def test_a_stack_reference_is_refused_at_the_programs_line_not_a_crash(tmp_path):
    # The mock engine has no backend to read the other stack from: its outputs were None and
    # the SDK failed inside synth ('NoneType' object has no attribute 'get', exit 70, no line).
    result = _render(tmp_path, "import pulumi\n\nref = pulumi.StackReference('acme/net/prod')\n"
                               "pulumi.export('vpc', ref.get_output('vpc'))\n")
    assert result.exit_code == EXIT_INVALID_CONFIG and result.recording is None
    [problem] = result.diagnostics
    assert problem.file.endswith("__main__.py") and problem.line == 3, problem.render()
    assert "StackReference 'acme/net/prod': synth renders offline and cannot read another stack's outputs" in problem.message


def test_a_program_raising_a_base_exception_is_the_programs_failure(tmp_path, capsys):
    # GeneratorExit is no Exception: it escaped as "internal error ... a bug in synth".
    from gke_ai_batch.synth.__main__ import main

    _render(tmp_path, "pass\n")
    (tmp_path / "__main__.py").write_text("x = 1\nraise GeneratorExit('stop')\n")
    code = main(["--program", str(tmp_path), "--config", str(tmp_path / "Pulumi.dev.yaml"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == EXIT_INTERNAL
    assert "__main__.py:2: the program failed: GeneratorExit: stop" in err and "bug in synth" not in err, err


SINGLE_HOST = """
from gke_ai_batch.components.nodepools import TpuSlices

ref = {"name": "c", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "2x2"})
"""


def test_a_single_host_tpu_pool_is_shown_as_tpu_not_cpu(tmp_path):
    # A single-host slice has no placementPolicy; the report read its shape from that alone.
    report = _render(tmp_path, SINGLE_HOST).extra_files["report.md"]
    assert "| `v6e-0` | on-demand | ct6e-standard-4t | TPU 2x2 |" in report, report


TWO_TRAINS = """
import pulumi
import pulumi_kubernetes as k8s
from gke_ai_batch.components.nodepools import TpuSlices
from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor, Team

ref = {"name": "c", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
tpu = TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "4x4", "slices": 2})
on = pulumi.ResourceOptions(provider=k8s.Provider("k8s"))
ResourceFlavor("f", tpu.flavor, opts=on)
ClusterQueue("cq", {"flavors": [tpu.flavor], "namespace_selector": {}}, opts=on)
node = {k: v for k, v in tpu.flavor["node_labels"].items() if k.startswith("cloud.google.com/gke-tpu")}
for ns, replicas in (("research", 1), ("other", 3)):
    Team(ns, {"namespace": ns, "local_queues": [{"name": "main", "cluster_queue": "cq"}]}, opts=on)
    pod = {"nodeSelector": node, "containers": [{"name": "c", "image": "busybox:1.36",
           "resources": {"requests": {"google.com/tpu": "4"}, "limits": {"google.com/tpu": "4"}}}]}
    k8s.apiextensions.CustomResource(f"{ns}-train", api_version="jobset.x-k8s.io/v1alpha2", kind="JobSet",
        metadata={"name": "train", "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": "main"}},
        spec={"replicatedJobs": [{"name": "s", "replicas": replicas, "template": {"spec": {
            "parallelism": 4, "completions": 4, "template": {"spec": pod}}}}]}, opts=on)
"""


def test_two_samples_of_one_name_in_two_namespaces_each_keep_their_verdict(tmp_path):
    # admission.json and the at-once simulation were keyed by name: other/train (48 chips, never)
    # overwrote research/train (16 chips, admitted), and the PR diff compared the wrong one.
    import json

    result = _render(tmp_path, TWO_TRAINS)
    verdicts = json.loads(result.extra_files["admission.json"])["workloads"]
    assert set(verdicts) == {"research/train", "other/train"}, verdicts
    assert verdicts["research/train"]["admissible"] is True
    assert verdicts["other/train"]["admissible"] is False and verdicts["other/train"]["rule"] == "quota"
    report = result.extra_files["report.md"]
    assert "| `research/train` | `cq` | `tpu-v6e-slice-4x4` | none | `v6e-0`, `v6e-1` | ✅ admitted |" in report, report


def test_workload_keys_are_names_where_unique_and_kubernetes_keys_where_not():
    from gke_ai_batch.model import Workload, workload_keys

    def wl(kind, ns, name):
        return Workload(name, kind, ns, None, None, ())

    found = workload_keys([wl("JobSet", "a", "x"), wl("JobSet", "b", "x"), wl("JobSet", "a", "y"), wl("Job", "a", "y"), wl("Job", "a", "z")])
    assert found == ["a/x", "b/x", "JobSet a/y", "Job a/y", "z"]


TWO_CLUSTERS = """
import pulumi
import pulumi_kubernetes as k8s
from gke_ai_batch.components.nodepools import TpuSlices
from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor

for name, zone in (("a", "us-east5-b"), ("b", "us-central1-b")):
    ref = {"name": name, "location": zone[:-2], "project": "acme-ml", "node_locations": [zone]}
    tpu = TpuSlices(f"{name}-v6e", {"cluster": ref, "version": "v6e", "topology": "2x2"})
    on = pulumi.ResourceOptions(provider=k8s.Provider(f"{name}-k8s", context=name))
    ResourceFlavor(f"{name}-flavor", tpu.flavor, opts=on)
    ClusterQueue(f"{name}-cq", {"flavors": [tpu.flavor], "namespace_selector": {}}, opts=on)
"""


def test_a_program_on_two_clusters_by_provider_judges_each_alone(tmp_path):
    # Names in no scope, so one world held both: each queue's flavor selected both clusters'
    # pools. Each provider's context names its cluster, whose pools alone back its queue.
    import json

    result = _render(tmp_path, TWO_CLUSTERS)
    assert result.recording is not None, result.error
    queues = json.loads(result.extra_files["admission.json"])["queues"]
    assert set(queues) == {"a/a-cq", "b/b-cq"}
    assert all(q["tpu-v6e-slice-2x2/google.com/tpu"]["most"] == "4" for q in queues.values()), queues
    report = result.extra_files["report.md"]
    assert "| `a` | `a-v6e-0` |" in report and "| `b` | `b-v6e-0` |" in report, report


def test_one_cluster_with_one_provider_still_gets_verdicts(tmp_path):
    import json

    one = TWO_CLUSTERS.replace('(("a", "us-east5-b"), ("b", "us-central1-b"))', '(("a", "us-east5-b"),)')
    queues = json.loads(_render(tmp_path, one).extra_files["admission.json"])["queues"]
    assert set(queues) == {"a-cq"}


def test_depends_on_an_output_of_a_list_is_refused_at_the_components_line(tmp_path):
    # Pulumi takes it, but each child's depends_on became [Output([sa])]: the SDK then failed to
    # hash a list deep in its RPCs (exit 70, "unhashable type: 'list'", no line).
    program = SINGLE_HOST.replace("from gke_ai_batch", "import pulumi, pulumi_gcp as gcp\nfrom gke_ai_batch").replace(
        '"topology": "2x2"})',
        '"topology": "2x2"},\n         opts=pulumi.ResourceOptions(depends_on=pulumi.Output.from_input([sa])))',
    ).replace("ref = ", 'sa = gcp.serviceaccount.Account("sa", account_id="nodes")\nref = ')
    result = _render(tmp_path, program)
    assert result.exit_code == EXIT_INVALID_CONFIG, result.error
    [problem] = result.diagnostics
    assert problem.line == 7 and problem.path == "TpuSlices v6e: opts.depends_on", problem.render()
    assert "must be a Resource or a list of them (each may be an Output of one), not Output" in problem.message


def test_exported_resources_are_their_urns_and_a_list_of_outputs_still_waits(tmp_path):
    # pulumi.export of a resource (common) crashed writing outputs.json: "Object of type
    # Account is not JSON serializable ... a bug in synth".
    import json

    program = SINGLE_HOST.replace("from gke_ai_batch", "import pulumi, pulumi_gcp as gcp\nfrom gke_ai_batch").replace(
        '"topology": "2x2"})',
        '"topology": "2x2"},\n               opts=pulumi.ResourceOptions(depends_on=[pulumi.Output.from_input(sa)]))',
    ).replace("ref = ", 'sa = gcp.serviceaccount.Account("sa", account_id="nodes")\nref = ').replace(
        "TpuSlices(\"v6e\"", "tpu = TpuSlices(\"v6e\"") + 'pulumi.export("sa", sa)\npulumi.export("tpu", tpu)\n'
    result = _render(tmp_path, program)
    assert result.exit_code != EXIT_INTERNAL, result.error
    assert json.loads(output_files(result)["outputs.json"]) == {
        "sa": "urn:pulumi:dev::x::gcp:serviceaccount/account:Account::sa",
        "tpu": "urn:pulumi:dev::x::gke-ai-batch:index:TpuSlices::v6e",
    }
    [pool] = [r for r in result.recording.resources if r.type == "gcp:container/nodePool:NodePool"]
    assert "urn:pulumi:dev::x::gcp:serviceaccount/account:Account::sa" in pool.dependencies


def test_exporting_what_protobuf_cannot_hold_is_the_programs_failure_as_under_pulumi(tmp_path):
    from gke_ai_batch.synth.program import ProgramFailed

    program = "import dataclasses, pulumi\n\n@dataclasses.dataclass\nclass P:\n    x: int\n\npulumi.export('p', P(1))\n"
    try:
        _render(tmp_path, program)
    except ProgramFailed as failed:
        assert "ValueError: unexpected input of type P for p" in failed.diagnostic().message
    else:
        raise AssertionError("an export the SDK cannot serialize rendered")


def test_a_required_config_key_missing_or_mistyped_is_exit_2_at_the_programs_line(tmp_path):
    # The stack file's fault, as `pulumi up` tells it: it was exit 70, "the program failed".
    result = _render(tmp_path, "import pulumi\n\nconfig = pulumi.Config()\nconfig.require('team')\n")
    assert result.exit_code == EXIT_INVALID_CONFIG, result.error
    [problem] = result.diagnostics
    assert (problem.line, problem.path, problem.rule) == (4, "x:team", "config"), problem.render()
    assert problem.message.startswith("Missing required configuration variable 'x:team' please set a value") and "\n" not in problem.message
    (tmp_path / "__main__.py").write_text("import pulumi\n\npulumi.Config().require_int('project', )\n")
    result = _render(tmp_path, (tmp_path / "__main__.py").read_text().replace("Config()", "Config('gcp')"))
    [problem] = result.diagnostics
    assert (problem.line, problem.path) == (3, "gcp:project") and "value 'acme-ml' is not a valid 'int'" in problem.message


CONFIG_GROUP = '''
import pulumi_kubernetes as k8s

k8s.yaml.ConfigGroup("kueue-objects", yaml=["""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 8}]
---
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
"""])
'''


def test_objects_of_a_yaml_config_group_are_rendered_and_judged(tmp_path):
    # The v1 ConfigGroup asks the provider to decode its YAML (kubernetes:yaml:decode); the mock
    # engine answered {}, so the queue was in no file and the report said there was none.
    import yaml

    from gke_ai_batch.synth import manifests

    result = _render(tmp_path, CONFIG_GROUP)
    assert result.recording is not None, result.error
    assert [(d["kind"], d["metadata"]["name"]) for d in manifests(result.recording)] == [("ClusterQueue", "cq"), ("ResourceFlavor", "default")]
    assert [d["kind"] for d in yaml.safe_load_all(output_files(result)["manifests.yaml"])] == ["ClusterQueue", "ResourceFlavor"]
    assert "| `cq` | — | `default`: cpu 8 | — | all |" in result.extra_files["report.md"]


def test_exporting_nan_is_the_programs_failure_not_an_outputs_json_that_is_no_json(tmp_path):
    # outputs.json held `NaN`: no JSON, and a base --base then refuses.
    from gke_ai_batch.synth.program import ProgramFailed

    try:
        _render(tmp_path, "import pulumi\n\npulumi.export('ratio', float('nan'))\n")
    except ProgramFailed as failed:
        assert "ValueError: pulumi.export('ratio'): Fail to serialize nan for Value.number_value" in failed.diagnostic().message
    else:
        raise AssertionError("NaN was exported")


def test_a_key_without_a_namespace_is_told_to_take_the_programs_project_not_this_one(tmp_path):
    # The suggestion named gke-ai-batch:team: a key the program (project x) never reads.
    result = _render(tmp_path, "import pulumi\n\npulumi.Config().require('team')\n",
                     "config:\n  gcp:project: acme-ml\n  team: research\n")
    [problem] = result.diagnostics
    assert (problem.line, problem.path) == (3, "team") and "e.g. x:team)" in problem.message, problem.render()


def test_project_level_config_in_pulumi_yaml_reaches_the_program_under_the_stack_files(tmp_path):
    # Pulumi.yaml's config: (Pulumi 3.44) was not read: a program requiring a key it declares with a
    # default was refused as missing, though `pulumi up` runs it.
    (tmp_path / "Pulumi.yaml").write_text(
        "name: x\nruntime: python\nconfig:\n  team:\n    type: string\n    default: research\n"
        "  x:size: 3\n  gcp:region: {value: us-east5}\n  over: from-project\n  token: {type: string, secret: true}\n")
    result = _render(tmp_path, "import pulumi\n\nc = pulumi.Config()\npulumi.export('t', [c.require('team'), c.require_int('size'), "
                               "pulumi.Config('gcp').require('region'), c.require('over'), c.get('token')])\n",
                     "config:\n  gcp:project: acme-ml\n  x:over: from-stack\n")
    assert result.recording is not None, result.error
    assert result.recording.outputs == {"t": ["research", 3, "us-east5", "from-stack", None]}


def test_a_pool_of_no_known_size_is_a_dash_in_the_cost_table_not_none(tmp_path):
    # A raw NodePool without nodeCount or autoscaling: the table said "0-None".
    report = _render(tmp_path, "import pulumi_gcp as gcp\n\ngcp.container.NodePool('p', cluster='x', location='us-central1',\n"
                               "    node_config={'machine_type': 'n2-standard-8'})\n").extra_files["report.md"]
    cost = report.split("### Cost", 1)[1].split("###", 1)[0]
    assert "None" not in cost and "| `p` | on-demand |" in cost, cost


MALFORMED = """
import pulumi_kubernetes as k8s

CR = k8s.apiextensions.CustomResource
CR("rf", api_version="kueue.x-k8s.io/v1beta2", kind="ResourceFlavor", metadata={"name": "f"}, spec={"nodeLabels": ["a"]})
CR("cq", api_version="kueue.x-k8s.io/v1beta2", kind="ClusterQueue", metadata={"name": "cq"},
   spec={"namespaceSelector": {"matchLabels": [1]}, "resourceGroups": [{"coveredResources": ["cpu"],
         "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "abc"}]}]}]})
CR("lq", api_version="kueue.x-k8s.io/v1beta2", kind="LocalQueue", metadata={"name": "lq", "namespace": "ns"}, spec={"clusterQueue": ["cq"]})
CR("pr", api_version="autoscaling.x-k8s.io/v1", kind="ProvisioningRequest", metadata={"name": "pr", "namespace": "ns"},
   spec={"podSets": [{"podTemplateRef": "pt", "count": 1}]})
CR("js", api_version="jobset.x-k8s.io/v1alpha2", kind="JobSet",
   metadata={"name": "js", "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
   spec={"replicatedJobs": [{"name": "a", "replicas": 1, "template": {"spec": {"parallelism": 2, "completions": None,
         "template": {"spec": {"containers": [{"name": "c", "image": "i:1", "resources": {"requests": {"cpu": "abc"}}}]}}}}}]})
"""


def test_kueue_objects_and_workloads_the_api_server_refuses_are_not_judged_and_not_a_crash(tmp_path):
    # Each crashed synth (exit 70, "a bug in synth"): the model's dict() of a list of labels, min()
    # of None completions, the pack hashing a list as a queue name, the report's selector reader.
    result = _render(tmp_path, MALFORMED)
    assert result.recording is not None and result.exit_code != EXIT_INTERNAL, result.error
    report = result.extra_files["report.md"]
    assert "| `cq` | — | refused by the API server: a field is not of its CRD's type | — | — |" in report, report
    assert "| `f` | refused by the API server: a field is not of its CRD's type |" in report
    assert json_of(result, "admission.json") == {"workloads": {}, "queues": {}}


def json_of(result, name):
    import json

    return json.loads(result.extra_files[name])
