"""Empty files and directories hive makes where a guarded path is absent, so the sandbox can bind it read-only,
and removes again when the commands that relied on them have ended.

bubblewrap binds only over a path that exists, and the mount point it would make itself lands in the user's tree
through the writable project and stays there. So hive makes the mount point (an empty file or directory), notes
its identity, and removes it after the command, only when it is still that same object, still empty, and no other
command relies on it. Every command holds a shared ``flock`` on each empty guarded path while it runs (those of
another hive process too); the remover needs the exclusive lock, so a placeholder still bound read-only in a
running sandbox is never removed (removing a mount point detaches its mounts in every namespace, which would open
the path to that sandbox). Nothing that existed before hive made it is ever removed.

A guarded path that is a symbolic link (``.env`` pointing at ``.env.development``) has its target bound read-only,
but the link itself is a directory entry of the writable project, which no mount can cover: a command could replace
it. Its target is noted, and the link put back when the command ends (what replaced it is overwritten, or moved
aside when it is a directory).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import threading
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

__all__ = ["Placeholder", "PlaceholderClaim", "claim_placeholders"]


class Placeholder(NamedTuple):
    """A path the sandbox guards, and what to make there when it is absent."""

    path: Path
    """The path (absolute)."""
    directory: bool
    """Whether an absent one becomes an empty directory (otherwise an empty file)."""


_guard = threading.Lock()
# The placeholders this process made and has not removed yet: path -> (device, inode).
_made: dict[Path, tuple[int, int]] = {}


class PlaceholderClaim:
    """The guarded paths one command relies on; :meth:`release` when the command has ended."""

    def __init__(self, held: dict[Path, int], links: dict[Path, str]) -> None:
        self._held = held
        self._links = links

    def release(self) -> None:
        """Drop this command's locks and remove the placeholders no running command relies on any more.

        Idempotent; never raises for a file system error (a placeholder that cannot be removed stays).
        """
        with _guard:
            for path, descriptor in self._held.items():
                identity = _made.get(path)
                try:
                    if identity is not None and _remove_if_unused(path, descriptor, identity):
                        del _made[path]
                except OSError:
                    pass  # left in place; a later command's release tries again
                finally:
                    os.close(descriptor)
            self._held.clear()
            for path, target in self._links.items():
                _put_back(path, target)
            self._links.clear()


def claim_placeholders(wanted: Iterable[Placeholder]) -> PlaceholderClaim:
    """Make each absent path of ``wanted`` (an empty file or directory) and lock every empty one for the command.

    A path whose parent cannot be written to is left absent (the sandbox then covers it another way).
    """
    held: dict[Path, int] = {}
    links: dict[Path, str] = {}
    with _guard:
        for path, directory in wanted:
            with contextlib.suppress(OSError):
                links[path] = os.readlink(path)
            for _attempt in range(3):  # another process may remove a placeholder just as it is locked here
                descriptor = _make(path, directory) if not os.path.lexists(path) else None
                if descriptor is None:
                    descriptor = _open(path)
                if descriptor is None:
                    break
                fcntl.flock(descriptor, fcntl.LOCK_SH)
                if _same(descriptor, path):
                    held[path] = descriptor
                    break
                os.close(descriptor)
    return PlaceholderClaim(held, links)


def _make(path: Path, directory: bool) -> int | None:
    """Make the placeholder and note it; a descriptor on it (``None`` when it could not be made)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        if directory:
            os.mkdir(path, 0o755)
            descriptor = os.open(path, flags | os.O_DIRECTORY)
        else:
            descriptor = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return None  # made by someone else meanwhile, or the parent is not writable
    made = os.fstat(descriptor)
    _made[path] = (made.st_dev, made.st_ino)
    return descriptor


def _open(path: Path) -> int | None:
    """A descriptor on ``path`` when it is an empty regular file or empty directory (never through a link)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    if _empty(descriptor):
        return descriptor
    os.close(descriptor)
    return None


def _empty(descriptor: int) -> bool:
    found = os.fstat(descriptor)
    if stat.S_ISREG(found.st_mode):
        return found.st_size == 0
    if stat.S_ISDIR(found.st_mode):
        return not os.listdir(descriptor)
    return False


def _same(descriptor: int, path: Path) -> bool:
    try:
        found, there = os.fstat(descriptor), os.lstat(path)
    except OSError:
        return False
    return (found.st_dev, found.st_ino) == (there.st_dev, there.st_ino)


def _remove_if_unused(path: Path, descriptor: int, identity: tuple[int, int]) -> bool:
    """Remove the placeholder at ``path`` (``descriptor`` is this command's, locked shared) if it is still the
    one made, empty and locked by no other command; whether it is done with (removed, or no longer the
    placeholder) rather than still in use."""
    found = os.fstat(descriptor)
    if (found.st_dev, found.st_ino) != identity or not _same(descriptor, path):
        return True
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # a running command relies on it; the last one to end removes it
    if not _empty(descriptor):
        return True
    try:
        if stat.S_ISDIR(found.st_mode):
            os.rmdir(path)
        else:
            os.unlink(path)
    except OSError:
        pass
    return True


def _put_back(path: Path, target: str) -> None:
    """Make ``path`` the link to ``target`` again, unless it still is one; a directory made in its place is moved
    aside (``NAME.replaced-HEX``), not deleted."""
    try:
        if os.readlink(path) == target:
            return
    except OSError:
        pass
    if os.path.isdir(path) and not os.path.islink(path):
        try:
            os.rename(path, path.with_name(f"{path.name}.replaced-{uuid.uuid4().hex[:8]}"))
        except OSError:
            return
    spare = path.with_name(f".{path.name}.hive-{uuid.uuid4().hex[:8]}")
    try:
        os.symlink(target, spare)
        os.replace(spare, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(spare)
