"""report.md, the PR comment: the numbers a reviewer checks, the flow diagram, the preemption
reading, the replacement table, determinism, Autopilot, and policy findings."""

from __future__ import annotations

import re

from conftest import base_config, synth_config, synth_stack

from gke_ai_batch.synth import report

TPU = "google.com/tpu"


def section(text: str, heading: str) -> str:
    start = text.index(f"### {heading}\n")
    end = text.find("\n### ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def row(text: str, first_cell: str) -> str:
    rows = [line for line in text.splitlines() if line.startswith(f"| {first_cell} ")]
    assert len(rows) == 1, f"{first_cell}: {rows}"
    return rows[0]


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def mermaid(text: str) -> str:
    match = re.search(r"```mermaid\n(.*?)\n```", text, re.S)
    assert match, "no Mermaid block"
    return match.group(1)


def node_id(block: str, opening: str, name: str, closing: str) -> str:
    match = re.search(rf"^\s*(\w+){re.escape(opening)}\"{re.escape(name)}\"{re.escape(closing)}$", block, re.M)
    assert match, f"no node for {name!r}"
    return match.group(1)


def test_dev_report_shows_the_stack_and_its_totals():
    result = synth_stack("dev")
    plan, text = result.plan, result.extra_files["report.md"]
    assert text == report.render(result, result.violations)  # what synth writes is what render returns
    title = text.splitlines()[0]
    assert "`dev`" in title and f"`{plan.config.cluster.name}`" in title
    assert plan.config.cluster.release_channel in text and "not production" in text
    total = next(line for line in text.splitlines() if line.startswith("**Total:**"))
    for expected in (
        f"{len(plan.pools)} node pools",
        f"{plan.slices} TPU slices",
        f"{plan.vms} VMs",
        f"{plan.tpu_chips} TPU chips",
        f"{plan.gpus} GPUs",
    ):
        assert expected in total


def test_dev_capacity_per_flavor_has_slices_chips_and_quota():
    result = synth_stack("dev")
    plan, capacity = result.plan, section(result.extra_files["report.md"], "Capacity per flavor")
    for flavor in plan.flavors:
        if not flavor.pools:
            continue  # a compute class's flavor: GKE creates its nodes (tests/test_compute_classes.py)
        line = cells(row(capacity, f"`{flavor.name}`"))
        resource = flavor.accelerator_resource
        quota = sum(q.quotas.get(flavor.name, {}).get(resource, 0) for q in plan.queues)
        amount = flavor.capacity[resource]
        assert line[3] == (str(flavor.slices) if flavor.slices else "—")
        assert line[5] == (f"{amount} TPU chips" if resource == TPU else f"{amount} GPUs")
        assert line[6] == f"{quota} {resource}"  # with its Kueue resource, as every row of the column
    assert "⚠️" not in capacity  # dev's quotas equal its capacity


def test_dev_node_pools_table():
    result = synth_stack("dev")
    pools = section(result.extra_files["report.md"], "Node pools")
    for pool in result.plan.pools:
        line = cells(row(pools, f"`{pool.name}`"))
        assert line[1] == pool.capacity and line[2] == pool.machine_type
        assert line[5] == (f"0..{pool.nodes} (autoscaled)" if pool.autoscaled else str(pool.nodes))
        assert line[7] == "no"  # dev is not production
        if pool.tpu is not None:
            assert pool.tpu.topology in line[3]
    assert cells(row(pools, "`system`"))[3] == "system (CPU)"


def test_flex_tpu_pools_node_range():
    # TPU pools autoscale with per-zone limits; the report still shows each pool's range.
    pools = section(synth_stack("tpu-flex").extra_files["report.md"], "Node pools")
    assert cells(row(pools, "`flex-single-0`"))[5] == "0..1 (autoscaled)"
    assert cells(row(pools, "`flex-multi-0`"))[5] == "0..2 (autoscaled)"


def test_dev_queues_teams_and_who_preempts_whom():
    result = synth_stack("dev")
    text = result.extra_files["report.md"]
    queue = cells(row(section(text, "Cluster queues"), "`dev`"))
    assert queue[1] == "—"
    assert "`tpu-v5-lite-podslice-2x4-spot`: google.com/tpu 16" in queue[2]
    assert queue[3] == "preempts lower priority within the queue"
    assert queue[5] == "`ml-research`"
    assert cells(row(section(text, "Teams"), "`ml-research`")) == ["`ml-research`", "`research`", "`dev`"]
    priorities = section(text, "Priorities: who can preempt whom")
    order = [line.split("`")[1] for line in priorities.splitlines() if line.startswith("| `")]
    assert order == ["dev-high", "dev-low"]  # highest value first
    assert cells(row(priorities, "`dev-high`"))[2] == "in `dev`: `dev-low`, no priority (0)"
    assert cells(row(priorities, "`dev-low`"))[2] == "in `dev`: no priority (0)"
    assert "kube-scheduler" in priorities


def test_dev_sample_workloads_show_what_they_ask_for():
    result = synth_stack("dev")
    line = cells(row(section(result.extra_files["report.md"], "Sample workloads"), "`smoke-multislice`"))
    # 2 slices of a 2-VM 2x4 v5e slice, 4 chips per VM
    assert line[3:] == ["`research`", "`dev-low`", "4", f"16 {TPU}"]


def test_dev_mermaid_links_pools_flavors_queues_and_namespaces():
    result = synth_stack("dev")
    plan = result.plan
    block = mermaid(result.extra_files["report.md"])
    assert block.startswith("flowchart LR\n")
    assert node_id(block, "[", "v5e-spot (2 slices of 2x4)", "]")  # slices of one entry are one node
    flavors = {f.name: node_id(block, "{{", f.name, "}}") for f in plan.flavors}
    queues = {q.name: node_id(block, "[[", q.name, "]]") for q in plan.queues}
    for q in plan.queues:
        for f in q.flavors:
            assert re.search(rf"^\s*{flavors[f]} -->(\|[^|]*\|)? {queues[q.name]}$", block, re.M), (f, q.name)
    for team in plan.teams:
        assert f'"ns {team.namespace}"' in block and f'"{team.local_queue}"' in block


def test_dev_replacement_table():
    result = synth_stack("dev")
    table = section(result.extra_files["report.md"], "Changes that force replacement")
    assert "**replaces**" in cells(row(table, "`nodePools[].capacity`"))[2]
    assert "**replaces**" in cells(row(table, "`nodePools[].gpu` (type, count, driverVersion)"))[2]
    assert "**replaces**" in cells(row(table, "`nodePools[].maxRunDuration`"))[2]
    assert "`v5e-spot`: 2 → 1 deletes `v5e-spot-1`" in cells(row(table, "`nodePools[].slices`"))[2]
    assert cells(row(table, "`nodePools[].name`"))[1] == "`v5e-spot-0`, `v5e-spot-1`, `l4-flex`"
    assert "in place" in cells(row(table, "`nodePools[].machineType`, `gvnic`"))[2]
    assert "**replaces**" in cells(row(table, "`nodePools[].tpu.topology`, `tpu.version`, `tpu.machineType`"))[2]
    assert "Not a production stack" in table


def test_render_is_deterministic(tmp_path):
    result = synth_stack("dev")
    assert report.render(result, result.violations) == report.render(result, result.violations)
    config = base_config(
        nodePools=[{"name": "v5e", "tpu": {"version": "v5e", "topology": "2x4"}, "slices": 2}],
        clusterQueues=[{"name": "q"}],
        teams=[{"namespace": "t", "localQueue": "lq", "clusterQueue": "q"}],
        priorities=[{"name": "b", "value": 5}, {"name": "a", "value": 5}],
    )
    runs = [tmp_path / "first", tmp_path / "second"]
    for run in runs:
        run.mkdir()
    first, second = (synth_config(run, config).extra_files["report.md"] for run in runs)
    assert first == second  # two separate synth runs, byte for byte


def test_policy_section_lists_violations_mandatory_first():
    result = synth_stack("dev")
    assert "✅ All policy rules pass." in section(report.render(result, []), "Policy")
    violations = [
        {
            "policy": "spot-needs-checkpoints",
            "enforcement": "advisory",
            "urn": "urn:pulumi:dev::gke-ai-batch::gke-ai-batch:nodepools:NodePoolGroup"
            "$gcp:container/nodePool:NodePool::v5e-spot-0",
            "message": "spot | preemptible",
        },
        {"policy": "quota-within-capacity", "enforcement": "mandatory", "urn": "", "message": "40 > 32"},
    ]
    policy = section(report.render(result, violations), "Policy")
    assert "All policy rules pass" not in policy
    assert "1 mandatory violation" in policy and "must not run" in policy
    lines = [line for line in policy.splitlines() if line.startswith("| **mandatory**") or line.startswith("| advisory")]
    assert lines[0].startswith("| **mandatory** | `quota-within-capacity` |")
    assert cells(lines[1])[2:] == ["`v5e-spot-0` (NodePool)", "spot \\| preemptible"]
    advisory_only = section(report.render(result, violations[:1]), "Policy")
    assert "must not run" not in advisory_only and "1 advisory finding" in advisory_only


def test_autopilot_stack_without_pools(tmp_path):
    config = {
        "gcp:project": "test-project",
        "gcp:region": "us-central1",
        "gke-ai-batch:cluster": {"name": "ap", "mode": "autopilot"},
        "gke-ai-batch:flavors": [
            {"name": "l4", "nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-l4"}},
            {"name": "general", "nodeLabels": {"cloud.google.com/compute-class": "Balanced"}},
        ],
        "gke-ai-batch:clusterQueues": [
            {
                "name": "batch",
                "flavors": [
                    {"name": "l4", "quotas": {"cpu": 64, "memory": "256Gi", "nvidia.com/gpu": 8}},
                    {"name": "general", "quotas": {"cpu": 32, "memory": "128Gi", "ephemeral-storage": "1Ti"}},
                ],
            }
        ],
        "gke-ai-batch:teams": [
            {"namespace": "team-a", "localQueue": "batch", "clusterQueue": "batch"},
            {"namespace": "team-b", "localQueue": "batch", "clusterQueue": "batch"},
        ],
    }
    result = synth_config(tmp_path, config)
    assert result.error is None, result.error
    text = result.extra_files["report.md"]
    assert "Autopilot" in text.splitlines()[2]
    assert "Autopilot: no node pools" in section(text, "Node pools")
    assert "`system`" not in section(text, "Node pools")
    l4 = cells(row(section(text, "Capacity per flavor"), "`l4`"))
    assert "`cloud.google.com/gke-accelerator=nvidia-l4`" in l4[1] and l4[6] == "8 nvidia.com/gpu"
    queue = cells(row(section(text, "Cluster queues"), "`batch`"))
    assert "`general`: cpu 32, memory 128Gi, ephemeral-storage 1Ti" in queue[2]
    assert queue[5] == "`team-a`, `team-b`"
    block = mermaid(text)
    source = node_id(block, "[", "Autopilot nodes", "]")
    assert f"{source} --> {node_id(block, '{{', 'general', '}}')}" in block
    table = section(text, "Changes that force replacement")
    assert "nodePools" not in table and "No node pool entries" in table


def test_cohorts_quota_over_capacity_and_production(tmp_path):
    config = base_config(
        production=True,
        cluster={"name": "test", "nodeLocations": ["us-central1-a"], "privateNodes": True},
        nodePools=[{"name": "v5e", "tpu": {"version": "v5e", "topology": "2x4"}, "slices": 2}],
        clusterQueues=[
            {
                "name": "train",
                "cohort": "ml",
                "flavors": [{"name": "tpu-v5-lite-podslice-2x4", "quotas": {TPU: 16}}],
                "preemption": {"withinClusterQueue": "LowerOrNewerEqualPriority", "reclaimWithinCohort": "Any"},
            },
            {
                "name": "eval",
                "cohort": "ml",
                "flavors": [{"name": "tpu-v5-lite-podslice-2x4", "quotas": {TPU: 8}}],
                "preemption": {
                    "reclaimWithinCohort": "LowerPriority",
                    "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
                },
            },
        ],
        teams=[
            {"namespace": "train", "localQueue": "main", "clusterQueue": "train"},
            {"namespace": "eval", "localQueue": "main", "clusterQueue": "eval"},
        ],
        priorities=[{"name": "low", "value": 10}, {"name": "high", "value": 1000}],
    )
    result = synth_config(tmp_path, config)
    assert result.error is None, result.error
    text = result.extra_files["report.md"]
    assert "**⚠️ 24 google.com/tpu > capacity 16**" in row(section(text, "Capacity per flavor"), "`tpu-v5-lite-podslice-2x4`")
    queues = section(text, "Cluster queues")
    assert cells(row(queues, "`train`"))[3] == (
        "preempts lower priority, and newer equal priority, within the queue; reclaims from cohort: any"
    )
    assert "while borrowing, preempts lower priority in the cohort up to priority 100" in row(queues, "`eval`")
    high = cells(row(section(text, "Priorities: who can preempt whom"), "`high`"))[2].split("<br>")
    assert high == [
        "in `train`: `low`, no priority (0), newer `high`",
        "in `train`, from `eval` over nominal quota: any priority",
        "in `eval`, from `train` over nominal quota: `low`, no priority (0)",
        "in `eval`, borrowing from `train`: `low`, no priority (0)",
    ]
    block = mermaid(text)
    cohort = block[block.index('subgraph C0["cohort ml"]') : block.index("  end")]
    assert '[["train"]]' in cohort and '[["eval"]]' in cohort
    assert all(cells(row(section(text, "Node pools"), f"`v5e-{i}`"))[7] == "yes" for i in range(2))
    assert "**Production stack:**" in section(text, "Changes that force replacement")


def test_stack_without_queues_or_workloads(tmp_path):
    result = synth_config(tmp_path, base_config())
    assert result.error is None, result.error
    text = result.extra_files["report.md"]
    assert "No ClusterQueues" in text and "No teams" in text and "No sample workloads" in text
    assert mermaid(text).startswith("flowchart LR\n")


def test_every_team_namespace_shows_its_level_and_network_policy(tmp_path):
    text = synth_stack("tpu-multislice").extra_files["report.md"]
    isolation = section(text, "Namespaces: Pod Security and network isolation")
    assert cells(row(isolation, "`default`")) == [
        "`default`",
        "patched (exists in every cluster)",
        "`privileged` (latest); warn baseline, audit baseline",
        "ingress from the same namespace only",
    ]
    # Privileged namespaces stand out, with what needs the host.
    assert "**Privileged namespace `default`** (warn and audit at baseline): needed by `multislice-1slice` (Host Namespaces, Host Ports, Privileged Containers)" in isolation
    config = base_config(
        clusterQueues=[{"name": "cq", "flavors": [{"name": "f", "quotas": {"cpu": 4}}]}],
        flavors=[{"name": "f"}],
        teams=[{"namespace": "ml", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": "privileged",
                "networkPolicy": False}],
    )
    result = synth_config(tmp_path, config)
    assert result.error is None, result.error
    isolation = section(result.extra_files["report.md"], "Namespaces: Pod Security and network isolation")
    assert cells(row(isolation, "`ml`"))[3] == "none: open to every pod"
    assert "**Privileged namespace `ml`** (warn and audit at baseline): no sample workload needs it." in isolation


def test_dataplane_v2_replaces_the_cluster_in_the_replacement_table():
    table = section(synth_stack("dev").extra_files["report.md"], "Changes that force replacement")
    assert "**replaces** the cluster (`datapath_provider`)" in cells(row(table, "`cluster.dataplaneV2`"))[2]
    autopilot = section(synth_stack("batch-autopilot").extra_files["report.md"], "Changes that force replacement")
    assert "`cluster.dataplaneV2`" not in autopilot  # GKE's own choice there
