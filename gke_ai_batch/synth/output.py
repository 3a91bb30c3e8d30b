"""Where synth writes, and how: all files or none, never outside the output folder.

The files are written into a temporary sibling folder (`.<out>.tmp-*`) and renamed into place
only once all are written, so a failed or killed run leaves the previous output byte for byte
as it was. A lock file beside it (`.<out>.lock`) keeps two runs on one folder from mixing.
The folder is replaced as a whole, so synth only ever replaces a folder it made itself
(marked by MARKER), an empty one, or nothing: `--out .`, `--out stacks` or `--out ~` are
refused before anything is written.

A stack of several clusters also gets manifests/<cluster>.yaml, one per cluster: the only
subfolder synth writes, and the only file names in it that of a cluster's scope (a GKE name)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path

from gke_ai_batch.domain.naming import check_scope

from .diagnostics import Diagnostic

MARKER = ".gke-ai-batch-synth"
"""Written into every output folder: the proof that synth may replace it."""
LOCK_WAIT_SECONDS = 120
# What synth wrote before it marked its folders: such a folder may be replaced too.
_UNMARKED_OUTPUT = {"resources.json", "manifests.yaml", "outputs.json", "policy.json", "report.md"}
# What synth writes since it marks its folders, beside _UNMARKED_OUTPUT.
_MARKED_OUTPUT = {"cost.json", "admission.json", "diff.md", "diff.json"}
# Derived from synth's files and written beside them: the PR comment (.github/scripts/stacks.py).
_DERIVED = {"comment.md"}
# One file per cluster, of a stack of several: manifests/<scope>.yaml (cluster_file).
MANIFESTS_DIR = "manifests"
_CLUSTER_FILE_SUFFIX = ".yaml"
# Any other file synth (or bootstrap.synth) writes: one plain name, no path.
_PLAIN_NAME_RX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*", re.ASCII)


class OutputError(Exception):
    def __init__(self, message: str, path: Path, busy: bool = False):
        self.diagnostic = Diagnostic(message, "output", file=str(path))
        self.busy = busy
        super().__init__(message)


def cluster_file(scope: str) -> str:
    """The output file of one cluster's manifests. The scope is checked (a GKE name: no '/',
    '..', NUL or leading '.') before it becomes part of a path."""
    try:
        check_scope(scope)
    except ValueError as exc:
        raise ValueError(f"no cluster file for {exc}") from None
    return f"{MANIFESTS_DIR}/{scope}{_CLUSTER_FILE_SUFFIX}"


def _relative(name: str) -> Path:
    """`name` as a path inside the output folder: a plain file name, or a cluster's file."""
    folder, sep, file = name.partition("/")
    if sep and folder == MANIFESTS_DIR and file.endswith(_CLUSTER_FILE_SUFFIX):
        if cluster_file(file[: -len(_CLUSTER_FILE_SUFFIX)]) == name:
            return Path(folder, file)
    elif not sep and name != MANIFESTS_DIR and _PLAIN_NAME_RX.fullmatch(name):
        return Path(name)
    raise ValueError(f"synth writes no file named {name!r}")


def _foreign_cluster_files(folder: Path) -> list[str]:
    """What in `folder` (an output's manifests/) synth would not have written there."""
    if os.path.islink(folder) or not os.path.isdir(folder):
        return [MANIFESTS_DIR]
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return [MANIFESTS_DIR]
    foreign = []
    for entry in entries:
        name = f"{MANIFESTS_DIR}/{entry}"
        if os.path.islink(folder / entry) or not os.path.isfile(folder / entry):
            foreign.append(name)
            continue
        try:
            _relative(name)
        except ValueError:
            foreign.append(name)
    return foreign


def check_target(out: Path, root: Path) -> Path:
    """The absolute output folder, or OutputError saying why synth may not replace it."""
    if os.path.lexists(out) and os.path.islink(out):
        raise OutputError("is a symbolic link; give the folder it points to, or another path", out)
    target = Path(os.path.abspath(out))
    if target == Path(target.anchor):
        raise OutputError("is the file system root", out)
    resolved_root = root.resolve()
    real = Path(os.path.realpath(target))  # not Path.resolve, which raises on a symbolic link loop
    if real == resolved_root or real in resolved_root.parents:
        raise OutputError("is the project folder or one above it; synth replaces its output folder as a whole", out)
    if real == Path.home().resolve():
        raise OutputError("is your home folder; synth replaces its output folder as a whole", out)
    if not os.path.lexists(target):
        _check_writable_parent(target, out)
        return target
    mode = os.stat(target).st_mode
    if not stat.S_ISDIR(mode):
        kind = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a file" if stat.S_ISREG(mode) else "not a folder"
        raise OutputError(f"is {kind}, not a folder", out)
    try:
        entries = os.listdir(target)
    except OSError as exc:
        raise OutputError(f"cannot be read: {exc.strerror}", out) from None
    if entries and MARKER not in entries and not set(entries) <= _UNMARKED_OUTPUT:
        config = sorted(e for e in entries if e.startswith("Pulumi.") and e.endswith((".yaml", ".yml")))
        why = f"it holds Pulumi config ({', '.join(config[:3])})" if config else f"it holds {len(entries)} entries synth did not write"
        raise OutputError(f"is not a folder synth wrote ({why}); synth replaces its output folder as a whole: choose an empty or new folder", out)
    added = sorted(set(entries) - _UNMARKED_OUTPUT - _MARKED_OUTPUT - _DERIVED - {MARKER, MANIFESTS_DIR})
    if MARKER in entries and MANIFESTS_DIR in entries:
        added += _foreign_cluster_files(target / MANIFESTS_DIR)
    if added:
        # A folder synth wrote, to which something was added since (notes, or other stacks'
        # outputs after `--out build`): replacing it would delete that.
        shown = ", ".join(added[:3]) + (f" and {len(added) - 3} more" if len(added) > 3 else "")
        raise OutputError(
            f"was written by synth but now also holds {shown}, which replacing it as a whole would delete: "
            "move that out, or choose another folder",
            out,
        )
    if not _writable(target):
        # Replacing it needs only its parent writable: the folder's own mode would be ignored.
        raise OutputError("is read-only; synth replaces its output folder as a whole: make it writable, or choose another folder", out)
    _check_writable_parent(target, out)
    return target


def _writable(folder: Path) -> bool:
    """Whether synth may change `folder`: the system lets it (os.access), and its mode has a
    write bit, because root passes os.access everywhere, yet a folder whose owner took away
    every write bit (chmod a-w) says it must not change."""
    try:
        mode = os.stat(folder).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) and bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) and os.access(folder, os.W_OK | os.X_OK)


def _check_writable_parent(target: Path, out: Path) -> None:
    """The folder synth creates `target` in (or the nearest one that exists, where it creates
    the rest) must be writable: the output, its temporary sibling and its lock go there."""
    parent = target.parent
    while not os.path.lexists(parent) and parent != parent.parent:
        parent = parent.parent
    if not _writable(parent):
        raise OutputError(f"cannot be written: {parent} is read-only or not a folder", out)


@contextlib.contextmanager
def locked(target: Path, wait: float | None = None):
    """An exclusive lock on `target` for this process, waiting at most `wait` seconds
    (LOCK_WAIT_SECONDS by default)."""
    wait = LOCK_WAIT_SECONDS if wait is None else wait
    parent = target.parent
    lock = parent / f".{target.name}.lock"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        # Never through a symbolic link (a lock file would be created wherever it points), and
        # only a regular file: a FIFO or a device in its place is not a lock synth made.
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        why = f"its lock file .{target.name}.lock is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise OutputError(f"cannot be locked: {why}", target) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputError(f"cannot be locked: .{target.name}.lock beside it is not a regular file", target)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise OutputError(f"cannot be locked: {exc.strerror}", target) from None
                if time.monotonic() >= deadline:
                    raise OutputError(f"is locked by another synth for more than {wait:.0f} s", target, busy=True) from None
                time.sleep(0.05)
        _remove_stale(target)
        yield
    finally:
        os.close(fd)


def write(target: Path, files: dict[str, str]) -> None:
    """Replace `target` with a folder holding exactly `files`, or leave it as it was."""
    paths = {_relative(name): text for name, text in files.items()}
    paths[Path(MARKER)] = "This folder is synth's output: the next run replaces it as a whole.\n"
    parent = target.parent
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=parent))
    except OSError as exc:
        raise OutputError(f"cannot be written: {exc.strerror}", target) from None
    try:
        for name, text in paths.items():
            if name.parent != Path("."):
                (tmp / name.parent).mkdir(mode=0o755, exist_ok=True)
                os.chmod(tmp / name.parent, 0o755)
            with open(tmp / name, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o755)
        _swap(tmp, target)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise OutputError(f"cannot be written: {exc.strerror}", target) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap(tmp: Path, target: Path) -> None:
    if not os.path.lexists(target):
        os.rename(tmp, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rmdir(old)
    os.rename(target, old)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(old, target)
        raise
    _remove_tree(old)


def _remove_tree(path: Path) -> None:
    """rmtree that also empties read-only subfolders (a chmod -w one would otherwise leave
    `path`, a .<out>.old-* folder, behind). Only folders inside `path` are made writable, never
    `path`'s own parent, and `path` must be a folder, not a link to one."""
    if not _real_folder(path):
        return
    inside = os.path.join(path, "")

    def writable_and_retry(function, name, _exc):
        folder = os.path.dirname(name)
        if not os.path.join(folder, "").startswith(inside) or os.path.islink(folder):
            return
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o755)
            function(name)

    handler = {"onexc" if sys.version_info >= (3, 12) else "onerror": writable_and_retry}  # onerror: deprecated in 3.12
    with contextlib.suppress(OSError):
        shutil.rmtree(path, **handler)


def _remove_stale(target: Path) -> None:
    """Temporary folders of runs that were killed (the lock is ours, so none is in use)."""
    prefixes = (f".{target.name}.tmp-", f".{target.name}.old-")
    try:
        stale = [p for p in target.parent.iterdir() if p.name.startswith(prefixes)]
    except OSError:
        return
    for path in stale:
        if not _real_folder(path):
            continue  # synth makes folders there, never links or files: not synth's to touch
        if path.name.startswith(prefixes[1]) and not os.path.lexists(target):
            # Killed between the two renames: the previous output is here; put it back.
            with contextlib.suppress(OSError):
                os.rename(path, target)
                continue
        _remove_tree(path)


def _real_folder(path: Path) -> bool:
    """A folder itself, not a symbolic link to one (lstat)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
