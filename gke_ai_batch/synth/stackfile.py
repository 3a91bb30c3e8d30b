"""Stack files read as Pulumi reads them, refused where Pulumi would refuse them or read them
differently from what their author meant, and where synth cannot follow offline.

- Stack names: Pulumi's rule (at most 100 of letters, digits, '-', '_', '.'; pkg/backend/diy:
  "stack names are limited to 100 characters and may only contain alphanumeric, hyphens,
  underscores, or periods"), and not '.' or '..', which Pulumi allows but which would make
  synth's default output folder build/<stack> point outside build/.
- Top-level keys: those of Pulumi's ProjectStack (config, secretsprovider, encryptedkey,
  encryptionsalt, environment). Pulumi ignores others; a misspelt `confg:` would then mean
  "no config", so synth refuses them.
- Config keys are `<namespace>:<name>` (or the legacy `<namespace>:config:<name>`), as
  Pulumi's config.ParseKey requires ("configuration keys should be of the form
  `<namespace>:<name>`").
- `{secure: ...}` values are ciphertext that only `pulumi` can decrypt, with the stack's
  secrets provider. Keys this program reads (gke-ai-batch:*, gcp:project, gcp:region) are
  plain values, so a secure one is refused; a provider's secure key (gcp:credentials, say)
  reaches the program as a secret whose value is a placeholder: synth never sees the clear
  text and writes neither it nor the ciphertext anywhere.
- `environment:` imports Pulumi ESC environments, which only Pulumi Cloud can open: refused,
  with the reason, rather than rendered without the values it would bring.
- Scalars as yaml.v2 reads them, duplicate and non-string keys, unknown tags, sizes, depth and
  alias expansion: gke_ai_batch/synth/yamlread.py."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gke_ai_batch.config.errors import NAMESPACE, did_you_mean, join_path

from . import yamlread
from .diagnostics import Diagnostic

STACK_NAME_RX = re.compile(r"[A-Za-z0-9_.-]{1,100}", re.ASCII)
TOP_LEVEL_KEYS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")
# Config the program itself reads (__main__.py, gke_ai_batch/config): a secret there would be
# a placeholder in every name and label derived from it.
PROGRAM_KEYS = ("gcp:project", "gcp:region")
SECRET_PLACEHOLDER = "[secret]"


def stack_name_problem(name: str) -> str | None:
    if not STACK_NAME_RX.fullmatch(name):
        return (
            f"{name!r} is not a stack name: stack names are limited to 100 characters and may only "
            "contain alphanumeric, hyphens, underscores, or periods (Pulumi's rule)"
        )
    if name in (".", ".."):
        return f"{name!r} is not a stack name synth accepts: its output folder build/{name} would be outside build/"
    return None


class StackFileError(Exception):
    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.render() for d in diagnostics))


@dataclass(frozen=True)
class StackFile:
    path: Path
    stack: str

    @classmethod
    def locate(cls, root: Path, stack: str | None, config: Path | None) -> "StackFile":
        """stacks/Pulumi.<stack>.yaml for a stack name, or any file named Pulumi.<stack>.yaml."""
        if config is None:
            problem = stack_name_problem(stack or "")
            if problem:
                raise StackFileError([Diagnostic(problem, "usage")])
            path = root / "stacks" / f"Pulumi.{stack}.yaml"
            if not os.path.lexists(path):  # a folder, device or broken link is read, and refused, as a file
                known = existing_stacks(root / "stacks")
                raise StackFileError(
                    [
                        Diagnostic(
                            f"no stack {stack!r} (no {display_path(path)}){did_you_mean(stack, known)}; "
                            f"stacks: {', '.join(known) or 'none'}",
                            "usage",
                        )
                    ]
                )
            return cls(path, stack)
        # Whether the file is there first: a path that names nothing is a typo in the path,
        # whatever its name.
        if not os.path.lexists(config):
            raise StackFileError([Diagnostic("no such stack file", "usage", file=str(config))])
        stack = stack_of(config)
        if stack is None:
            raise StackFileError([Diagnostic("stack files are named Pulumi.<stack>.yaml", "usage", file=str(config))])
        problem = stack_name_problem(stack)
        if problem:
            raise StackFileError([Diagnostic(problem, "usage", file=str(config))])
        return cls(config, stack)

    def display(self) -> str:
        return display_path(self.path)


def stack_of(path: Path) -> str | None:
    """The stack a file named Pulumi.<stack>.yaml is for; None for any other name."""
    name = path.name
    if not (name.startswith("Pulumi.") and name.endswith(".yaml")) or len(name) <= len("Pulumi..yaml"):
        return None
    return name[len("Pulumi.") : -len(".yaml")]


def stack_argument(root: Path, arg: str) -> tuple[str, Path | None]:
    """A command-line STACK: a stack name, or a path to a stack file (as `--config` takes it)
    when it is no stack's name and reads as a path: it has a '/', or ends in .yaml or .yml
    (`stacks/Pulumi.dev.yaml`, `Pulumi.dev.yaml`). (stack, None) or (stack, path)."""
    if os.path.lexists(root / "stacks" / f"Pulumi.{arg}.yaml"):
        return arg, None
    if "/" in arg or os.sep in arg or arg.endswith((".yaml", ".yml")):
        path = Path(arg)
        if path.name == arg and not os.path.lexists(path) and os.path.lexists(root / "stacks" / arg):
            path = root / "stacks" / arg  # a stack file's name alone: the one in stacks/
        return stack_of(path) or path.name, path
    return arg, None


def existing_stacks(stacks_dir: Path) -> list[str]:
    try:
        names = [p.name[len("Pulumi.") : -len(".yaml")] for p in stacks_dir.glob("Pulumi.*.yaml")]
    except OSError:
        return []
    return sorted(n for n in names if stack_name_problem(n) is None)


def display_path(path: Path) -> str:
    """`path` relative to the working folder when it is under it, as diagnostics show files."""
    try:
        return str(Path(os.path.realpath(path)).relative_to(Path.cwd()))
    except (ValueError, OSError):
        return str(path)


@dataclass
class StackConfig:
    """What the engine would hand the program: every key as text (structured values as JSON),
    the keys that are secrets, and where each key path is written in the file."""

    values: dict[str, str] = field(default_factory=dict)
    secret_keys: list[str] = field(default_factory=list)
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)


def read(stack_file: StackFile, *, any_secret: bool = False, project: str = NAMESPACE) -> StackConfig:
    """The stack's config, or StackFileError listing every problem in the file at once.
    `any_secret`: a program other than this project's (`--program`), whose keys synth does not
    know: every secure value reaches it masked, none is refused. `project`: the program's
    project, whose name is the namespace a key without one is told to take."""
    file = stack_file.display()
    try:
        doc = yamlread.load(yamlread.decode(yamlread.read_bytes(stack_file.path)), _format)
    except yamlread.YamlError as exc:
        raise StackFileError([replace(p, file=file) for p in exc.problems]) from None
    positions = {_format(path): at for path, at in doc.positions.items() if path}
    problems: list[Diagnostic] = [replace(p, file=file) for p in doc.problems]

    def refuse(path: tuple, rule: str, message: str) -> None:
        at = doc.positions.get(path)
        problems.append(Diagnostic(message, rule, _format(path) or None, file, *(at or (None, None))))

    data = doc.data
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise StackFileError([Diagnostic("not a stack file: expected a mapping with a config key", "pulumi.stack-file", file=file, line=1, column=1)])
    unknown = [key for key in data if key not in TOP_LEVEL_KEYS]
    config_keys = [key for key in unknown if isinstance(key, str) and ":" in key]
    if config_keys and "config" not in data:
        # Config written at the top (the `config:` line forgotten): one hint, not one per key.
        refuse(
            (config_keys[0],),
            "pulumi.stack-file",
            f"{len(config_keys)} config key{'s' if len(config_keys) > 1 else ''} ({', '.join(map(repr, config_keys[:3]))}"
            f"{', ...' if len(config_keys) > 3 else ''}) at the top level: a stack file holds them under `config:`; "
            "add a line `config:` above them and indent them below it",
        )
        unknown = [key for key in unknown if key not in config_keys]
    for key in unknown:
        refuse((key,), "pulumi.stack-file", f"unknown top-level key {key!r}; a stack file has {', '.join(TOP_LEVEL_KEYS)}")
    for key in ("secretsprovider", "encryptedkey", "encryptionsalt"):
        if isinstance(data.get(key), (dict, list)):
            # Strings in Pulumi's ProjectStack: yaml.v2 cannot unmarshal a list or a mapping into one.
            refuse((key,), "pulumi.stack-file", f"{key} must be a string, not a {'mapping' if isinstance(data[key], dict) else 'list'}")
    if data.get("environment") not in (None, []):  # an empty list imports nothing
        refuse(
            ("environment",),
            "pulumi.environment",
            "imports Pulumi ESC environments, which synth cannot open offline (only Pulumi Cloud resolves them): "
            "put the values this stack needs under config: to render it, or preview it with `pulumi preview`",
        )
    config = data.get("config")
    if config is None:
        config = {}
    if not isinstance(config, dict):
        refuse(("config",), "pulumi.stack-file", "config must be a mapping of <namespace>:<name> keys to values")
        config = {}

    result = StackConfig(positions=positions)
    seen: dict[str, str] = {}
    for raw_key, value in config.items():
        key = _parse_key(raw_key)
        if key is None:
            refuse(
                ("config", raw_key),
                "pulumi.key",
                f"could not parse {raw_key!r} as a configuration key (configuration keys should be of the form "
                f"`<namespace>:<name>`, e.g. {project}:{raw_key.split(':')[-1] or 'cluster'})",
            )
            continue
        if key in seen:
            refuse(("config", raw_key), "yaml.duplicate-key", f"{raw_key!r} sets {key!r} again (also set as {seen[key]!r})")
            continue
        seen[key] = raw_key
        if key != raw_key:
            _rekey(result.positions, _format(("config", raw_key)), key)
        secure = list(_secure_paths(value, ()))
        if secure:
            if not any_secret and (key.startswith(f"{NAMESPACE}:") or key in PROGRAM_KEYS):
                for sub in secure:
                    refuse(
                        ("config", raw_key, *sub),
                        "pulumi.secure",
                        "is a secure (encrypted) value, which synth cannot decrypt and this program does not "
                        "expect: no key it reads is a secret. Set it in clear (`pulumi config set` without --secret)",
                    )
                continue
            value = _mask_secure(value)
            result.secret_keys.append(key)
        result.values[key] = value if isinstance(value, str) else json.dumps(value)
    if problems:
        raise StackFileError(sorted(problems, key=lambda d: (d.line or 0, d.column or 0)))
    return result


def _parse_key(key: str) -> str | None:
    """`ns:name`, or the legacy `ns:config:name` (Pulumi's config.ParseKey), normalised to `ns:name`."""
    parts = key.split(":")
    if len(parts) == 2 and all(parts):
        return key
    if len(parts) == 3 and parts[1] == "config" and parts[0] and parts[2]:
        return f"{parts[0]}:{parts[2]}"
    return None


def _secure_paths(value: Any, at: tuple):
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            yield at
            return
        for k, v in value.items():
            yield from _secure_paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _secure_paths(v, (*at, i))


def _mask_secure(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER
        return {k: _mask_secure(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_secure(v) for v in value]
    return value


def _format(path: tuple) -> str:
    """A document path as the key path diagnostics name: config entries by their config key."""
    if len(path) > 1 and path[0] == "config" and isinstance(path[1], str):
        return join_path(path[1], path[2:])
    return yamlread.key_path(path)


def _rekey(positions: dict[str, tuple[int, int]], old: str, new: str) -> None:
    for path in [p for p in positions if p == old or p.startswith((f"{old}.", f"{old}["))]:
        positions[new + path[len(old) :]] = positions[path]

