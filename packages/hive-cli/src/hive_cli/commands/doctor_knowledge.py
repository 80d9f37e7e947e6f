"""``hive doctor``'s check of what the agent is told of the project: the AGENTS.md files a run from here reads,
and the skills: each root, the skills offered, and every problem found."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from hive_core.agents_md import AgentsMdSettings
from hive_core.agents_md import read_agents_md
from hive_core.config import LoadedConfig
from hive_core.skills import SkillsSettings
from hive_core.skills import discover_skills

__all__ = ["Reporter", "check_knowledge"]


class Reporter(Protocol):
    """Where the check's lines go (doctor's report)."""

    def ok(self, text: str) -> None:
        """A check that passed."""
        ...

    def warn(self, text: str, advice: str | None = None) -> None:
        """A problem that does not stop a run, with advice."""
        ...


def check_knowledge(report: Reporter, loaded: LoadedConfig, root: Path, cwd: Path) -> None:
    """Report the AGENTS.md files read from ``root`` down to ``cwd``, and the skills of the configuration."""
    agents_settings = AgentsMdSettings.from_config(loaded)
    agents = read_agents_md(root, cwd, agents_settings)
    if not agents_settings.enabled:
        report.ok("AGENTS.md: not read (agentsMd.enabled is false)")
    elif agents.files:
        size = sum(len(file.text) for file in agents.files)
        names = ", ".join(file.relative for file in agents.files)
        report.ok(f"AGENTS.md: {names} ({size:,} characters in the instructions)")
    else:
        report.ok("AGENTS.md: none from the project root down to here")
    for line in (*agents.warnings, *agents.notes):
        report.warn(
            f"AGENTS.md: {line}", "a file left out or cut can be shortened, or agentsMd.maxCharacters raised"
        )

    settings = SkillsSettings.from_config(loaded)
    if not settings.roots:
        report.ok("skills: off (skills.roots names no directory)")
        return
    catalog = discover_skills(settings, root)
    for found in catalog.roots:
        if found.exists:
            report.ok(f"skills root {found.written}: {found.skills} skill(s) in {found.path}")
        else:
            report.warn(
                f"skills root {found.written}: {found.path} is not a directory",
                "create it or drop it from skills.roots",
            )
    names = ", ".join(skill.name for skill in catalog.skills)
    report.ok(f"skills offered: {names or 'none'}")
    for diagnostic in catalog.diagnostics:
        report.warn(f"skills: {diagnostic}", "fix the SKILL.md named, or the skills setting")
