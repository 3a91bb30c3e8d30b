"""Offline synth: run the real program for a stack under a recording mock engine and write
what it would create, for review without a cloud account or a cluster."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import engine

EXIT_OK = 0
EXIT_INVALID_CONFIG = 2
EXIT_POLICY_VIOLATION = 3
MOCK_ENDPOINT = "203.0.113.10"  # TEST-NET-3: no real control plane
MOCK_CA = "bW9jay1jYQ=="  # base64("mock-ca")
# libyaml's safe loader when PyYAML has it: stack files of big platforms parse several times faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Kinds synth lists in manifests.yaml: objects the program declares itself, not the
# provider or the Helm releases (whose objects come from the charts).
_NOT_MANIFESTS = ("kubernetes:helm.sh/",)


@dataclass(frozen=True)
class StackFile:
    path: Path
    stack: str

    @classmethod
    def locate(cls, root: Path, stack: str | None, config: Path | None) -> "StackFile":
        path = config if config is not None else root / "stacks" / f"Pulumi.{stack}.yaml"
        name = path.name
        if not (name.startswith("Pulumi.") and name.endswith(".yaml")) or name.count(".") < 2:
            raise ValueError(f"{path}: stack files are named Pulumi.<stack>.yaml")
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such stack file")
        return cls(path, name[len("Pulumi.") : -len(".yaml")])

    def display(self) -> str:
        try:
            return str(self.path.resolve().relative_to(Path.cwd()))
        except ValueError:
            return str(self.path)


@dataclass
class Result:
    stack: str
    recording: engine.Recording | None = None
    plan: Any = None
    admission: Any = None  # components.plan.admission.Admission: the model's verdicts
    error: str | None = None
    exit_code: int = EXIT_OK
    violations: list[dict[str, Any]] = field(default_factory=list)
    extra_files: dict[str, str] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        from .summary import summary

        return summary(self.stack, self.plan)


def project_name(root: Path) -> str:
    return yaml.load((root / "Pulumi.yaml").read_text(), Loader=_LOADER)["name"]


def stack_config(stack_file: StackFile) -> dict[str, str]:
    """The stack file's config as the engine hands it to a program: structured values as JSON."""
    data = yaml.load(stack_file.path.read_text(), Loader=_LOADER) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{stack_file.display()}: not a stack file (expected a mapping with a config key)")
    config = data.get("config") or {}
    if not isinstance(config, dict):
        raise ValueError(f"{stack_file.display()}: config must be a mapping of keys to values")
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def outputs_for(project: str):
    """What the cloud would report back for the few outputs the program reads."""

    def outputs(type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        if type_ == "gcp:container/cluster:Cluster":
            return {"endpoint": MOCK_ENDPOINT, "masterAuth": {"clusterCaCertificate": MOCK_CA}}
        if type_ == "gcp:serviceaccount/account:Account":
            return {"email": f"{inputs['accountId']}@{project}.iam.gserviceaccount.com"}
        return {}

    return outputs


def synthesize(root: Path, stack_file: StackFile, stacks_dir: Path | None = None) -> Result:
    """`stacks_dir` (default root/stacks): a stack file in it is checked against the others
    there for collisions in GCP (synth/crossstack.py)."""
    # Policy and report run over the whole recording too: keep the collector off for them.
    with engine.lean_runtime():
        return _synthesize(root, stack_file, stacks_dir or root / "stacks")


def _synthesize(root: Path, stack_file: StackFile, stacks_dir: Path) -> Result:
    from components.config import ConfigError

    from . import crossstack

    result = Result(stack_file.stack)
    try:
        config = stack_config(stack_file)
    except (ValueError, yaml.YAMLError) as exc:
        result.error, result.exit_code = f"{stack_file.display()}: {exc}", EXIT_INVALID_CONFIG
        return result
    if stack_file.path.resolve().parent == stacks_dir.resolve():
        clashes = crossstack.collisions(stack_file.path, stacks_dir, _display)
        if clashes:
            result.error = ConfigError(clashes, stack_file.display()).render()
            result.exit_code = EXIT_INVALID_CONFIG
            return result
    gcp_project = config.get("gcp:project", "")
    try:
        result.recording = engine.run(
            root / "__main__.py",
            project=project_name(root),
            stack=stack_file.stack,
            config=config,
            outputs_for=outputs_for(gcp_project),
        )
    except ConfigError as exc:
        result.error = ConfigError(exc.problems, stack_file.display()).render()
        result.exit_code = EXIT_INVALID_CONFIG
        return result
    result.plan = result.recording.program["plan"]
    result.admission = result.recording.program["admission"]

    from . import policy, report

    result.violations = policy.evaluate(result)
    if any(v["enforcement"] == "mandatory" for v in result.violations):
        result.exit_code = EXIT_POLICY_VIOLATION
    result.extra_files["policy.json"] = json.dumps(result.violations, indent=2, sort_keys=True) + "\n"
    result.extra_files["report.md"] = report.render(result, result.violations)
    return result


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def manifests(recording: engine.Recording) -> list[dict[str, Any]]:
    return [
        r.inputs
        for r in recording.resources
        if r.type.startswith("kubernetes:") and not r.type.startswith(_NOT_MANIFESTS)
    ]


def write_outputs(result: Result, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    resources = [r.to_json() for r in result.recording.resources]
    (out / "resources.json").write_text(json.dumps(resources, indent=2, sort_keys=True) + "\n")
    docs = manifests(result.recording)
    (out / "manifests.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=True, default_flow_style=False) if docs else "")
    (out / "outputs.json").write_text(json.dumps(result.recording.outputs, indent=2, sort_keys=True) + "\n")
    for name, text in result.extra_files.items():
        (out / name).write_text(text)
