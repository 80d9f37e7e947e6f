"""What a sandboxed command must not see: the project's files and folders the read rules refuse.

A command the rules allow (``pytest``) runs code the model wrote, which can open any file the sandbox shows. So
before each sandboxed command the project is walked once and every entry judged under the read rules, by the
one judge the file tools use: what the rules deny is hidden always, what they ask about is hidden unless a person
approved that very command.

The walk:

- lists each directory once (``os.scandir``: names, types and inode numbers come with the listing, no ``stat``
  per file) and judges each entry's project-relative path, a directory as a directory (so ``**/secrets/**``
  covers ``secrets`` itself);
- hides a refused directory whole and judges nothing below it (the sandbox covers it with one mount);
- follows no symbolic link: a link's reader reaches its target, which is judged where it lies (inside the project
  the walk meets it there; outside, the sandbox's read-only view and hidden credential stores apply), as
  ``read_file`` judges a link by where it leads;
- skips nothing else: ignored folders (``node_modules/``, ``.venv/``, ``build/``) can hold a ``.env`` as well as
  any other, and the read rules do not care whether git ignores a file;
- hides a file that is a hard link of a hidden one (same inode), wherever it lies in the project: a second name
  must not carry a secret out from under its refused name. Refused folders are listed for that, not judged;
- stops after :data:`SCAN_LIMIT` entries and fails closed (:class:`RefusedScanTooLarge`): the command is not run;
  so is a command that would need more than :data:`HIDDEN_LIMIT` paths hidden.

How they are hidden (:func:`~hive_core.sandbox.bubblewrap_arguments`): a file reads as "Permission denied" rather
than empty, a folder cannot be entered, and the folders leading to them cannot be renamed (a rule naming
``data/private/**`` must still name it in the next command).

Judging is what costs: the rules' globs are regular expressions run over each whole path (the default rules'
``**/*`` alone takes microseconds a path), so a first walk of 100,000 files takes seconds; listing alone is ~1 µs an
entry. A :class:`RefusedFinder` (one per command tool) therefore remembers each directory's listing and verdicts
and, on the next walk, lists and judges again only the directories whose times changed: a ``stat`` per directory
instead of a judgement per file. Measured by ``benchmarks/sandbox.py`` on a shared, loaded 2-core machine (load
average 7): 10,000 files 1.1 s first, 10 ms after; 100,000 files 10 s first, 140 ms after.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final
from typing import NamedTuple

import msgspec

from hive_core.approvals import PermissionAction

__all__ = [
    "HIDDEN_LIMIT",
    "SCAN_LIMIT",
    "ReadJudge",
    "RefusedFinder",
    "RefusedPaths",
    "RefusedScanTooLarge",
    "refused_paths",
]

SCAN_LIMIT: Final = 400_000
"""The most entries (files and folders) one walk lists before it gives up.

A first walk judges some 10 to 100 µs per entry (the lower figure on an idle machine), so this bounds the first
command of a session in the largest projects to tens of seconds; later walks cost a fraction of that. A larger
project is refused rather than half-checked."""

HIDDEN_LIMIT: Final = 1_000
"""The most paths one command is run with hidden: each costs the sandbox a mount (and its folders one each), and
the command line that names them all has a size limit. A command that would need more is refused."""

ReadJudge = Callable[[str, bool], PermissionAction]
"""What the read rules decide for a project-relative, ``/``-separated path, given whether it is a directory."""


class RefusedScanTooLarge(Exception):
    """The project holds more entries than one walk lists, so what the rules refuse is not known; or the rules
    refuse more paths than one command can be run with hidden (:data:`HIDDEN_LIMIT`)."""


class RefusedPaths(msgspec.Struct, frozen=True, kw_only=True):
    """The project's entries the read rules refuse, as project-relative ``/``-separated paths, sorted."""

    denied: tuple[str, ...] = ()
    """Entries the rules deny (or that cannot be listed, so cannot be judged): always hidden."""
    asked: tuple[str, ...] = ()
    """Entries the rules ask about: hidden unless a person approved the command."""
    scanned: int = 0
    """How many entries the walk listed."""

    def hidden(self, *, approved: bool) -> tuple[str, ...]:
        """What to hide from a command a person ``approved`` (or not)."""
        return self.denied if approved else (*self.denied, *self.asked)


def refused_paths(root: Path, judge: ReadJudge, *, limit: int | None = None) -> RefusedPaths:
    """Walk the project at ``root`` and sort out what ``judge`` refuses to read (see the module's docstring).

    Raises :class:`RefusedScanTooLarge` after ``limit`` entries (by default :data:`SCAN_LIMIT`). Each call walks
    afresh; :class:`RefusedFinder` remembers what it can between walks.
    """
    return RefusedFinder().find(root, judge, rules=None, limit=limit)


class _Listing(NamedTuple):
    """One directory as a walk found it, summed up so that a walk through it again costs little per entry."""

    stamp: tuple[int, int, int, int]
    """Its device, inode, modification and change times (ns) when it was listed."""
    settled: bool
    """Whether those times lay well before the walk began, so any later change must move them."""
    judged: bool
    """Whether its entries were judged (not inside a refused folder)."""
    size: int
    """How many entries it holds."""
    refused: tuple[tuple[str, PermissionAction], ...]
    """The names the rules refuse, with their verdicts."""
    folders: tuple[tuple[str, PermissionAction], ...]
    """Its folders (links aside), with their verdicts (``allow`` when not judged)."""
    hidden_files: tuple[tuple[int, PermissionAction], ...]
    """The inodes of the files the rules refuse (of every file, when not judged), with their verdicts."""
    visible_inodes: frozenset[int]
    """The inodes of the files the rules allow."""
    visible_files: tuple[tuple[str, int], ...]
    """Those files' names and inodes."""


class RefusedFinder:
    """Finds what the read rules refuse (:func:`refused_paths`), listing and judging again only the directories
    that changed since its last walk under the same rules.

    A directory is trusted unchanged when its device, inode and modification and change times are the same. The
    change time cannot be set back by a command (only the clock moves it), but the kernel keeps both at a clock
    tick's grain (a second on some file systems), so a directory whose times lay less than :data:`_RACY_NS`
    before the walk began is listed again next time (as git treats "racily clean" index entries). Safe to call
    from several threads (walks take turns).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: object = None
        self._root = ""
        self._listings: dict[str, _Listing] = {}

    def find(self, root: Path, judge: ReadJudge, *, rules: object, limit: int | None = None) -> RefusedPaths:
        """What ``judge`` refuses in the project at ``root``; ``rules`` is what ``judge`` decides by (the policy
        object): listings are remembered only while it stays the same object (``None``: never remembered)."""
        limit = SCAN_LIMIT if limit is None else limit
        real_root = os.path.realpath(root)
        with self._lock:
            if rules is None or rules is not self._rules or real_root != self._root:
                self._listings = {}
            self._rules, self._root = rules, real_root
            try:
                return self._walk(real_root, judge, limit)
            except BaseException:
                self._listings = {}
                raise

    def _walk(self, real_root: str, judge: ReadJudge, limit: int) -> RefusedPaths:
        began = time.time_ns()
        verdicts: dict[str, PermissionAction] = {}
        hidden_inodes: dict[int, PermissionAction] = {}  # with the strictest verdict of the files carrying it
        listings: dict[str, _Listing] = {}
        scanned = 0
        pending: list[tuple[str, PermissionAction | None]] = [("", None)]
        while pending:
            prefix, refused = pending.pop()
            listing = self._list(real_root, prefix, refused, judge, began)
            if listing is None:
                if refused is None and prefix:
                    verdicts[prefix[:-1]] = "deny"  # a folder that cannot be listed cannot be judged
                continue
            listings[prefix] = listing
            scanned += listing.size
            if scanned > limit:
                raise RefusedScanTooLarge(
                    f"the project holds more than {limit:,} files and folders, too many to check against the "
                    "read rules before each command"
                )
            for name, action in listing.refused:
                verdicts[prefix + name] = action
            for name, action in listing.folders:
                inherited = refused if refused is not None else None if action == "allow" else action
                pending.append((f"{prefix}{name}/", inherited))
            for inode, action in listing.hidden_files:
                hidden_inodes[inode] = _stricter(hidden_inodes.get(inode), refused or action)
        self._listings = listings  # what was not reached this time is gone
        if hidden_inodes:
            hidden = set(hidden_inodes)
            for prefix, listing in listings.items():
                if listing.judged and not listing.visible_inodes.isdisjoint(hidden):
                    for name, inode in listing.visible_files:
                        if inode in hidden_inodes:
                            verdicts[prefix + name] = hidden_inodes[inode]
        return RefusedPaths(
            denied=tuple(sorted(path for path, action in verdicts.items() if action == "deny")),
            asked=tuple(sorted(path for path, action in verdicts.items() if action == "ask")),
            scanned=scanned,
        )

    def _list(
        self, real_root: str, prefix: str, refused: PermissionAction | None, judge: ReadJudge, began: int
    ) -> _Listing | None:
        """The directory at ``prefix``, judged unless it lies in a ``refused`` folder; ``None`` when it cannot be
        listed. One that vanished or is no longer a directory lists as empty."""
        path = os.path.join(real_root, prefix) if prefix else real_root
        try:
            status = os.lstat(path)  # before listing: a change made meanwhile shows as a new stamp next time
        except FileNotFoundError:
            return _EMPTY
        except OSError:
            return None
        if not stat.S_ISDIR(status.st_mode):
            return _EMPTY
        stamp = (status.st_dev, status.st_ino, status.st_mtime_ns, status.st_ctime_ns)
        judged = refused is None
        known = self._listings.get(prefix)
        if known is not None and known.settled and known.stamp == stamp and known.judged == judged:
            return known
        size = 0
        refusals: list[tuple[str, PermissionAction]] = []
        folders: list[tuple[str, PermissionAction]] = []
        hidden_files: list[tuple[int, PermissionAction]] = []
        visible_files: list[tuple[str, int]] = []
        try:
            with os.scandir(path) as listing:
                for entry in listing:
                    size += 1
                    try:
                        if entry.is_symlink():
                            continue
                        is_dir = entry.is_dir(follow_symlinks=False)
                        inode = entry.inode()
                    except OSError:
                        continue
                    action: PermissionAction = judge(prefix + entry.name, is_dir) if judged else "allow"
                    if action != "allow":
                        refusals.append((entry.name, action))
                    if is_dir:
                        folders.append((entry.name, action))
                    elif action != "allow" or not judged:
                        hidden_files.append((inode, action))
                    else:
                        visible_files.append((entry.name, inode))
        except FileNotFoundError:
            return _EMPTY
        except OSError:
            return None
        settled = max(status.st_mtime_ns, status.st_ctime_ns) < began - _RACY_NS
        return _Listing(
            stamp,
            settled,
            judged,
            size,
            tuple(refusals),
            tuple(folders),
            tuple(hidden_files),
            frozenset(inode for _, inode in visible_files),
            tuple(visible_files),
        )


_RACY_NS: Final = 3_000_000_000
"""How long before a walk a directory's times must lie for its listing to be trusted next time: more than the
coarsest timestamp grain of a common file system (one second, ext3 and HFS+), with room for clock skew."""

_EMPTY: Final = _Listing((0, 0, 0, 0), False, True, 0, (), (), (), frozenset(), ())


def _stricter(old: PermissionAction | None, new: PermissionAction) -> PermissionAction:
    return "deny" if "deny" in (old, new) else new
