"""The "# Skills" section of the instructions: what each offered skill is for, and how to load one."""

from __future__ import annotations

from typing import Final

from .catalog import SkillCatalog

__all__ = ["SKILLS_HEADER", "skills_section"]

SKILLS_HEADER: Final = (
    "# Skills\n\n"
    "Skills are instructions and files for particular kinds of task. When a task matches a skill's "
    "description, call load_skill with the skill's name to read its instructions before you start, and follow "
    "them. load_skill with a path reads one of the files the instructions mention (a reference, a template, a "
    "script to read); it only reads, it never runs anything."
)
"""The fixed start of the section."""


def skills_section(catalog: SkillCatalog, max_characters: int) -> str:
    """The section listing ``catalog``'s skills as ``- **name**: description`` lines (each description on one
    line), or ``""`` when it offers none.

    The lines, in the catalog's order, take at most ``max_characters`` characters (newlines counted); the skills
    whose lines do not fit are left out of the listing, a last line says how many, and load_skill still loads
    them by name.
    """
    if not catalog.skills:
        return ""
    lines: list[str] = []
    used = 0
    for skill in catalog.skills:
        line = f"- **{skill.name}**: {' '.join(skill.description.split())}"
        if used + len(line) + 1 > max_characters:
            break
        lines.append(line)
        used += len(line) + 1
    left_out = len(catalog.skills) - len(lines)
    if left_out:
        lines.append(
            f"({left_out} more skill{'s are' if left_out > 1 else ' is'} not listed here, for want of room; "
            "load_skill with a wrong name lists every skill's name, and loads any of them by name.)"
        )
    return SKILLS_HEADER + "\n\n" + "\n".join(lines)
