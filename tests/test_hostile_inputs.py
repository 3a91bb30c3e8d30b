"""synth against hostile and careless input: every case ends in a message and a documented
exit code, never a traceback, a signal, a hang or a changed file where nothing may change.

Each case runs `python -m synth`'s main() in this process (the few that could take the
process down run in a subprocess with a memory limit and a timeout; runs killed or racing
each other, in child processes forked from this one). Before each failing
case, --out holds a previous output; afterwards it must be byte for byte what it was, and
nothing else in the case's folder may have changed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gke_ai_batch.synth import output
from gke_ai_batch.synth.__main__ import main

ROOT = Path(__file__).resolve().parent.parent
DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()


def snapshot(directory: Path) -> dict[str, bytes | str]:
    """Every entry under `directory`: files by content, folders and links by kind."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(directory))
            if path.is_symlink():
                out[rel] = f"link:{os.readlink(path)}"
            elif path.is_file():
                out[rel] = path.read_bytes()
            else:
                out[rel] = "dir" if path.is_dir() else "other"
    return out


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
    return code, captured.out, captured.err


@pytest.fixture
def case(tmp_path, capsys):
    """A folder with a previous synth output in out/; `refused(text, words)` writes `text` as a
    stack file, runs synth on it and checks exit 2, the words, and that nothing changed."""
    out = tmp_path / "out"
    output.write(out, {"report.md": "previous output\n"})

    class Case:
        dir = tmp_path

        def stack(self, text: str | bytes, name: str = "Pulumi.hostile.yaml") -> Path:
            path = tmp_path / name
            path.write_bytes(text if isinstance(text, bytes) else text.encode())
            return path

        def refused(self, text: str | bytes, *words: str, code: int = 2, argv: tuple = ()) -> str:
            path = self.stack(text)
            before = snapshot(tmp_path)
            got, stdout, stderr = run(capsys, "--config", path, "--out", out, *argv)
            assert got == code, stderr
            for w in words:
                assert w in stderr, stderr
            assert stdout == ""
            assert snapshot(tmp_path) == before, "a refused stack changed files"
            return stderr

    return Case()


# -- YAML: sizes, depth, aliases ---------------------------------------------------------------


def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]")
    return "config:\n" + textwrap.indent("\n".join(lines), "  ") + "\n"


def test_exponential_aliases_are_refused_at_the_node_budget(case):
    case.refused(_laughs(), "values once aliases are expanded")


def test_deep_nesting_is_refused_at_the_depth_limit(case):
    case.refused("config:\n  gke-ai-batch:teams: " + "[" * 50_000 + "]" * 50_000 + "\n", "nested more than 64 levels")


def test_a_file_beyond_the_size_limit_is_not_read(case):
    case.refused("config:\n" + "  # padding\n" * 300_000, "larger than 2 MiB")


@pytest.mark.parametrize(
    "value, words",
    [
        ("1e30", "2^53 or beyond"),
        ("99999999999999999999", "outside the 64-bit integer range"),
        (".nan", "not a finite number"),
        (".inf", "not a finite number"),
        ("0755", "octal"),
        ("100000000", "less than or equal to 15000"),
        ("2.0", "valid integer, got 2.0"),
        ("yes", "valid integer, got True"),
    ],
)
def test_numbers_that_would_not_survive_or_cost_without_bound(case, value, words):
    case.refused(DEV.replace("slices: 2\n      capacity: spot", f"slices: {value}\n      capacity: spot"), words)


# -- YAML: tags, keys, documents ----------------------------------------------------------------


@pytest.mark.parametrize(
    "snippet, words",
    [
        ("gke-ai-batch:jobset: !!binary aGVsbG8=", "unsupported YAML tag !!binary"),
        ("gke-ai-batch:jobset: !!set {a, b}", "unsupported YAML tag !!set"),
        ("gke-ai-batch:jobset: !!timestamp 2024-01-01", "unsupported YAML tag !!timestamp"),
        ("gke-ai-batch:jobset: !!python/object:os.system {}", "unsupported YAML tag !!python/object:os.system"),
        ("gke-ai-batch:jobset: !custom x", "unsupported YAML tag !custom"),
        ("1: one", "mapping key '1' is read as the number 1"),
        ("~: nothing", "mapping key '~' is read as null"),
        ("on: true", "mapping key 'on' is read as the boolean true"),
        ("? [a, b]\n  : 1", "a mapping key must be a string"),
        ("gke-ai-batch:kueue: {<<: {fairSharing: true}}", "merge keys (<<) are not supported"),
        ("gke-ai-batch:kueue: {fairSharing: true, fairSharing: false}", "key 'fairSharing' is already defined at line"),
        ("gke-ai-batch:production: false", "key 'gke-ai-batch:production' is already defined at line"),
        # An alias of a refused key, and a problem in the value of a refused or repeated key.
        ("&k 1: x\ngcp:zone: *k", "mapping key '1' is read as the number 1"),
        ("gcp:zone: a\ngcp:zone: !!binary aGk=", "key 'gcp:zone' is already defined at line"),
        ("1: !!binary aGk=", "unsupported YAML tag !!binary"),
        # Integers of thousands of digits in other bases than 10 (int() refuses beyond 4,300).
        ("gke-ai-batch:jobset: 0x" + "f" * 5000, "is outside the 64-bit integer range"),
        ("gke-ai-batch:jobset: 0b" + "1" * 20000, "is outside the 64-bit integer range"),
        ("gke-ai-batch:jobset: 0" + "7" * 5000, "is outside the 64-bit integer range"),
    ],
)
def test_yaml_pulumi_would_refuse_or_read_otherwise(case, snippet, words):
    text = DEV.replace("config:\n", "config:\n  gke-ai-batch:production: false\n", 1) if "production" in snippet else DEV
    stderr = case.refused(text.replace("config:\n", "config:\n" + textwrap.indent(snippet, "  ") + "\n", 1), words)
    assert ":" in stderr.split(": ", 1)[0], "the problem is placed at a line"


def test_a_yaml_version_pulumi_does_not_read_is_refused(case):
    # yaml.v2 accepts %YAML 1.1 only; libyaml also reads 1.2.
    case.refused("%YAML 1.2\n---\n" + DEV, "accepts only %YAML 1.1")


def test_lines_are_counted_as_editors_count_them(case):
    # YAML also breaks lines at NEL, LS and PS (and folds them in quoted text); editors, grep
    # and git do not, and lone CRs and CRLFs are one break each.
    bad = DEV.replace("topology: 2x4}\n      slices: 2", "topology: 4x5}\n      slices: 2", 1)
    line = bad.splitlines().index("      tpu: {version: v5e, topology: 4x5}") + 1
    for text in (
        bad.replace("config:", 'secretsprovider: "passphrase\u2028\u0085\u2029"\nconfig:'),
        bad.replace("\n", "\r\n"),
        bad.replace("\n", "\r"),
    ):
        shift = 1 if "secretsprovider" in text else 0
        stderr = case.refused(text, "'4x5' is not a v5e topology")
        assert f"Pulumi.hostile.yaml:{line + shift}:27:" in stderr, stderr


def test_several_documents_and_syntax_errors_name_the_line(case):
    stderr = case.refused(DEV + "---\nconfig: {}\n", "one YAML document")
    assert f"{DEV.count(chr(10)) + 1}:1:" in stderr
    stderr = case.refused("config:\n  gcp:project: [a, b\n  gcp:region: x\n", "invalid YAML")
    assert "Pulumi.hostile.yaml:3:" in stderr


@pytest.mark.parametrize("text", ["", "null\n", "[1, 2]\n", "just a string\n", "config: [1]\n"])
def test_files_that_are_no_stack_config(case, text):
    case.refused(text, "")


def test_all_problems_of_a_file_at_once_with_positions(case):
    text = DEV.replace("config:\n", "config:\n  cluster: {}\n  1: x\n  gke-ai-batch:jobset: !!binary aGk=\n", 1)
    stderr = case.refused(text)
    lines = stderr.splitlines()
    assert len(lines) == 4 and lines[-1].endswith("3 problems; nothing written"), stderr
    first = DEV.splitlines().index("config:") + 2
    assert [line.split(": ", 1)[0].rsplit(":", 2)[1:] for line in lines[:3]] == [
        [str(first), "3"],
        [str(first + 1), "3"],
        [str(first + 2), "24"],
    ]


# -- encodings and files ----------------------------------------------------------------------


def test_utf16_and_bom_stacks_render_like_utf8(case, capsys):
    for i, raw in enumerate([DEV.encode("utf-16"), b"\xef\xbb\xbf" + DEV.encode()]):
        path = case.stack(raw, f"Pulumi.enc{i}.yaml")
        code, stdout, stderr = run(capsys, "--config", path, "--out", case.dir / f"enc{i}", "--quiet")
        assert code == 0, stderr
    assert (case.dir / "enc0" / "resources.json").read_text().replace("enc0", "enc1") == (
        case.dir / "enc1" / "resources.json"
    ).read_text()


@pytest.mark.parametrize(
    "raw, words",
    [
        (b"config:\n  gcp:project: \xff\xfe\xfa\n", "not UTF-8 text"),
        (b"config:\n  gcp:project: caf\xe9\n", "not UTF-8 text"),
        (b"\x00\x01\x02\x03binary", "NUL bytes"),
        (b"config:\n  gcp:project: \x07bell\n", "invalid YAML"),
    ],
)
def test_binary_and_wrong_encodings(case, raw, words):
    case.refused(raw, words)


def test_a_fifo_a_device_and_a_folder_are_not_read(case, capsys):
    fifo = case.dir / "Pulumi.fifo.yaml"
    os.mkfifo(fifo)
    device = case.dir / "Pulumi.dev0.yaml"
    device.symlink_to("/dev/zero")
    folder = case.dir / "Pulumi.folder.yaml"
    folder.mkdir()
    for path in (fifo, device, folder):
        code, _, stderr = run(capsys, "--config", path, "--out", case.dir / "x")
        assert code == 2 and "not a regular file" in stderr, stderr
    assert not (case.dir / "x").exists()


# -- Pulumi's config rules ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, words",
    [
        (("  gke-ai-batch:cluster:", "  cluster:"), "configuration keys should be of the form `<namespace>:<name>`"),
        (("  gcp:region: us-central1", "  gcp:config:region: us-central1\n  gcp:region: us-central1"), "sets 'gcp:region' again"),
        (("  gke-ai-batch:cluster:", "  a:b:c:\n  gke-ai-batch:cluster:"), "could not parse 'a:b:c'"),
        (("config:", "confg: {}\nconfig:"), "unknown top-level key 'confg'"),
        (("config:", "environment:\n  - acme/ml-dev\nconfig:"), "Pulumi ESC environments, which synth cannot open offline"),
        (("      maxNodes: 2", "      maxNodes: {secure: AAABAGnotreallyciphertext}"), "is a secure (encrypted) value"),
        (("  gcp:project: acme-ml-dev", "  gcp:project: {secure: AAABAGnotreallyciphertext}"), "is a secure (encrypted) value"),
        (("  gcp:project: acme-ml-dev", "  gcp:project: acme_ml; rm -rf /"), "is not a Google Cloud project id"),
        # Messages about a secure value's YAML do not quote its ciphertext.
        (("  gcp:region:", "  gcp:credentials: {secure: !!int AAABAGnotreallyciphertext}\n  gcp:region:"), "is not a valid !!int"),
        (("      maxNodes: 2", "      maxNodes: {secure: !!float AAABAGnotreallyciphertext}"), "is not a valid !!float"),
        (("config:", "secretsprovider: [passphrase]\nconfig:"), "secretsprovider must be a string, not a list"),
        (("    releaseChannel: RAPID", "    releaseChannel: RAPID\n    name: ml-dev"), "already defined at line"),
    ],
)
def test_config_as_pulumi_reads_it(case, change, words):
    old, new = change
    assert old in DEV
    stderr = case.refused(DEV.replace(old, new, 1), words)
    assert "notreallyciphertext" not in stderr


def test_a_providers_secure_value_reaches_no_output(case, capsys):
    text = DEV.replace("  gcp:region:", "  gcp:credentials: {secure: AAABAGnotreallyciphertext}\n  gcp:region:", 1)
    path = case.stack(text)
    code, stdout, stderr = run(capsys, "--config", path, "--out", case.dir / "sec", "--json")
    assert code == 0, stderr
    written = b"".join(v for v in snapshot(case.dir / "sec").values() if isinstance(v, bytes))
    assert b"notreallyciphertext" not in written + stdout.encode() + stderr.encode()


def test_an_empty_environment_list_imports_nothing(case):
    from gke_ai_batch.synth import StackFile, stackfile

    path = case.stack("environment: []\n" + DEV)
    assert stackfile.read(StackFile(path, "hostile")).values["gcp:project"] == "acme-ml-dev"


def test_durations_beyond_go_are_refused(case):
    text = DEV.replace("config:\n", "config:\n  gke-ai-batch:kueue:\n    waitForPodsReady: {timeout: 999999999999999s}\n", 1)
    case.refused(text, "beyond Go's time.Duration")


# -- stack names and paths ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Pulumi...yaml", "Pulumi....yaml", "Pulumi.a b.yaml", "Pulumi.$(touch x).yaml", "Pulumi." + "a" * 101 + ".yaml", "stack.yaml", "Pulumi..yaml"])
def test_stack_file_names_pulumi_refuses(case, capsys, name):
    path = case.stack(DEV, name)
    before = snapshot(case.dir)
    code, _, stderr = run(capsys, "--config", path)
    assert code == 2 and ("stack name" in stderr or "named Pulumi.<stack>.yaml" in stderr), stderr
    assert snapshot(case.dir) == before


@pytest.mark.parametrize("stack", ["..", ".", "../../etc/passwd", "a/b", "nope"])
def test_stack_names_never_leave_the_stacks_folder(capsys, stack):
    before = snapshot(ROOT / "build") if (ROOT / "build").exists() else {}
    code, _, stderr = run(capsys, stack)
    assert code == 2, stderr
    # A STACK with a '/' is a path to a stack file (as --config): refused as one.
    assert ("stack name" in stderr) or ("stacks: batch-autopilot, dev" in stderr) or ("stack file" in stderr), stderr
    assert (snapshot(ROOT / "build") if (ROOT / "build").exists() else {}) == before


# -- where synth may write ---------------------------------------------------------------------


def test_out_that_is_not_a_synth_folder_is_refused(case, capsys, tmp_path):
    path = case.stack(DEV, "Pulumi.good.yaml")
    afile = tmp_path / "afile"
    afile.write_text("keep me\n")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("keep me\n")
    link = tmp_path / "link"
    link.symlink_to(notes)
    targets = {
        afile: "is a file",
        Path("/dev/null"): "is a device",
        notes: "entries synth did not write",
        link: "symbolic link",
        ROOT: "project folder",
        ROOT / "stacks": "holds Pulumi config",
        ROOT / "gke_ai_batch": "entries synth did not write",
        Path("/"): "file system root",
        tmp_path: "holds Pulumi config",
        afile / "sub": "cannot be written",
        tmp_path / "loop" / "sub": "cannot be written",
        tmp_path / "out": "now also holds my-notes.txt",
    }
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "out" / "my-notes.txt").write_text("keep me\n")
    repo_before = snapshot(ROOT / "stacks")
    for target, words in targets.items():
        before = snapshot(tmp_path)
        code, stdout, stderr = run(capsys, "--config", path, "--out", target)
        assert code == 2 and words in stderr, (target, stderr)
        assert snapshot(tmp_path) == before, target
    assert snapshot(ROOT / "stacks") == repo_before


def test_a_failed_write_leaves_the_previous_output(case, capsys, monkeypatch):
    path = case.stack(DEV, "Pulumi.good.yaml")
    out = case.dir / "good"
    assert run(capsys, "--config", path, "--out", out, "--quiet")[0] == 0
    before = snapshot(case.dir)
    calls = []

    def failing_fsync(fd):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.os, "fsync", failing_fsync)
    code, _, stderr = run(capsys, "--config", path, "--out", out)
    assert code == 2 and "No space left on device" in stderr
    assert snapshot(case.dir) == before, "the previous output changed, or a temporary folder was left"


def test_a_policy_violation_still_writes_and_exits_3(case, capsys, monkeypatch):
    import gke_ai_batch.synth.policy
    from gke_ai_batch import synth
    from gke_ai_batch.domain.findings import MANDATORY, Finding

    monkeypatch.setattr(synth.policy, "findings", lambda result: [Finding("p", "m", MANDATORY, urn="urn:pulumi:good::gke-ai-batch::t::x")])
    path = case.stack(DEV, "Pulumi.good.yaml")
    code, stdout, stderr = run(capsys, "--config", path, "--out", case.dir / "p3")
    assert code == 3 and "policy mandatory: p: x: m" in stderr
    assert (case.dir / "p3" / "resources.json").exists()


def test_a_held_lock_ends_in_exit_75_without_writing(case, capsys, monkeypatch):
    path = case.stack(DEV, "Pulumi.good.yaml")
    out = case.dir / "out"
    monkeypatch.setattr(output, "LOCK_WAIT_SECONDS", 0.2)
    with output.locked(out.absolute()):
        before = snapshot(case.dir)
        code, _, stderr = run(capsys, "--config", path, "--out", out)
    assert code == 75 and "locked by another synth" in stderr
    assert snapshot(case.dir) == before


def forked_main(argv: list[str], log: Path, before=None) -> int:
    """synth's main() in a child process forked from this one: a process of its own (its own
    SIGKILL, lock and writes), without a fresh interpreter's ~1.5 s of imports. `before` runs
    first, in the child only; the child's stdout and stderr go to `log`. Returns its pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:  # the child: it never returns into pytest
        sys.stdout = sys.stderr = open(log, "w")
        asyncio.set_event_loop(asyncio.new_event_loop())  # not the parent's: its selector is shared
        if before is not None:
            before()
        code = main(argv)
    except BaseException as exc:  # noqa: BLE001 - reported in the log, as a traceback would be
        print(f"Traceback: {exc!r}", file=sys.stderr)
    finally:
        sys.stderr.flush()
        os._exit(code)


def exit_code(pid: int, timeout: float = 120) -> int:
    """The child's exit code as subprocess reports it (-SIGNAL if a signal ended it)."""
    deadline = time.monotonic() + timeout
    while not (status := os.waitpid(pid, os.WNOHANG))[0]:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(f"the child was still running after {timeout} s")
        time.sleep(0.01)
    return os.waitstatus_to_exitcode(status[1])


def _kill_during_write(after_first: bool):
    def patch():
        real_rename = os.rename

        def rename(src, dst):
            real_rename(src, dst)
            if after_first or ".tmp-" in str(src):
                os.kill(os.getpid(), signal.SIGKILL)

        output.os.rename = rename
        if not after_first:
            output._swap = lambda tmp, target: os.kill(os.getpid(), signal.SIGKILL)

    return patch


@pytest.mark.parametrize("after_first", [False, True], ids=["before the swap", "between the renames"])
def test_a_run_killed_while_writing_leaves_the_previous_output(case, capsys, after_first):
    path = case.stack(DEV, "Pulumi.good.yaml")
    out = case.dir / "good"
    assert run(capsys, "--config", path, "--out", out, "--quiet")[0] == 0
    previous = snapshot(out)
    log = case.dir / "child.log"
    pid = forked_main(["--config", str(path), "--out", str(out), "--quiet"], log, _kill_during_write(after_first))
    assert exit_code(pid) == -signal.SIGKILL, log.read_text()
    if not after_first:
        assert snapshot(out) == previous
    # The next run, once it holds the lock, cleans up after the killed one and first puts a
    # moved-away output back: seen here before anything is rendered again (a new render of the
    # same stack would hide a restore that lost the previous output).
    with output.locked(out):
        assert snapshot(out) == previous
    assert run(capsys, "--config", path, "--out", out, "--quiet")[0] == 0
    assert snapshot(out) == previous
    assert sorted(p.name for p in case.dir.iterdir() if p.name.startswith(".good.")) == [".good.lock"]


def _slow_swap():
    """In the child: hold the output moved away for a while, mid-swap, so that a second run
    without the lock would find no output and put its own there first."""
    real_rename = os.rename

    def rename(src, dst):
        real_rename(src, dst)
        if ".old-" in str(dst):
            time.sleep(0.5)

    output.os.rename = rename


def test_two_concurrent_runs_on_one_out_do_not_mix(case, capsys):
    # Two different stacks of one name into one folder: each run's files are its own, so a
    # mix, or a run that failed on the other's half-swapped folder, would show.
    (case.dir / "b").mkdir()
    paths = [case.stack(DEV, "Pulumi.good.yaml"), case.dir / "b" / "Pulumi.good.yaml"]
    paths[1].write_text(DEV.replace("      env: dev\n", "      env: dev-b\n", 1))
    out = case.dir / "good"
    renders = []
    for i, path in enumerate(paths):  # rendered here first, so the children start warm
        assert run(capsys, "--config", path, "--out", case.dir / f"warm-{i}", "--quiet")[0] == 0
        renders.append(snapshot(case.dir / f"warm-{i}"))
    assert renders[0] != renders[1]
    # An output already there, which each child moves away mid-swap.
    assert run(capsys, "--config", paths[0], "--out", out, "--quiet")[0] == 0
    logs = [case.dir / f"child-{i}.log" for i in range(2)]
    pids = [forked_main(["--config", str(p), "--out", str(out), "--quiet"], log, _slow_swap) for p, log in zip(paths, logs)]
    assert [exit_code(pid) for pid in pids] == [0, 0], [log.read_text() for log in logs]
    assert snapshot(out) in renders
    assert sorted(p.name for p in case.dir.iterdir() if p.name.startswith(".good.")) == [".good.lock"]


# -- the CLI ---------------------------------------------------------------------------------------


def test_an_internal_error_is_one_line_and_debug_gives_the_traceback(case, capsys, monkeypatch):
    from gke_ai_batch import synth
    def boom(*args, **kwargs):
        raise RuntimeError("the plan went sideways")

    monkeypatch.setattr(synth, "synthesize", boom)
    path = case.stack(DEV, "Pulumi.good.yaml")
    code, stdout, stderr = run(capsys, "--config", path, "--out", case.dir / "x")
    assert code == 70 and stderr.count("\n") == 1
    assert "internal error: RuntimeError: the plan went sideways" in stderr and "--debug" in stderr
    assert main(["--config", str(path), "--out", str(case.dir / "x"), "--debug"]) == 70
    assert "Traceback" in capsys.readouterr().err
    assert not (case.dir / "x").exists()


def test_json_diagnostics_name_file_line_path_rule_and_message(case, capsys):
    path = case.stack(DEV.replace("topology: 2x4}\n      slices: 2", "topology: 4x5}\n      slices: 2", 1))
    code, stdout, stderr = run(capsys, "--config", path, "--out", case.dir / "out", "--json")
    assert code == 2 and stderr == ""
    doc = json.loads(stdout)
    [diagnostic] = doc["stacks"][0]["diagnostics"]
    assert doc["exitCode"] == 2
    assert diagnostic == {
        "file": str(path),
        "line": 29,
        "column": 27,
        "path": "gke-ai-batch:nodePools[0].tpu.topology",
        "rule": "config",
        "message": diagnostic["message"],
        "severity": "error",
    }
    assert "4x5" in diagnostic["message"]


@pytest.mark.parametrize(
    "argv, code, words",
    [
        ([], 2, "give one of"),
        (["dev", "--config", "x"], 2, "give one of"),
        (["dev", "dev"], 2, "named twice"),
        (["--nope"], 2, "unrecognized arguments"),
        (["--version"], 0, "Kueue 0.19.2"),
    ],
)
def test_usage(capsys, argv, code, words):
    try:
        got = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        got = exc.code
    captured = capsys.readouterr()
    assert got == code and words in captured.out + captured.err


def test_json_usage_errors_are_json_too(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--json", "--bogus"])
    captured = capsys.readouterr()
    assert exc.value.code == 2 and captured.err == ""
    assert json.loads(captured.out)["stacks"][0]["diagnostics"][0]["message"] == "unrecognized arguments: --bogus"


def test_a_stdout_that_cannot_be_written_is_a_message_not_a_traceback():
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "synth", "--json", "nope"], cwd=ROOT, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr == "python -m synth: cannot write the output: No space left on device\n"


def test_urns_names_an_unknown_stack_without_a_traceback(capsys):
    from gke_ai_batch.synth import urns

    with pytest.raises(SystemExit) as exc:
        urns.main(["nope"])
    assert exc.value.code == 2 and "no stack 'nope'" in capsys.readouterr().err


def test_odd_files_in_stacks_are_refused_each_on_its_own(capsys, tmp_path):
    from gke_ai_batch import synth
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.good.yaml").write_text(DEV)
    (stacks / "Pulumi.loop.yaml").symlink_to("Pulumi.loop.yaml")
    (stacks / "Pulumi.dir.yaml").mkdir()
    result = synth.synthesize(ROOT, synth.StackFile(stacks / "Pulumi.good.yaml", "good"), stacks)
    assert result.exit_code == 0 and not result.diagnostics
    for name, words in [("dir", "not a regular file"), ("loop", "Too many levels of symbolic links")]:
        with pytest.raises(synth.StackFileError, match=words):
            synth.stackfile.read(synth.StackFile.locate(tmp_path, name, None))


def test_all_reports_the_most_serious_exit_code(capsys, monkeypatch, tmp_path):
    import gke_ai_batch.synth.stackfile
    from gke_ai_batch import synth

    monkeypatch.setattr(synth.stackfile, "existing_stacks", lambda d: ["dev", "nope"])
    code, stdout, stderr = run(capsys, "--all", "--out", tmp_path, "--quiet")
    assert code == 2 and "no stack 'nope'" in stderr
    assert (tmp_path / "dev" / "resources.json").exists() and not (tmp_path / "nope").exists()


# -- what could take the process down, in a subprocess with limits ---------------------------------


_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024,) * 2)
sys.setrecursionlimit(10_000)
sys.path.insert(0, {root!r})
from gke_ai_batch.synth.__main__ import main
codes = [main(["--config", f, "--out", {out!r}, "--quiet"]) for f in sys.argv[1:]]
print(codes)
"""


def test_bombs_in_a_memory_limited_process(tmp_path):
    files = {
        "laughs": _laughs(12),
        "deep-flow": "config:\n  x: " + "[" * 200_000 + "]" * 200_000 + "\n",
        "deep-block": "config:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(2000)),
        "long-scalar": "config:\n  gcp:project: " + "a" * 1_500_000 + "\n",
    }
    paths = []
    for name, text in files.items():
        path = tmp_path / f"Pulumi.{name}.yaml"
        path.write_text(text)
        paths.append(str(path))
    script = _LIMITED.format(root=str(ROOT), out=str(tmp_path / "out"))
    proc = subprocess.run([sys.executable, "-c", script, *paths], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == str([2] * len(files))
    assert "Traceback" not in proc.stderr
    assert max(len(line) for line in proc.stderr.splitlines()) < 2000, "a diagnostic echoes a huge value"
    assert not (tmp_path / "out").exists()

