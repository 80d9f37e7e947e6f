"""What a search or listing may reach: every entry judged under the read rules, no link followed out.

Each call of ``glob_files``, ``grep_files`` or ``list_directory`` walks the file system through one :class:`Reach`.
It lists directories itself (never through :mod:`glob`, which follows every link) and judges each entry it would
return, read or enter with the agent's policy (:attr:`~hive_core.tools.ToolContext.path_judge`) or, when the agent
has none, by whether the entry lies inside the working directory:

- ``deny``: never read, listed or entered; the reply only counts such entries, it does not name them.
- ``ask``: the name may be listed (a name is not content, and the model learns the file exists and can ask for it
  with ``read_file``, which goes through approval), but a search never reads it; the reply names it.
- ``allow``: read, listed and entered.

Entries the project ignores (``.gitignore`` at every level, ``.ignore``, ``.git/info/exclude``; see
:mod:`._ignores`) are skipped after judging, unless the call asks to include them or names them: a start that is
itself ignored (``path="build"``, or the literal base of ``build/**/*.js``) is walked as if nothing were ignored.
The reply names what was skipped so the model can ask for it. A denied entry is never named, ignored or not.

A symbolic link is followed, read or listed only when its target lies inside the walk's boundary: the project when
the walk starts inside it, else the directory the walk starts from. A link leading out is skipped whatever the
rules say, and counted. The start itself (the call's ``path``, or a pattern's literal base such as ``../data``) is
named by the call, so the policy judged it before the call ran; here it is judged where it leads, as ``read_file``
judges its path, and a denied start fails the call.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from hive_core.approvals import PermissionAction
from hive_core.approvals import Verdict
from hive_core.permissions.glob import segment_matcher
from hive_core.permissions.paths import locate
from hive_core.tools import ToolContext

from ._ignores import Ignores

__all__ = ["Node", "Reach", "Root"]

_MAGIC = frozenset("*?[\\")
_NAMED = 10


@dataclass
class Node:
    """One directory entry met by a walk."""

    name: str
    """The entry's name in its directory."""
    path: str
    """Its path as walked (through any link followed on the way)."""
    real: str
    """Where it really is: links resolved."""
    relative: str
    """Its path relative to where the walk started, ``/``-separated."""
    is_dir: bool
    """Whether it is (or links to) a directory."""
    is_file: bool
    """Whether it is (or links to) a regular file."""
    is_link: bool
    """Whether the entry itself is a symbolic link."""
    outside: bool
    """A link whose target lies outside the walk's boundary: never followed, read or listed."""
    action: PermissionAction | None = None
    """The read rules' verdict, once judged."""
    ignored: bool | None = None
    """Whether the project's ignore files exclude it, once asked."""


@dataclass(frozen=True)
class Root:
    """Where one walk starts, and the boundary no link may carry it across."""

    path: str
    """The directory (or file) the walk starts at, as the tool resolved it."""
    real: str
    """The same with links resolved."""
    boundary: str
    """The project root when the walk starts inside the project, else :attr:`real` itself."""
    ignores: Ignores | None = None
    """The ignore files that apply below the start; ``None`` when nothing is skipped as ignored."""


@dataclass
class _Withheld:
    denied: set[str] = field(default_factory=set[str])
    asked: dict[str, None] = field(default_factory=dict[str, None])
    links_out: dict[str, bool] = field(default_factory=dict[str, bool])
    """Each link leading out, and whether it sits inside the project."""
    ignored: dict[str, None] = field(default_factory=dict[str, None])
    """Entries skipped as ignored, by path from the walk's start (directories ending in ``/``)."""


class Reach:
    """The entries one tool call may reach, judged one by one; what it held back is counted for the reply."""

    def __init__(self, ctx: ToolContext, *, include_ignored: bool = False) -> None:
        self._include_ignored = include_ignored
        self._ignores: dict[str, Ignores] = {}
        self._judge = ctx.path_judge
        self._working_dir = str(ctx.working_dir)
        self._project = os.path.realpath(ctx.working_dir)
        self._listed: dict[str, list[Node]] = {}
        self._withheld = _Withheld()
        self.unreadable = 0
        """Directories that could not be listed."""

    # -- judging ------------------------------------------------------------------------------------------------

    def verdict(self, path: str) -> Verdict:
        """The read rules' verdict for ``path``; without a policy, inside the working directory is allowed and
        nothing outside it is."""
        if self._judge is not None:
            return self._judge.judge_path("read", path)
        if locate(self._project, self._working_dir, path).relative is None:
            return Verdict.deny(
                "it is outside the working directory, and without permission rules searches and listings stay "
                "inside it"
            )
        return Verdict.allow()

    def start(self, directory: Path, shown: str = "") -> Root:
        """A walk from ``directory`` (a tool's resolved path, ``shown`` as the model wrote it). Raises
        ``PermissionError`` when the rules deny reading it."""
        verdict = self.verdict(str(directory))
        if verdict.action == "deny":
            name = shown or "the search directory"
            raise PermissionError(f"reading {name} is not allowed: {verdict.reason}")
        real = os.path.realpath(directory)
        boundary = self._project if _within(self._project, real) else real
        return Root(str(directory), real, boundary, self._ignores_below(str(directory), boundary))

    def _ignores_below(self, start: str, top: str) -> Ignores | None:
        if self._include_ignored:
            return None
        ignores = self._ignores.get(top)
        if ignores is None:
            ignores = self._ignores[top] = Ignores(top)
        if start != top and ignores.ignored(start, is_dir=os.path.isdir(start)):
            return None  # named by the call: what it holds is wanted, ignored or not
        return ignores

    def listable(self, root: Root, node: Node) -> bool:
        """Whether ``node``, met walking ``root``, may be listed (or entered): :meth:`admit` allows it and the
        project does not ignore it. What is ignored is remembered for the reply."""
        if not self.admit(node, read=False):
            return False
        if root.ignores is None:
            return True
        if node.ignored is None:
            node.ignored = root.ignores.ignored(node.path, is_dir=node.is_dir)
        if node.ignored:
            self._withheld.ignored[node.relative + ("/" if node.is_dir else "")] = None
            return False
        return True

    def admit(self, node: Node, *, read: bool, name: str | None = None) -> bool:
        """Whether ``node`` may be listed (``read`` false) or read (``read`` true); what it may not is counted, and
        a file the rules ask about is named in the reply as ``name`` (its path from the walk's start by default)."""
        if node.outside:
            if node.path not in self._withheld.links_out:
                parent = os.path.realpath(os.path.dirname(node.path))
                self._withheld.links_out[node.path] = _within(self._project, parent)
            return False
        if node.action is None:
            node.action = self.verdict(node.path).action
        if node.action == "deny":
            self._withheld.denied.add(node.path)
            return False
        if node.action == "ask" and read:
            self._withheld.asked[name or node.relative] = None
            return False
        return True

    # -- walking ------------------------------------------------------------------------------------------------

    def file(self, root: Root, relative: str) -> Node | None:
        """The start itself as a node, when it is a file (a pattern with no wildcard, or a search of one file).

        The tool named it and resolved it, so it is judged where it leads, like ``read_file`` judges a path.
        """
        if not os.path.isfile(root.real):
            return None
        name = posixpath.basename(relative) or relative
        return Node(name, root.path, root.real, relative, False, True, False, False)

    def children(self, root: Root, directory: str, real: str, relative: str) -> list[Node]:
        """What ``directory`` (walked spelling; ``real`` resolved) holds, in name order; not yet judged."""
        cached = self._listed.get(directory)
        if cached is not None:
            return cached
        nodes: list[Node] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    node = self._node(root, entry, real, relative)
                    if node is not None:
                        nodes.append(node)
        except OSError:
            self.unreadable += 1
        nodes.sort(key=lambda node: node.name)
        self._listed[directory] = nodes
        return nodes

    def _node(self, root: Root, entry: os.DirEntry[str], parent_real: str, relative: str) -> Node | None:
        name = entry.name
        child = posixpath.join(relative, name) if relative else name
        try:
            if not entry.is_symlink():
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file(follow_symlinks=False)
                return Node(
                    name, entry.path, os.path.join(parent_real, name), child, is_dir, is_file, False, False
                )
            real = os.path.realpath(entry.path)
        except OSError:
            return None
        outside = not _within(root.boundary, real)
        return Node(name, entry.path, real, child, os.path.isdir(real), os.path.isfile(real), True, outside)

    def glob(self, root: Root, segments: Sequence[str]) -> Iterator[Node]:
        """The files below ``root`` that ``segments`` (a pattern split by ``/``, with no ``..``) match.

        hive's glob dialect (:mod:`hive_core.permissions.glob`): ``*`` and ``?`` stay in one segment, ``**`` spans
        any depth, ``[abc]`` is a set, ``\\`` escapes; case counts; a name starting with a dot matches only a
        segment that spells the dot, and ``**`` never enters such a directory. Entries the rules deny, and links
        leading out, are neither entered nor returned.
        """
        if not os.path.isdir(root.real):
            return
        yield from self._match(root, root.path, root.real, "", segments, frozenset({root.real}))

    def _match(
        self,
        root: Root,
        directory: str,
        real: str,
        relative: str,
        segments: Sequence[str],
        ancestors: frozenset[str],
    ) -> Iterator[Node]:
        segment, rest = segments[0], segments[1:]
        if segment == ".":  # the directory itself: never a file, and where the rest goes on
            if rest:
                yield from self._match(root, directory, real, relative, rest, ancestors)
            return
        if segment == "**":
            if rest:
                yield from self._match(root, directory, real, relative, rest, ancestors)
            for node in self.children(root, directory, real, relative):
                if node.name.startswith("."):
                    continue
                if not rest and node.is_file and self.listable(root, node):
                    yield node
                # A link back to a directory the walk is already in would otherwise loop for ever.
                if node.is_dir and node.real not in ancestors and self.listable(root, node):
                    yield from self._match(
                        root, node.path, node.real, node.relative, segments, ancestors | {node.real}
                    )
            return
        matches = segment_matcher(segment) if not _MAGIC.isdisjoint(segment) else None
        for node in self.children(root, directory, real, relative):
            if matches is not None:
                if not matches(node.name):
                    continue
            elif node.name != segment:
                continue
            if rest:
                if node.is_dir and self.listable(root, node):
                    yield from self._match(
                        root, node.path, node.real, node.relative, rest, ancestors | {node.real}
                    )
            elif node.is_file and self.listable(root, node):
                yield node

    def tree(self, root: Root) -> Iterator[Node]:
        """Every entry below ``root`` that may be listed, hidden ones too, depth first in name order; linked
        directories are listed but not entered."""
        yield from self._tree(root, root.path, root.real, "")

    def _tree(self, root: Root, directory: str, real: str, relative: str) -> Iterator[Node]:
        for node in self.children(root, directory, real, relative):
            if not self.listable(root, node):
                continue
            yield node
            if node.is_dir and not node.is_link:
                yield from self._tree(root, node.path, node.real, node.relative)

    # -- reporting ----------------------------------------------------------------------------------------------

    def notes(self, *, read: bool) -> str:
        """What was held back, as lines to append to the reply (empty when nothing was)."""
        withheld = self._withheld
        lines: list[str] = []
        if withheld.asked:
            names = list(withheld.asked)
            lines.append(
                f"(not searched: {_count(len(names), 'file')} the permission rules ask about before reading "
                f"({_first_named(names)}); read_file asks for approval to read one)"
            )
        verb = "searched" if read else "listed"
        if withheld.denied:
            lines.append(f"(not {verb}: {_count(len(withheld.denied), 'entry')} the permission rules deny)")
        if withheld.links_out:
            count = _count(len(withheld.links_out), "symbolic link")
            where = "the project" if all(withheld.links_out.values()) else "the searched directory"
            lines.append(f"(skipped: {count} leading outside {where})")
        if withheld.ignored:
            names = sorted(withheld.ignored)
            lines.append(
                f"(not {verb}: {_count(len(names), 'entry')} the project ignores in .gitignore or .ignore "
                f"({_first_named(names)}); set include_ignored to true to include them)"
            )
        if self.unreadable:
            lines.append(f"(skipped: {_count(self.unreadable, 'directory')} that could not be read)")
        return "".join("\n" + line for line in lines)


def _first_named(names: list[str]) -> str:
    """The first :data:`_NAMED` of ``names``, and how many more there are."""
    more = f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
    return ", ".join(names[:_NAMED]) + more


def _count(number: int, noun: str) -> str:
    if number == 1:
        return f"1 {noun}"
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{number:,} {plural}"


def _within(boundary: str, real: str) -> bool:
    """Whether the resolved path ``real`` is ``boundary`` or below it (compared component by component)."""
    try:
        return os.path.commonpath([boundary, real]) == boundary
    except ValueError:  # different drives
        return False
