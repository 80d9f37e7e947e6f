"""Opening the file a tool call names once, and judging the object opened rather than a name looked up twice.

The approval gate judges a call's path by name before the tool runs. Between that check and the tool's own open,
a directory on the way may become a link to the outside, or the name may be a hard link to a protected file. So
the file tools never act on a name the policy judged earlier; they open first and judge what they hold:

- an existing file is opened with ``O_PATH`` (no read, no side effect, no wait on a FIFO); the kernel's path of
  that descriptor (``/proc/self/fd/N``; ``F_GETPATH`` on macOS) is judged under the call's rules, its type and
  link count are checked with ``fstat``, and only then is the same object opened again for reading or writing,
  through the descriptor (on macOS by its judged path, kept only when it is the same file);
- a new file is created beneath a parent directory opened and judged the same way: missing directories are made
  and entered one at a time with ``O_NOFOLLOW``, and the file itself is made with ``O_CREAT | O_EXCL |
  O_NOFOLLOW``, so a link swapped in on the way makes the call fail instead of landing elsewhere.

Links the policy allows keep working: the kernel follows them, and what is judged is where they led. Only
regular files are read or written (a FIFO, a device or a socket is refused), and a file with more than one hard
link only when a person approved the call (directories are exempt: their link count counts subdirectories).

Why judge rather than ``openat2`` with ``RESOLVE_BENEATH`` or a walk refusing every link: both would refuse the
links inside the project that the rules allow, and the outside paths a user's rule allows; judging the object
keeps them. The policy looks the judged path up by name once more, so the descriptor's path is read again after
the verdict: a directory renamed on the way meanwhile makes the call fail (see ``benchmarks/file_open.py``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from hive_core._closing import Closing
from hive_core.approvals import Verdict
from hive_core.permissions.evaluate import PermissionPolicy
from hive_core.tools import ToolContext

__all__ = [
    "Changed",
    "Handle",
    "Judge",
    "NotRegular",
    "ParentDir",
    "Refused",
    "SharedFile",
    "judge_of",
    "kernel_path",
    "open_destination",
    "open_for_write",
    "open_judged",
    "open_parent",
]

Judge = Callable[[str], Verdict]
"""The policy's verdict on one resolved, absolute path."""

# O_PATH (Linux) opens without reading: no side effect of a device's open, no wait on a FIFO. Elsewhere a
# non-blocking read-only open stands in for it.
_PATH = (
    getattr(os, "O_PATH", 0) or os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
) | getattr(os, "O_CLOEXEC", 0)
_PROC_FDS = "/proc/self/fd"
_BY_PROC = sys.platform != "darwin"
"""Whether descriptors show their paths, and reopen, under /proc/self/fd (macOS has ``F_GETPATH`` instead)."""
_RETRIES = 3


class Refused(PermissionError):
    """The rules do not allow the object opened (or ask about it, and no person approved the call)."""


class SharedFile(PermissionError):
    """A regular file with more than one hard link, and no person approved the call."""


class Changed(PermissionError):
    """A directory or link on the way changed while the file was being opened; nothing was touched."""

    def __init__(self, shown: str) -> None:
        super().__init__(
            f"{shown} changed while it was being opened (a directory or link on the way was replaced); nothing "
            "was touched: call the tool again"
        )


class NotRegular(OSError):
    """A FIFO, a device, a socket: never read or written by the file tools."""


def judge_of(ctx: ToolContext, category: Literal["read", "edit"]) -> Judge:
    """How a call in ``ctx`` judges a path: the agent's policy, or without one, inside the working directory only."""
    path_judge = ctx.path_judge
    if isinstance(path_judge, PermissionPolicy):
        # Every path judged here is the kernel's: nothing to resolve, and nothing looked up by name again.
        return lambda path: path_judge.judge_resolved(category, path)
    if path_judge is not None:
        return lambda path: path_judge.judge_path(category, path)
    root = os.path.realpath(ctx.working_dir)

    def inside_only(path: str) -> Verdict:
        if _within(root, path):
            return Verdict.allow()
        return Verdict.deny(
            "it is outside the working directory, and without permission rules the file tools stay inside it"
        )

    return inside_only


@dataclass
class _Descriptor(Closing):
    """An open descriptor: close it (or use it as a context manager)."""

    fd: int
    """The descriptor."""

    def close(self) -> None:
        """Close the descriptor."""
        os.close(self.fd)


@dataclass
class Handle(_Descriptor):
    """A file opened and judged: close it (or use it as a context manager)."""

    fd: int
    """The descriptor, open for what the caller asked."""
    real: str
    """The kernel's path of the opened object when it was judged."""
    info: os.stat_result
    """Its ``fstat`` when it was judged."""


@dataclass
class ParentDir(_Descriptor):
    """The judged directory holding a call's file, and the file's name in it: close it (or use it as a context
    manager)."""

    fd: int
    """An ``O_PATH`` descriptor of the directory, for ``*at`` calls with ``dir_fd``."""
    name: str
    """The file's name in it (one component)."""
    real: str
    """The path judged: the kernel's path of the directory, joined with :attr:`name`."""


def open_judged(
    ctx: ToolContext,
    path: str,
    *,
    judge: Judge,
    shown: str,
    approved: bool,
    flags: int = os.O_RDONLY,
    directory: bool = False,
) -> Handle:
    """Open the existing file ``path`` names (relative to the working directory, or absolute) for ``flags``, judged
    on the object opened.

    ``approved``: a person approved the call, so an ``ask`` verdict and a file with several hard links pass.
    Raises ``FileNotFoundError`` when nothing is there, :class:`Refused`, :class:`SharedFile` or :class:`Changed`,
    ``IsADirectoryError`` for a directory (``NotADirectoryError`` for anything else when ``directory``), and
    :class:`NotRegular` for anything but a regular file or directory.
    """
    fd = os.open(_spelled(ctx, path), _PATH)
    try:
        info = os.fstat(fd)
        if info.st_nlink == 0 and not stat.S_ISDIR(info.st_mode):
            raise Changed(shown)  # deleted since it was opened
        real = kernel_path(fd, shown)
        _accept(judge(real), shown, real, approved=approved)
        # The judge looked the path up by name again; had a directory on the way been renamed meanwhile, the
        # descriptor's path would have moved with it.
        if kernel_path(fd, shown) != real:
            raise Changed(shown)
        if stat.S_ISDIR(info.st_mode):
            if directory:
                return Handle(_reopen(fd, os.O_RDONLY | os.O_DIRECTORY, real, shown), real, info)
            raise IsADirectoryError(f"{shown} is a directory; give the path of a file")
        if directory:
            raise NotADirectoryError(f"{shown} is a file, not a directory")
        _require_regular(info, shown)
        if info.st_nlink > 1 and not approved:
            raise SharedFile(
                f"{shown} has {info.st_nlink} hard links, so it is the same file as another name (perhaps "
                "outside the project, or one the rules protect); the file tools touch it only in a call a person "
                "approves"
            )
        return Handle(_reopen(fd, flags, real, shown), real, info)
    finally:
        os.close(fd)


def open_for_write(ctx: ToolContext, path: str, *, judge: Judge, shown: str) -> tuple[Handle, bool]:
    """The file ``path`` names, open for reading and writing, created (with missing directories) when there is
    none; and whether it existed.

    Judged as :func:`open_judged` and :func:`open_destination` judge. A file that appears or vanishes meanwhile is
    looked at again, a few times at most.
    """
    for _ in range(_RETRIES):
        try:
            handle = open_judged(ctx, path, judge=judge, shown=shown, approved=ctx.approved, flags=os.O_RDWR)
            return handle, True
        except FileNotFoundError:
            pass
        with open_destination(ctx, path, judge=judge, shown=shown) as parent:
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                fd = os.open(parent.name, flags, 0o666, dir_fd=parent.fd)
            except FileExistsError:
                _no_dangling_link(parent, shown)
                continue
            try:
                if kernel_path(parent.fd, shown) != os.path.dirname(parent.real):
                    # The judged directory was moved while the file was made in it: take the file back.
                    os.unlink(parent.name, dir_fd=parent.fd)
                    raise Changed(shown)
                return Handle(fd, parent.real, os.fstat(fd)), False
            except BaseException:
                os.close(fd)
                raise
    raise Changed(shown)


def open_destination(ctx: ToolContext, path: str, *, judge: Judge, shown: str) -> ParentDir:
    """The directory a new file at ``path`` goes in, judged for that file, missing directories made on the way.

    Directories are made one at a time and each is entered with ``O_NOFOLLOW``. Raises :class:`Refused` when
    ``judge`` does not allow the new file's resolved path, :class:`Changed` when a link was swapped in on the way.
    """
    parent, name = os.path.split(_spelled(ctx, path))
    if name in ("", ".", ".."):
        raise IsADirectoryError(f"{shown} names a directory; give the path of a file")
    missing: list[str] = []
    while True:
        try:
            fd = os.open(parent or os.sep, _PATH | os.O_DIRECTORY)
            break
        except FileNotFoundError:
            parent, part = os.path.split(parent)
            if not part:
                raise
            missing.insert(0, part)
        except NotADirectoryError:
            raise NotADirectoryError(f"a part of {shown} is a file, not a directory") from None
    try:
        if any(part in (".", "..") for part in missing):
            raise FileNotFoundError(f"{shown} climbs out of a directory that does not exist")
        real = os.path.join(kernel_path(fd, shown), *missing, name)
        _accept(judge(real), shown, real, approved=ctx.approved)
        for part in missing:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            try:
                entered = os.open(part, _PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as error:
                raise Changed(shown) from error
            os.close(fd)
            fd = entered
    except BaseException:
        os.close(fd)
        raise
    return ParentDir(fd, name, real)


def open_parent(ctx: ToolContext, path: str, *, judge: Judge, shown: str) -> ParentDir:
    """The judged directory holding the existing file ``path`` names, for removing or renaming it there.

    A link at ``path`` leads to its target first, as the policy resolves links when it judges a name; the target's
    directory is opened and checked to still hold the same file under that name. Raises ``FileNotFoundError``
    when nothing is there, :class:`Refused` when ``judge`` does not allow it.
    """
    spelled = _spelled(ctx, path)
    for _ in range(_RETRIES):
        fd = os.open(spelled, _PATH)
        try:
            held = os.fstat(fd)
            directory, name = os.path.split(kernel_path(fd, shown))
        finally:
            os.close(fd)
        dir_fd = os.open(directory or os.sep, _PATH | os.O_DIRECTORY)
        try:
            try:
                entry = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                entry = None
            if entry is None or (entry.st_dev, entry.st_ino) != (held.st_dev, held.st_ino):
                os.close(dir_fd)
                continue  # renamed meanwhile: look again
            real = os.path.join(kernel_path(dir_fd, shown), name)
            _accept(judge(real), shown, real, approved=ctx.approved)
        except BaseException:
            os.close(dir_fd)
            raise
        return ParentDir(dir_fd, name, real)
    raise Changed(shown)


def kernel_path(fd: int, shown: str) -> str:
    """The path the kernel gives for the object open on ``fd``; :class:`Refused` when it gives none."""
    try:
        real = _descriptor_path(fd)
    except OSError:
        raise Refused(
            f"cannot tell where {shown} leads (this system shows no /proc/self/fd), so it is not touched"
        ) from None
    if not real.startswith(os.sep):  # not reachable by a path from here (another mount namespace)
        raise Changed(shown)
    return real


def _spelled(ctx: ToolContext, path: str) -> str:
    if not path.strip():
        raise ValueError("the path is empty")
    if "\0" in path:
        raise ValueError("the path contains a NUL character")
    if path.startswith(os.sep):
        return path
    return f"{os.fspath(ctx.working_dir)}{os.sep}{path}"  # os.path.join's result, without its cost


def _descriptor_path(fd: int) -> str:
    if sys.platform == "darwin":
        import fcntl

        return os.fsdecode(fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).rstrip(b"\0"))
    return os.readlink(f"{_PROC_FDS}/{fd}")


def _reopen(fd: int, flags: int, real: str, shown: str) -> int:
    """The object open on ``fd`` opened again for ``flags``: through the descriptor where /proc shows it, else by
    its judged path, kept only if it is the same file."""
    flags |= os.O_CLOEXEC | os.O_NOCTTY
    if _BY_PROC:
        return os.open(f"{_PROC_FDS}/{fd}", flags)
    reopened = os.open(real, flags | os.O_NOFOLLOW)
    held, now = os.fstat(fd), os.fstat(reopened)
    if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):
        os.close(reopened)
        raise Changed(shown)
    return reopened


def _accept(verdict: Verdict, shown: str, real: str, *, approved: bool) -> None:
    if verdict.action == "allow" or (verdict.action == "ask" and approved):
        return
    where = "" if os.path.isabs(shown) and os.path.normpath(shown) == real else f" (it leads to {real})"
    if verdict.action == "ask":
        raise Refused(
            f"{shown}{where} is a file the permission rules ask about, and no person approved this call for it "
            f"({verdict.reason}); it may have changed since the call was checked"
        )
    raise Refused(f"{shown}{where} may not be touched: {verdict.reason}")


def _require_regular(info: os.stat_result, shown: str) -> None:
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return
    if stat.S_ISFIFO(mode):
        kind = "a named pipe (FIFO)"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    else:
        kind = "not a regular file"
    raise NotRegular(f"{shown} is {kind}; the file tools read and write regular files only")


def _no_dangling_link(parent: ParentDir, shown: str) -> None:
    entry = os.stat(parent.name, dir_fd=parent.fd, follow_symlinks=False)
    if stat.S_ISLNK(entry.st_mode):
        raise FileExistsError(
            f"{shown} is a symbolic link to a file that does not exist; write to the path it should lead to"
        )


def _within(root: str, real: str) -> bool:
    # Both are the kernel's canonical paths (no ``..``, no doubled separators): a prefix test is exact.
    return real == root or real.startswith(root if root.endswith(os.sep) else root + os.sep)
