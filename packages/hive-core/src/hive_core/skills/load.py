"""The ``load_skill`` tool: a skill's instructions, or one of its files, read from inside its directory only.

A path is taken relative to the skill's directory. An absolute path, a ``..`` part, or a symbolic link whose
target lies outside the directory is refused with a sentence saying why; so is a file that is not UTF-8 text or
larger than :data:`~hive_core.skills.catalog.MAX_SKILL_FILE_BYTES`. Nothing is ever run: a script is returned as
text. The tool only reads, so planning mode keeps it and the default rules allow it.
"""

from __future__ import annotations

import os
from pathlib import Path
from pathlib import PurePosixPath
from typing import Final

from hive_core.tools import Tool
from hive_core.tools import ToolOutcome

from ._files import ReadProblem
from ._files import is_inside
from ._files import read_text_inside
from .catalog import MAX_SKILL_FILE_BYTES
from .catalog import Skill
from .catalog import SkillCatalog

__all__ = ["LOAD_SKILL", "load_skill_tool", "read_skill"]

LOAD_SKILL: Final = "load_skill"
"""The tool's name."""

_LISTED_FILES: Final = 50


def _failed(text: str) -> ToolOutcome:
    return ToolOutcome(content=text, success=False, error=text)


def _files_of(skill: Skill) -> list[str]:
    """Up to :data:`_LISTED_FILES` files of the skill, relative to its directory (links not followed)."""
    found: list[str] = []
    for folder, dirs, files in os.walk(skill.directory):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder, name)
            if path.is_symlink() and not is_inside(path.resolve(), skill.directory):
                continue  # not readable through load_skill: not offered either
            found.append(path.relative_to(skill.directory).as_posix())
            if len(found) >= _LISTED_FILES:
                return found
    return found


def _escape(skill: Skill, path: str) -> str | None:
    """Why ``path`` would lead out of the skill's directory, or ``None`` when it stays inside."""
    whole = (
        "load_skill reads only files inside the skill's directory, named relative to it "
        "(like references/guide.md)"
    )
    if path.startswith(("/", "\\")) or path[1:2] == ":":  # a Windows drive too
        return f"{path!r} is an absolute path; {whole}."
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if ".." in parts:
        return f"{path!r} goes up out of the skill's directory with '..'; {whole}."
    current = skill.directory
    for part in parts:
        current = current / part
        if current.is_symlink() and not is_inside(current.resolve(), skill.directory):
            shown = current.relative_to(skill.directory).as_posix()
            return f"{shown!r} is a symbolic link that leads out of the skill's directory; {whole}."
    return None


def read_skill(catalog: SkillCatalog, name: str, path: str | None = None) -> ToolOutcome:
    """What ``load_skill(name, path)`` answers: the skill's body, or the file at ``path`` inside its directory;
    a failed outcome saying why when there is no such skill or file, or the path would lead out."""
    skill = catalog.get(name)
    if skill is None:
        names = ", ".join(skill.name for skill in catalog.skills) or "none"
        return _failed(f"There is no skill named {name!r}. The skills: {names}.")
    if path is None or not path.strip():
        return ToolOutcome(
            content=skill.body or f"(the skill '{name}' has no instructions beyond its description)"
        )
    if "\0" in path:
        return _failed("The path contains a NUL character.")
    escape = _escape(skill, path)
    if escape is not None:
        return _failed(escape)
    target = skill.directory / path
    try:
        read = read_text_inside(target, skill.directory, limit=MAX_SKILL_FILE_BYTES)
    except ReadProblem as exc:
        listing = ", ".join(_files_of(skill))
        return _failed(f"The skill '{name}' has no readable file {path!r}: {exc}. Its files: {listing}.")
    return ToolOutcome(content=read.text or f"({path} is empty)")


def load_skill_tool(catalog: SkillCatalog) -> Tool:
    """The ``load_skill`` tool over ``catalog``'s skills (read-only)."""

    def load_skill(name: str, path: str | None = None) -> ToolOutcome:
        """Load a skill listed under "# Skills" in your instructions: its instructions, or one of its files.

        Args:
            name: The skill's name, as listed.
            path: A file inside the skill's directory, relative to it (like references/guide.md). Leave out to
                read the skill's instructions.
        """
        return read_skill(catalog, name, path)

    return Tool(load_skill, name=LOAD_SKILL, read_only=True)
