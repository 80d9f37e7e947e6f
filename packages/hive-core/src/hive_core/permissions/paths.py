"""Where a path argument really points: joined to the working directory, ``.``/``..`` and links resolved."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePath
from typing import NamedTuple

__all__ = ["Location", "glob_base", "locate", "resolve_path"]

_GLOB_MAGIC = re.compile(r"[*?\[{]")


class Location(NamedTuple):
    """A path argument placed relative to the project."""

    resolved: str
    """The absolute path with ``.``, ``..`` and symbolic links resolved, ``/``-separated."""
    spelled: str
    """The absolute path as written (joined to the working directory, ``.``/``..`` folded), ``/``-separated."""
    relative: str | None
    """The resolved path relative to the project root, ``/``-separated (``.`` for the root itself); ``None`` when
    the path lies outside the project."""


def resolve_path(working_dir: Path | str, path: str) -> Path:
    """The file ``path`` names when a tool running in ``working_dir`` opens it.

    Relative paths join ``working_dir``; ``.``, ``..`` and symbolic links (of the working directory too) are
    resolved as the operating system would, so tools that open this path touch the file the policy judged.
    Raises ``ValueError`` for a path containing a NUL character, which no file system accepts.
    """
    if "\0" in path:
        raise ValueError("the path contains a NUL character")
    return Path(os.path.realpath(os.path.join(os.path.realpath(working_dir), path)))


def locate(root: str, working_dir: str, path: str) -> Location:
    """Place ``path`` (as a tool in ``working_dir`` would open it) relative to the project ``root``.

    ``root`` must already be resolved (``os.path.realpath``). The inside/outside decision compares resolved paths
    component by component and respecting case, so no spelling of an outside path can pass for an inside one.
    Raises ``ValueError`` for a path containing a NUL character.
    """
    resolved = str(resolve_path(working_dir, path))
    spelled = os.path.normpath(os.path.join(os.path.abspath(working_dir), path))
    relative: str | None = None
    try:
        inside = os.path.commonpath([root, resolved]) == root
    except ValueError:  # different drives
        inside = False
    if inside:
        relative = PurePath(resolved).relative_to(root).as_posix()
    return Location(PurePath(resolved).as_posix(), PurePath(spelled).as_posix(), relative)


def glob_base(pattern: str) -> str | None:
    """The directory a glob ``pattern`` starts its search from, relative to the search base (or absolute).

    That is the run of segments before the first one holding a wildcard: ``../data/*.csv`` → ``../data``,
    ``**/*.py`` → ``""``, ``/etc/*`` → ``/etc``. Returns ``None`` when a ``..`` segment follows a wildcard, because
    then the reach depends on what the wildcard matches (a link, say) and cannot be told from the text.
    """
    drive, rest = os.path.splitdrive(pattern)
    separators = re.escape(os.sep + (os.altsep or ""))
    literal: list[str] = []
    wild = False
    for segment in re.split(f"[{separators}]", rest):
        if wild:
            if segment == "..":
                return None
        elif _GLOB_MAGIC.search(segment):
            wild = True
        else:
            literal.append(segment)
    return drive + os.sep.join(literal)
