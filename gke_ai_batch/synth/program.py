"""`python -m synth --program DIR --config FILE`: render any Pulumi Python program that uses the
library, not only this project's stack program.

DIR is a Pulumi project: DIR/Pulumi.yaml names it (`name`), says its runtime is Python and
where its program is (`main`, default DIR itself). synth runs that program as Pulumi's Python
language host does (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec: the program
folder run with `runpy.run_path(PROGRAM, run_name='__main__')`, so it is on sys.path; the
working folder the project's, `--pwd`; `sys.argv` the program alone), with the config of FILE
(a Pulumi.<stack>.yaml), under the recording engine; then the policy pack, the cost table and
the report run over what it registered, as for a stack.

The program has no stack file of this project, so there is no plan: what the report needs from
one is derived from the recorded resources or said to need a stack file (gke_ai_batch/synth/report/recorded.py),
and the admission model's verdicts come from the recorded resources (admission_from_recording)."""

from __future__ import annotations

import json
import os
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import Result, engine, outputs_for, yamlread
from .diagnostics import Diagnostic
from .stackfile import STACK_NAME_RX, StackFile, StackFileError, display_path

PROJECT_FILE = "Pulumi.yaml"
RUNTIME = "python"
# Pulumi's project-name rule (pulumi/pulumi sdk/go/common/tokens, ValidateProjectName: "project
# names may only contain alphanumerics, hyphens, underscores, and periods", at most 100): the
# same characters and length as a stack name.
PROJECT_NAME_RX = STACK_NAME_RX


@dataclass(frozen=True)
class Project:
    root: Path
    """DIR: where Pulumi.yaml is, and the folder the program runs in."""
    name: str
    """The project's name: the default config namespace and the URNs' project part."""
    program: Path
    """What the language host runs: DIR/<main>, a folder with a __main__.py or a .py file."""
    defaults: dict[str, str] = field(default_factory=dict)
    """Pulumi.yaml's project-level config (`config:`, Pulumi 3.44): each key's value or default,
    by its full key, as the language host hands it to the program; the stack file's win."""

    def display(self) -> str:
        return display_path(self.root)


class ProgramFailed(Exception):
    """The program raised something other than the library's ConfigError or ArgsError: its bug
    or its environment's, reported in one line (exit 70) with the program's own traceback
    under --debug."""

    def __init__(self, project: Project, error: BaseException):
        self.project, self.error = project, error
        text = " ".join(str(error).split())
        super().__init__(f"{type(error).__name__}: {text[:300]}{'…' if len(text) > 300 else ''}")

    def diagnostic(self) -> Diagnostic:
        at = _program_line(self.error, self.project)
        return Diagnostic(
            f"the program failed: {self} (run again with --debug for its traceback)",
            "program",
            file=at[0] if at else self.project.display(),
            line=at[1] if at else None,
        )

    def print_traceback(self) -> None:
        traceback.print_exception(type(self.error), self.error, self.error.__traceback__)


def read_project(directory: Path) -> Project:
    """DIR's Pulumi.yaml, or StackFileError listing every problem at once (exit 2)."""
    if not os.path.isdir(directory):
        why = "no such folder" if not os.path.lexists(directory) else "not a folder"
        raise StackFileError([Diagnostic(f"{why}: --program takes a Pulumi project folder", "usage", "--program", str(directory))])
    path = directory / PROJECT_FILE
    file = display_path(path)
    if not os.path.lexists(path):
        raise StackFileError([Diagnostic(f"no {PROJECT_FILE}: --program takes a Pulumi project folder", "usage", "--program", str(directory))])
    try:
        doc = yamlread.load(yamlread.decode(yamlread.read_bytes(path)), _dotted)
    except yamlread.YamlError as exc:
        raise StackFileError([replace(p, file=file) for p in exc.problems]) from None
    problems = [replace(p, file=file) for p in doc.problems]
    data = doc.data if isinstance(doc.data, dict) else None
    if data is None:
        raise StackFileError([Diagnostic("not a Pulumi project file: expected a mapping with name and runtime", "pulumi.project", file=file, line=1, column=1)])

    def refuse(key: tuple, message: str) -> None:
        problems.append(_placed(message, "pulumi.project", key, file, doc.positions.get(key) or doc.positions.get(key[:1])))

    name = data.get("name")
    if name is None:
        refuse(("name",), "required: the project's name")
    elif not isinstance(name, str) or not name:
        refuse(("name",), f"must be a non-empty string, not {name!r}")
    elif not PROJECT_NAME_RX.fullmatch(name):
        refuse(("name",), f"{name!r}: project names are limited to 100 characters and may only contain alphanumerics, "
                          "hyphens, underscores, and periods (Pulumi's rule)")
    # `runtime: python` or `runtime: {name: python, options: ...}` (Pulumi's project schema).
    runtime = data.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime is None:
        refuse(("runtime",), f"required: the program's runtime; synth runs `{RUNTIME}` programs")
    elif isinstance(runtime, dict) and runtime_name is None:
        refuse(("runtime", "name"), f"required: the runtime's name; synth runs `{RUNTIME}` programs")
    elif runtime_name != RUNTIME:
        refuse(("runtime",), f"{runtime_name!r}: synth runs Python programs only (runtime `{RUNTIME}`)")
    main = data.get("main", ".")
    program = directory
    if not isinstance(main, str) or not main:
        refuse(("main",), "must be a path (a string) relative to the project folder")
    else:
        program = directory / main
        if os.path.isdir(program):
            if not os.path.isfile(program / "__main__.py"):
                refuse(("main",) if "main" in data else (), f"{display_path(program)} has no __main__.py to run")
        elif not os.path.isfile(program):
            refuse(("main",), f"{main!r} is no file or folder of the project")
    defaults = _project_config(data.get("config"), name if isinstance(name, str) else "", refuse)
    if problems:
        raise StackFileError(sorted(problems, key=lambda d: (d.line or 0, d.column or 0)))
    # Absolute: the program runs in the project's folder (cwd), wherever synth was started.
    return Project(directory, name, Path(os.path.abspath(program)), defaults)


def _project_config(config: Any, project: str, refuse) -> dict[str, str]:
    """Pulumi.yaml's `config:` (pulumi.com/docs/iac/concepts/projects/project-file, "config
    options"): a key is `<namespace>:<name>` or a name in the project's namespace, and its value
    is the value itself or a mapping with `default` (a declared key) or `value`; a stack file's
    value overrides it. A secret (`secret: true`) has no value here."""
    if config is None:
        return {}
    if not isinstance(config, dict):
        refuse(("config",), "must be a mapping of config keys to values or declarations")
        return {}
    out = {}
    for key, value in config.items():
        if isinstance(value, dict):
            value = value.get("value", value.get("default"))
        if value is None:
            continue
        full = key if ":" in str(key) else f"{project}:{key}"
        out[full] = value if isinstance(value, str) else json.dumps(value)
    return out


def synthesize_program(project: Project, stack_file: StackFile) -> Result:
    """Run the project's program with the stack file's config and judge what it registered."""
    with engine.lean_runtime():
        return _synthesize(project, stack_file)


def _synthesize(project: Project, stack_file: StackFile) -> Result:
    from gke_ai_batch.config import ConfigError
    from gke_ai_batch.config.errors import ArgsError
    from pulumi.config import ConfigMissingError, ConfigTypeError

    from . import diagnostics, judge, stackfile

    result = Result(stack_file.stack, program=project.display())
    try:
        # Any key may be a secret: the program's own keys are not synth's to know.
        config = stackfile.read(stack_file, any_secret=True, project=project.name)
    except StackFileError as exc:
        return result.refuse(exc.diagnostics)
    try:
        # The program's output goes to stderr: stdout is synth's (its summary, or --json's document).
        with engine.stdout_to_stderr():
            result.recording = engine.run(
                project.program,
                project=project.name,
                stack=stack_file.stack,
                config={**project.defaults, **config.values},
                secret_keys=config.secret_keys,
                outputs_for=outputs_for(config.values.get("gcp:project", "")),
                cwd=Path(os.path.abspath(project.root)),
            )
    except ArgsError as exc:
        result.recording = None
        at = _program_line(exc, project)
        return result.refuse([
            Diagnostic(f.message, f.rule, f"{exc.component}: {f.where}", *(at or (project.display(), None)))
            for f in exc.findings
        ])
    except ConfigError as exc:
        # The library's stack-config rules, run by the program on this stack file's keys.
        result.recording = None
        rule = getattr(exc, "rule", "config")
        return result.refuse(diagnostics.from_problems(exc.findings, rule=rule, file=stack_file.display(), positions=config.positions))
    except (ConfigMissingError, ConfigTypeError) as exc:
        # The stack file lacks a key the program requires, or holds one of the wrong type: its
        # config's fault, as `pulumi up` says (the SDK's RunError: message only), so exit 2.
        result.recording = None
        at = _program_line(exc, project)
        return result.refuse([Diagnostic(" ".join(str(exc).split()), "config", exc.key, *(at or (project.display(), None)))])
    except engine.YamlRefused as exc:
        # YAML the program hands pulumi_kubernetes, which its provider would refuse: said at the
        # file it came from, or at the program when the program built the text itself.
        result.recording = None
        source = engine.yaml_source(project.root, exc.text)
        where = (display_path(source), exc.line) if source else (project.display(), None)
        return result.refuse([Diagnostic(str(exc), exc.rule, None, *where)])
    except engine.OfflineUnsupported as exc:
        # Valid under `pulumi up`, but not renderable offline: a usage limit, said at its line.
        result.recording = None
        at = _program_line(exc, project)
        return result.refuse([Diagnostic(str(exc), "usage", None, *(at or (project.display(), None)))])
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the program's failure (GeneratorExit too), told as such
        raise ProgramFailed(project, exc) from exc
    result.admission = admission_from_recording(result.recording)
    return judge(result)


def admission_from_recording(recording: engine.Recording) -> Any:
    """The admission model's verdicts on what a program registered (gke_ai_batch/model/recorded.py:
    the judge the stack program and the policy pack's kueue-admissible run too): one Judgement
    for a program of one cluster, {cluster label: Judgement} for one of several, each cluster
    judged alone on the objects its provider applies and its own node pools
    (gke_ai_batch/model/clusters.py); None when the program holds values known only after deploy."""
    from gke_ai_batch.model.clusters import partition
    from gke_ai_batch.model.recorded import Judgement, unknowns

    from .policy import resources_of

    resources = resources_of(recording)
    if unknowns(resources):
        return None
    clusters = {label: mine for label, mine in partition(resources).items() if label}
    if not clusters:
        return Judgement(resources)
    return {label: Judgement(mine) for label, mine in clusters.items()}


def _program_line(error: BaseException, project: Project) -> tuple[str, int] | None:
    """(file, line) of the innermost frame of the error's traceback that is in the project's
    folder: the program's line that built the refused component or raised."""
    root = os.path.realpath(project.root)
    found = None
    tb = error.__traceback__
    while tb is not None:
        filename = os.path.realpath(tb.tb_frame.f_code.co_filename)
        if filename.startswith(root + os.sep):
            found = (display_path(Path(filename)), tb.tb_lineno)
        tb = tb.tb_next
    return found


def _dotted(path: tuple) -> str:
    """A Pulumi.yaml key path as its diagnostics name it: runtime.options."""
    return ".".join(str(p) for p in path)


def _placed(message: str, rule: str, path: tuple, file: str, at) -> Diagnostic:
    line, column = at if at else (None, None)
    return Diagnostic(message, rule, _dotted(path) or None, file, line, column)
