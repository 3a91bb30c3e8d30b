"""What a program run by `synth --program` can do to synth, and what is beside the output folder:
- the program's own modules (a CrossGuard pack in its `policy/` folder) broke synth's own imports
  (exit 70, "cannot import name 'rules' from 'policy'"): the program folder stayed first on
  sys.path and its modules in sys.modules (gke_ai_batch/synth/engine.py program_imports);
- `--json` promises one JSON document on stdout, but a subprocess of the program or a write to
  file descriptor 1 landed before it (engine.stdout_to_stderr);
- the output folder's siblings were opened through symbolic links: `.out.lock` created a file
  wherever it pointed, and a link named `.out.tmp-*` made the cleanup chmod the parent folder
  (gke_ai_batch/synth/output.py)."""

from __future__ import annotations

import json
import os
import stat
import sys

from gke_ai_batch.synth import output
from gke_ai_batch.synth.__main__ import main

STACK = "config:\n  gcp:project: acme-ml\n"


def _project(folder, program: str) -> list[str]:
    folder.mkdir(exist_ok=True)
    (folder / "Pulumi.yaml").write_text("name: x\nruntime: python\n")
    (folder / "__main__.py").write_text(program)
    (folder / "Pulumi.dev.yaml").write_text(STACK)
    return ["--program", str(folder), "--config", str(folder / "Pulumi.dev.yaml")]


def test_a_programs_own_policy_package_is_its_own_and_synths_stays_synths(tmp_path, capsys):
    import gke_ai_batch.policy.rules

    synths = sys.modules["gke_ai_batch.policy"], sys.modules["gke_ai_batch.policy.rules"]
    program = tmp_path / "prog"
    (program / "policy").mkdir(parents=True)
    (program / "policy" / "__init__.py").write_text("# the program's CrossGuard pack\n")
    (program / "policy" / "limits.py").write_text("LIMIT = 7\n")
    (program / "helper.py").write_text("X = 1\n")
    argv = _project(program, "import pulumi\nimport helper\nfrom policy.limits import LIMIT\n\npulumi.export('n', LIMIT + helper.X)\n")
    path = list(sys.path)

    code = main([*argv, "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "out" / "outputs.json").read_text()) == {"n": 8}  # its own policy.limits
    # Afterwards synth's own are in place, sys.path is as it was, and none of the program's is left.
    assert (sys.modules["gke_ai_batch.policy"], sys.modules["gke_ai_batch.policy.rules"]) == synths
    assert gke_ai_batch.policy.rules.Resource
    assert sys.path == path
    assert not [n for n, m in sys.modules.items() if str(program) in str(getattr(m, "__file__", "") or "")]


def test_a_programs_policy_folder_does_not_break_synths_imports_after_the_run(tmp_path, monkeypatch, capsys):
    # The reported case: synth's `policy` not imported yet when the program runs.
    program = tmp_path / "prog"
    (program / "policy").mkdir(parents=True)
    (program / "policy" / "__init__.py").write_text("from pulumi_policy import PolicyPack\n")
    argv = _project(program, "import pulumi\n\npulumi.export('a', 1)\n")
    for name in [n for n in sys.modules if n.partition(".")[0] == "policy" or n.startswith("gke_ai_batch.policy")]:
        monkeypatch.delitem(sys.modules, name)
    code = main([*argv, "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    rules = sys.modules["gke_ai_batch.policy.rules"].__file__
    assert rules.endswith(os.path.join("gke_ai_batch", "policy", "rules", "__init__.py")) and str(program) not in rules
    assert "policy" not in sys.modules  # the program's own pack is not left behind


def test_json_is_the_only_thing_on_stdout_whatever_the_program_writes(tmp_path, capfd):
    argv = _project(tmp_path / "prog", "\n".join([
        "import os, subprocess, sys",
        "import pulumi",
        "print('a print')",
        "os.write(1, b'a write to descriptor 1\\n')",
        "subprocess.run(['echo', 'a subprocess'], check=True)",
        "sys.__stdout__.write('the real stdout, buffered\\n')",
        "pulumi.export('a', 1)",
    ]) + "\n")
    code = main([*argv, "--out", str(tmp_path / "out"), "--json"])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert json.loads(out)["exitCode"] == 0  # the whole of stdout is one JSON document
    for line in ("a print", "a write to descriptor 1", "a subprocess", "the real stdout, buffered"):
        assert line in err
    # Descriptor 1 is stdout again afterwards.
    os.write(1, b"after\n")
    assert capfd.readouterr().out == "after\n"


def test_a_lock_file_that_is_a_symbolic_link_is_not_followed(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / ".out.lock").symlink_to(elsewhere / "created")
    code = main(["dev", "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot be locked: its lock file .out.lock is a symbolic link" in err, err
    assert not os.path.lexists(elsewhere / "created") and not (tmp_path / "out").exists()


def test_a_fifo_in_place_of_the_lock_file_is_refused_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / ".out.lock")
    try:
        with output.locked(tmp_path / "out"):
            raise AssertionError("locked through a FIFO")
    except output.OutputError as exc:
        assert "not a regular file" in str(exc)


def test_a_link_named_like_a_temporary_folder_is_left_alone_and_the_parent_keeps_its_mode(tmp_path):
    parent = tmp_path / "parent"
    parent.mkdir()
    os.chmod(parent, 0o750)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep").write_text("not synth's\n")
    (parent / ".out.tmp-planted").symlink_to(elsewhere)
    (parent / ".out.old-planted").symlink_to(elsewhere)
    (parent / ".out.tmp-file").write_text("a file, not a folder synth made\n")
    stale = parent / ".out.tmp-stale"
    (stale / "sub").mkdir(parents=True)
    os.chmod(stale / "sub", 0o500)  # a killed run's folder: removed, read-only parts included

    with output.locked(parent / "out"):
        pass
    assert stat.S_IMODE(os.stat(parent).st_mode) == 0o750
    assert (elsewhere / "keep").read_text() == "not synth's\n" and not (parent / "out").exists()
    assert sorted(p.name for p in parent.iterdir()) == [".out.lock", ".out.old-planted", ".out.tmp-file", ".out.tmp-planted"]
