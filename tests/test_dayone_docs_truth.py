"""The docs say what the code does: the component list, the limits the checks enforce and the
output synth prints are read from their homes here and found in the pages that state them."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from conftest import ROOT

DOCS = ROOT / "docs"


def _section(page: str, heading: str) -> str:
    text = (DOCS / page).read_text()
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_architecture_lists_every_packaged_component_in_its_module():
    from gke_ai_batch.components.package import COMPONENTS

    section = _section("architecture.md", "The components")
    listed = {
        name: module
        for module, names in re.findall(r"^\| `(\w+\.py)` \| (.+) \|$", section, re.M)
        for name in re.findall(r"`(\w+)`", names)
    }
    assert listed == {c.__name__: c.__module__.rpartition(".")[2] + ".py" for c in COMPONENTS}
    assert f"holds {len(COMPONENTS)} components" in section


def test_how_it_works_names_every_component_and_its_token():
    from gke_ai_batch.components.package import COMPONENTS

    text = (DOCS / "how-it-works.md").read_text()
    flat = " ".join(text.split())
    missing = [c.__name__ for c in COMPONENTS if f"gke-ai-batch:index:{c.__name__}" not in flat]
    assert not missing, f"docs/how-it-works.md names no token for {missing}"
    diagram = text.split("```", 2)[1]
    assert all(re.search(rf"\b{c.__name__}\b", diagram.replace("/Manager", " MultiKueueManager")) for c in COMPONENTS)


def test_the_maintenance_limits_the_checks_page_states_are_the_codes():
    from gke_ai_batch.domain import maintenance as mx

    hours = int(mx.AVAILABILITY_MIN.total_seconds() // 3600)
    for page in ("checks.md", "maintenance.md"):
        text = " ".join((DOCS / page).read_text().split())
        assert f"{hours} h" in text or f"{hours} hours" in text, page
        assert f"in any {mx.AVAILABILITY_PERIOD.days} days" in text, page
        assert f"{mx.NO_UPGRADES_MAX.days} days" in text and f"any {mx.NO_UPGRADES_SPAN.days} days" in text, page
        assert {1: "one", 2: "two", 3: "three", 4: "four"}[mx.NO_UPGRADES_PER_SPAN] in text, page


def test_the_checks_page_lists_the_topology_rules_with_their_sources():
    table = _section("checks.md", "Admission and placement")
    rows = {m[0]: m[1] for m in re.findall(r"^\| ([^|]+) \| [^|]+ \| ([^|]+) \|$", table, re.M)}
    assert "tas_flavorassigner.go" in rows["topology domain"]
    assert "ClusterAutoscaler support" in rows["topology on nodes from zero"]
    assert "tas_validation.go" in rows["topology slices"]


def test_the_summary_synth_md_shows_is_what_synth_prints():
    from gke_ai_batch.config import load, split_namespace
    from gke_ai_batch.plan import build_plan
    from gke_ai_batch.synth.summary import summary

    stack = yaml.safe_load((ROOT / "stacks" / "Pulumi.tpu-multislice.yaml").read_text())["config"]
    values, region = split_namespace(stack)
    printed = summary("tpu-multislice", build_plan(load(values, region=region), stack["gcp:project"]))
    shown = (DOCS / "synth.md").read_text().split("$ python -m synth tpu-multislice\n", 1)[1].split("  ...\n", 1)[0]
    assert printed.startswith(shown.rstrip("\n"))


def test_the_readme_names_every_api_a_clusters_project_gets():
    from gke_ai_batch.plan.apis import WHY

    step = (ROOT / "README.md").read_text().split("3. **Google Cloud APIs.**", 1)[1].split("\n4. ", 1)[0]
    missing = [api for api in WHY if f"`{api.removesuffix('.googleapis.com')}`" not in step]
    assert not missing, f"README.md's first-deploy step 3 does not name {missing}"


def test_the_library_page_describes_its_example_as_it_is():
    example = ROOT / "examples" / "existing-cluster" / "__main__.py"
    lines = len(example.read_text().splitlines())
    assert f"is a {lines}-line program" in (DOCS / "library.md").read_text()


def test_every_vendored_extra_schema_is_named_where_the_manifest_checks_are_described():
    kinds = sorted(p.stem for p in (ROOT / "schema" / "upstream-extra").glob("*/*/*.json"))
    assert kinds
    for page, heading in (("verification.md", "Manifests"), ("dependencies.md", "Vendored CRD schemas")):
        section = _section(page, heading)
        assert [k for k in kinds if k not in section] == [], page


def _project_id_keys() -> set[str]:
    """Models of the stack file with a key checked as a project id (gcpnames.check_project_id)."""
    import typing

    from pydantic import AfterValidator, BaseModel

    from gke_ai_batch.config.gcpnames import check_project_id
    from gke_ai_batch.config.stack import StackConfig

    found: set[str] = set()
    seen: set[type] = set()

    def annotation(ann: Any, owner: str) -> None:
        if typing.get_origin(ann) is typing.Annotated:
            base, *meta = typing.get_args(ann)
            if any(isinstance(m, AfterValidator) and m.func is check_project_id for m in meta):
                found.add(owner)
            annotation(base, owner)
            return
        for arg in typing.get_args(ann):
            annotation(arg, owner)
        if isinstance(ann, type) and issubclass(ann, BaseModel) and ann not in seen:
            seen.add(ann)
            for field in ann.model_fields.values():
                annotation(typing.Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation,
                           ann.__name__)

    annotation(StackConfig, "StackConfig")
    return found


def test_the_checks_page_names_every_key_checked_as_a_project_id():
    # How checks.md's row names the key each model checks as a project id.
    named = {"WorkerConfig": "`fleet.workers[].project`", "ReservationConfig": "a reservation's `project`"}
    assert _project_id_keys() == set(named)
    row = next(line for line in (DOCS / "checks.md").read_text().splitlines() if line.startswith("| project ids |"))
    assert [words for words in named.values() if words not in row] == []


def test_synth_md_names_every_section_the_report_can_have():
    source = (ROOT / "gke_ai_batch" / "synth" / "report" / "__init__.py").read_text()
    headings = set(re.findall(r'\("([A-Z][^"]+)",', source))
    assert {"Policy", "Cost", "Topology", "Checkpoint storage"} <= headings
    page = " ".join(_section("synth.md", "The report a PR shows").split())
    assert sorted(h for h in headings if f"*{h}*" not in page) == []


def test_the_policy_pack_page_lists_every_rule_at_its_default_level():
    from gke_ai_batch.policy.rules import RULES

    table = {m[0]: m[1] for m in re.findall(r"^\| `([a-z0-9-]+)` \| ([^|]+) \|", (DOCS / "policy-pack.md").read_text(), re.M)}
    assert sorted(table) == sorted(r.name for r in RULES)
    assert [r.name for r in RULES if not table[r.name].startswith(r.enforcement)] == []


def test_stacks_md_names_every_api_an_existing_clusters_project_may_get():
    from gke_ai_batch.config import load, split_namespace
    from gke_ai_batch.plan.apis import required_apis

    stack = yaml.safe_load((ROOT / "stacks" / "Pulumi.existing-cluster.yaml").read_text())["config"]
    values, region = split_namespace(stack)
    # Everything an existing cluster's stack can ask of its project: checkpoint buckets and a dashboard.
    values = {**values, "checkpoints": {"projectNumber": "123456789012", "fuseDriver": True}, "metrics": {}}
    apis = required_apis(load(values, region=region, project=stack["gcp:project"]), stack["gcp:project"])
    section = " ".join(_section("stacks.md", "A cluster that exists already").split())
    assert [a for a in apis if f"`{a.removesuffix('.googleapis.com')}`" not in section] == []


def test_each_gkecluster_arg_a_stack_rule_checks_is_in_its_pages_refusal_table():
    from gke_ai_batch.components.cluster import GkeCluster
    from gke_ai_batch.config.errors import ArgsError

    base = {"name": "ml", "location": "us-central1", "project": "acme-ml"}
    for page, args in (
        ("metrics.md", {"monitoring": {"dcgm": True}}),
        ("checkpoints.md", {"addons": {"lustre_csi_driver": True}, "location": "us-east4"}),
    ):
        with pytest.raises(ArgsError) as refused:
            GkeCluster("c", {**base, **args})
        paths = {f.path.removeprefix("args.") for f in refused.value.findings}
        text = (DOCS / page).read_text()
        refusals = text.split("## What is refused", 1)[1].split("\n## ", 1)[0]
        assert [p for p in paths if f"`GkeCluster` arg `{p}`" not in refusals] == [], page
