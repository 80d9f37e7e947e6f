"""Where a path argument really points: joined to the working directory, ``.``/``..`` and links resolved."""

from __future__ import annotations

import os
import re
from pathlib import Path
from pathlib import PurePath
from typing import NamedTuple

__all__ = [
    "Location",
    "glob_base",
    "locate",
    "place_resolved",
    "resolve_path",
    "split_glob",
]

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
    return Path(_real(working_dir, path))


def _real(working_dir: Path | str, path: str) -> str:
    if "\0" in path:
        raise ValueError("the path contains a NUL character")
    if os.path.join(working_dir, path) == path:  # absolute: the working directory plays no part
        return os.path.realpath(path)
    return os.path.realpath(os.path.join(os.path.realpath(working_dir), path))


def locate(root: str, working_dir: str, path: str) -> Location:
    """Place ``path`` (as a tool in ``working_dir`` would open it) relative to the project ``root``.

    ``root`` must already be resolved (``os.path.realpath``). The inside/outside decision compares resolved paths
    component by component and respecting case, so no spelling of an outside path can pass for an inside one.
    Raises ``ValueError`` for a path containing a NUL character.
    """
    # String operations rather than pathlib: the search tools place every file they reach with this.
    resolved = _real(working_dir, path)
    spelled = os.path.normpath(os.path.join(os.path.abspath(working_dir), path))
    relative: str | None = None
    try:
        inside = os.path.commonpath([root, resolved]) == root
    except ValueError:  # different drives
        inside = False
    if inside:
        relative = _posix(resolved[len(root) :].lstrip(os.sep)) or "."
    return Location(_posix(resolved), _posix(spelled), relative)


def place_resolved(root: str, resolved: str) -> Location:
    """Place ``resolved``, an absolute path with no ``.``, ``..`` or link left in it (the kernel's path of an opened
    file, say), relative to the project ``root`` (resolved too), as :func:`locate` places a path that leads there,
    without looking anything up by name."""
    inside = resolved == root or resolved.startswith(root.rstrip(os.sep) + os.sep)
    relative = (_posix(resolved[len(root) :].lstrip(os.sep)) or ".") if inside else None
    return Location(_posix(resolved), _posix(resolved), relative)


def _posix(path: str) -> str:
    return path if os.sep == "/" else PurePath(path).as_posix()


def split_glob(pattern: str) -> tuple[str, list[str]] | None:
    """A brace-free glob ``pattern`` as its literal base directory and the segments matched below it.

    The base is the run of segments before the first one holding a wildcard, relative to the search base or
    absolute: ``../data/*.csv`` → ``("../data", ["*.csv"])``, ``**/*.py`` → ``("", ["**", "*.py"])``, ``/etc/*`` →
    ``("/etc", ["*"])``. Empty segments after the base are dropped. Returns ``None`` when a ``..``
    segment follows a wildcard, because then the reach depends on what the wildcard matches (a link, say) and
    cannot be told from the text.
    """
    drive, rest = os.path.splitdrive(pattern)
    separators = re.escape(os.sep + (os.altsep or ""))
    literal: list[str] = []
    below: list[str] = []
    for segment in re.split(f"[{separators}]", rest):
        if below:
            if segment == "..":
                return None
            if segment:
                below.append(segment)
        elif _GLOB_MAGIC.search(segment):
            below.append(segment)
        else:
            literal.append(segment)
    base = os.sep.join(literal)
    if not base and rest[:1] in (os.sep, os.altsep or os.sep):
        base = os.sep  # `/*` starts at the root, not at the search base
    return drive + base, below


def glob_base(pattern: str) -> str | None:
    """The directory a brace-free glob ``pattern`` starts its search from (see :func:`split_glob`).

    ``../data/*.csv`` → ``../data``, ``**/*.py`` → ``""``, ``/etc/*`` → ``/etc``; ``None`` when a ``..`` segment
    follows a wildcard. Expand braces first (:func:`~hive_core.permissions.glob.expand_braces`): ``{..,x}/*`` has a base per variant.
    """
    split = split_glob(pattern)
    return None if split is None else split[0]
