"""What the agent knows of the project before the first message: its AGENTS.md files and its skills.

Read once for each host that is built: the sections are added to the instructions of hive's own loop (the
small-model profile's too), ``load_skill`` to its tools when a skill is offered.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hive_core import Tool
from hive_core.agents_md import AgentsMdSettings
from hive_core.agents_md import read_agents_md
from hive_core.config import LoadedConfig
from hive_core.skills import SkillsSettings
from hive_core.skills import discover_skills
from hive_core.skills import load_skill_tool
from hive_core.skills import skills_section

__all__ = ["ProjectKnowledge", "project_knowledge"]


@dataclass(frozen=True)
class ProjectKnowledge:
    """The AGENTS.md and skills sections of the instructions, and the tool that loads skills."""

    instructions: str = ""
    """Added to the end of the instructions: ``""``, or the sections, each after a blank line."""
    tools: tuple[Tool, ...] = ()
    """``load_skill`` when a skill is offered, else nothing."""
    warnings: tuple[str, ...] = ()
    """Lines for the user: files left out, what the limit cut, skills with problems."""


def project_knowledge(loaded: LoadedConfig, root: Path, cwd: Path) -> ProjectKnowledge:
    """Read the AGENTS.md files from ``root`` down to ``cwd`` and the configured skills."""
    agents = read_agents_md(root, cwd, AgentsMdSettings.from_config(loaded))
    settings = SkillsSettings.from_config(loaded)
    catalog = discover_skills(settings, root)
    sections = [agents.section, skills_section(catalog, settings.max_metadata_characters)]
    warnings = [f"warning: {line}" for line in agents.warnings]
    warnings += list(agents.notes)
    problems = [each for each in catalog.diagnostics if each.kind != "dropped_fields"]
    if problems:
        count = len(problems)
        warnings.append(
            f"warning: {count} skill problem{'s' if count > 1 else ''} (`hive doctor` lists them): {problems[0]}"
            + (" …" if count > 1 else "")
        )
    return ProjectKnowledge(
        instructions="".join(f"\n\n{section}" for section in sections if section),
        tools=(load_skill_tool(catalog),) if catalog.skills else (),
        warnings=tuple(warnings),
    )
