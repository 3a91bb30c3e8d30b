"""Offline synth: run the real program for a stack under a recording mock engine and write
what it would create, for review without a cloud account or a cluster."""

from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from gke_ai_batch.domain.findings import MANDATORY, Finding

from .manifests import manifest_registrations
from .diagnostics import (  # noqa: F401 - the exit codes are part of synth's API
    EXIT_INTERNAL,
    EXIT_INVALID_CONFIG,
    EXIT_OK,
    EXIT_POLICY_VIOLATION,
    Diagnostic,
)

if TYPE_CHECKING:
    from . import engine
    from .stackfile import StackFile

# The recording engine (pulumi) and the stack-file reader (pydantic, through the config) load
# on first use, not with the package: `python -m synth --help` and its usage errors, and those
# of synth.add and synth.urns, answer without them (~0.45 s each).
_LAZY = {"StackFile": ".stackfile", "StackFileError": ".stackfile", "display_path": ".stackfile", "engine": None}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(_LAZY[name] or f".{name}", __name__)
    return module if _LAZY[name] is None else getattr(module, name)

MOCK_ENDPOINT = "203.0.113.10"  # TEST-NET-3: no real control plane
# base64 of a PEM block around "mock-ca": shaped like GKE's clusterCaCertificate, which a
# fleet's kubeconfig check (gke_ai_batch/plan/kubeconfig.py) reads as a certificate.
MOCK_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmJXOWpheTFqWVE9PQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="
MOCK_TOKEN_DATA = "bW9jay10b2tlbg=="  # base64("mock-token")
# The DNS endpoint's shape (gke-<hash>.<region>.gke.goog); .invalid never resolves (RFC 6761).
MOCK_DNS_ENDPOINT = "gke-mock.invalid.gke.goog"
# libyaml's safe loader when PyYAML has it: stack files of big platforms parse several times faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_KUBERNETES_PROVIDER_TYPE = "pulumi:providers:kubernetes"


@dataclass
class Result:
    stack: str
    recording: engine.Recording | None = None
    config: Any = None  # gke_ai_batch.config.StackConfig: the stack file's budget and price overrides
    plan: Any = None
    admission: Any = None  # gke_ai_batch.plan.admission.Admission: the model's verdicts
    fleet: Any = None  # gke_ai_batch.plan.fleet.FleetPlan of a fleet stack (plan is its manager's); None otherwise
    diagnostics: list[Diagnostic] = field(default_factory=list)
    """Why the stack was refused (exit code 2), each placed in the stack file."""
    exit_code: int = EXIT_OK
    policy_findings: list[Finding] = field(default_factory=list)
    """The policy pack's findings on what the program registered, mandatory first (synth/policy.py)."""
    extra_files: dict[str, str] = field(default_factory=dict)
    cost: dict[str, Any] | None = None  # cost.json (synth/report/cost.py)
    program: str | None = None
    """The program folder of a `--program` render (synth/program.py), which has no plan; None for a stack."""

    @property
    def violations(self) -> list[dict[str, Any]]:
        """The policy findings as policy.json lists them."""
        from .policy import violation

        return [violation(f) for f in self.policy_findings]

    @property
    def error(self) -> str | None:
        """The diagnostics as synth prints them, one per line; None if the stack renders."""
        return "\n".join(d.render() for d in self.diagnostics) if self.diagnostics else None

    def refuse(self, diagnostics: list[Diagnostic]) -> "Result":
        self.diagnostics, self.exit_code = diagnostics, EXIT_INVALID_CONFIG
        return self

    @property
    def manifests_by_cluster(self) -> dict[str, str]:
        """Each cluster's Kubernetes objects, as manifests.yaml lists them, by the cluster's
        naming scope (gke_ai_batch.domain.naming.scoped; "" for the one cluster of a single-cluster
        stack). A cluster the program declares no object on has "". {} if nothing rendered."""
        if self.recording is None:
            return {}
        return {scope: _manifests_yaml(docs) for scope, docs in manifests_by_cluster(self.recording).items()}

    @property
    def summary(self) -> str:
        from .summary import program_summary, summary

        if self.program is not None and self.recording is not None:
            return program_summary(self.stack, self.program, self.recording)
        return summary(self.stack, self.plan, self.fleet)


def project_name(root: Path) -> str:
    return yaml.load((root / "Pulumi.yaml").read_text(), Loader=_LOADER)["name"]


def outputs_for(project: str):
    """What the cloud would report back for the few outputs the program reads."""

    def outputs(type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        if type_ == "gcp:container/cluster:Cluster":
            endpoints = dict(inputs.get("controlPlaneEndpointsConfig") or {})
            endpoints["dnsEndpointConfig"] = {**(endpoints.get("dnsEndpointConfig") or {}), "endpoint": MOCK_DNS_ENDPOINT}
            return {
                "endpoint": MOCK_ENDPOINT,
                "masterAuth": {"clusterCaCertificate": MOCK_CA},
                "controlPlaneEndpointsConfig": endpoints,
            }
        if type_ == "gcp:serviceaccount/account:Account":
            return {"email": f"{inputs['accountId']}@{project}.iam.gserviceaccount.com"}
        if type_ == "kubernetes:core/v1:Secret" and inputs.get("type") == "kubernetes.io/service-account-token":
            # What the token controller fills in (a fleet worker's token for the manager).
            return {"data": {"token": MOCK_TOKEN_DATA, "ca.crt": MOCK_CA}}
        return {}

    return outputs


def synthesize(root: Path, stack_file: StackFile, stacks_dir: Path | None = None) -> Result:
    """`stacks_dir` (default root/stacks): a stack file in it is checked against the others
    there for collisions in GCP (synth/crossstack.py)."""
    from . import engine

    # Policy and report run over the whole recording too: keep the collector off for them.
    with engine.lean_runtime():
        return _synthesize(root, stack_file, stacks_dir or root / "stacks")


def _synthesize(root: Path, stack_file: StackFile, stacks_dir: Path) -> Result:
    from gke_ai_batch.config import ConfigError
    from gke_ai_batch.plan.program import ENTRY, ProgramResult

    from . import crossstack, diagnostics, engine, stackfile
    from .stackfile import StackFileError, display_path

    result = Result(stack_file.stack)
    try:
        config = stackfile.read(stack_file)
    except StackFileError as exc:
        return result.refuse(exc.diagnostics)
    file = stack_file.display()

    def placed(problems, rule: str) -> list[Diagnostic]:
        return diagnostics.from_problems(problems, rule=rule, file=file, positions=config.positions)

    # realpath, not Path.resolve: a symbolic link loop is a path like another here, not an error.
    if Path(os.path.realpath(stack_file.path)).parent == Path(os.path.realpath(stacks_dir)):
        clashes = crossstack.collisions(stack_file.path, stacks_dir, display_path)
        if clashes:
            return result.refuse(placed(clashes, crossstack.RULE))
    gcp_project = config.values.get("gcp:project", "")
    try:
        result.recording = engine.run(
            root / "__main__.py",
            project=project_name(root),
            stack=stack_file.stack,
            config=config.values,
            secret_keys=config.secret_keys,
            outputs_for=outputs_for(gcp_project),
            entry=ENTRY,
        )
    except ConfigError as exc:
        result.recording = None
        return result.refuse(placed(exc.findings, getattr(exc, "rule", "config")))
    # What the program's function returned (gke_ai_batch/plan/program.py), not its globals.
    program: ProgramResult = result.recording.result
    result.config, result.plan, result.admission, result.fleet = program.config, program.plan, program.admission, program.fleet
    return judge(result)


def judge(result: Result) -> Result:
    """The policy pack, the cost table and the report over what the program registered."""
    from . import policy, report

    result.policy_findings = policy.findings(result)
    if any(f.severity == MANDATORY for f in result.policy_findings):
        result.exit_code = EXIT_POLICY_VIOLATION
    result.extra_files["policy.json"] = json.dumps(result.violations, indent=2, sort_keys=True) + "\n"
    from .report import cost

    result.cost = cost.compute(result)
    result.extra_files["cost.json"] = json.dumps(result.cost, indent=2, sort_keys=True) + "\n"
    from .report import admission

    result.extra_files["admission.json"] = json.dumps(admission.compute(result), indent=2, sort_keys=True) + "\n"
    result.extra_files["report.md"] = report.render(result, result.policy_findings)
    return result


def manifests(recording: engine.Recording) -> list[dict[str, Any]]:
    return [r.inputs for r in manifest_registrations(recording)]


def _manifests_yaml(docs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=True, default_flow_style=False) if docs else ""


def manifests_by_cluster(recording: engine.Recording) -> dict[str, list[dict[str, Any]]]:
    """Each cluster's Kubernetes objects in recording order, by the Kubernetes provider that
    applies them (each cluster of a stack has one: gke_ai_batch.components.cluster), labelled by
    that provider's naming scope, which the stack program gives every provider (naming.scoped)."""
    from gke_ai_batch.domain.naming import KUBERNETES_PROVIDER, scope_of

    scopes: dict[str, str] = {}
    for r in recording.resources:
        if r.type == _KUBERNETES_PROVIDER_TYPE:
            scope = scope_of(r.name, KUBERNETES_PROVIDER)
            if scope is None:
                raise ValueError(f"Kubernetes provider {r.urn} is no cluster's (gke_ai_batch.domain.naming.scoped)")
            scopes[r.urn] = scope
    by_cluster: dict[str, list[dict[str, Any]]] = {scope: [] for scope in scopes.values()}
    for r in manifest_registrations(recording):
        # Without an explicit provider an object goes wherever the ambient kubeconfig points.
        provider = r.options.get("provider")
        if provider not in scopes:
            raise ValueError(f"{r.urn} is applied by no cluster's Kubernetes provider ({provider or 'the default'})")
        by_cluster[scopes[provider]].append(r.inputs)
    return by_cluster


def program_manifests_by_cluster(recording: engine.Recording) -> dict[str, list[dict[str, Any]]]:
    """A program's Kubernetes objects in recording order, by the label of the cluster their
    provider reaches (gke_ai_batch/model/clusters.py partition: the stack program's naming scope,
    else the cluster's GKE name); {} for a program of one cluster (manifests.yaml says it all)."""
    from gke_ai_batch.model.clusters import partition

    from .policy import resources_of

    listed = {r.urn for r in manifest_registrations(recording)}
    groups = partition(resources_of(recording))
    return {label: [r.props for r in rs if r.urn in listed] for label, rs in groups.items() if label}


def output_files(result: Result) -> dict[str, str]:
    """Every file synth writes for a rendered stack, by name."""
    from . import output

    resources = [r.to_json() for r in result.recording.resources]
    # A program's Kubernetes providers are named as its author chose: its objects go by the
    # cluster each one's provider reaches (gke_ai_batch/model/clusters.py).
    by_cluster = manifests_by_cluster(result.recording) if result.program is None else program_manifests_by_cluster(result.recording)
    # One cluster: manifests.yaml says it all (and single-cluster outputs stay as they were).
    clusters = (
        {output.cluster_file(scope): _manifests_yaml(docs) for scope, docs in by_cluster.items()}
        if len(by_cluster) > 1
        else {}
    )
    return {
        "resources.json": json.dumps(resources, indent=2, sort_keys=True) + "\n",
        "manifests.yaml": _manifests_yaml(manifests(result.recording)),
        "outputs.json": json.dumps(result.recording.outputs, indent=2, sort_keys=True) + "\n",
        **result.extra_files,
        **clusters,
    }


def write_outputs(result: Result, out: Path) -> None:
    """Replace `out` with the rendered files, all or none (synth/output.py)."""
    from . import output

    with output.locked(Path(os.path.abspath(out))):
        output.write(Path(os.path.abspath(out)), output_files(result))
