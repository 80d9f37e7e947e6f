"""Finding skills: the ``skills`` section of the configuration, the roots searched, and what was found.

Each root (``skills.roots``, in order; ``~`` is the user's home, a relative root is taken from the project root,
which is also the directory hive's tools work in) is searched for its immediate subdirectories that hold a
``SKILL.md``, in the order of their names (by code point). A skill whose SKILL.md the validator rejects is not
loaded; a skill whose name an earlier one already took (an earlier root wins) is shadowed. ``skills.enabled``,
when set, selects the skills offered and their order; ``skills.exclude`` removes skills. Every problem becomes a
:class:`SkillDiagnostic`; nothing here raises for what a file or a setting holds.

A project's skills (and roots its own configuration names) load whether the user trusts the project or not:
like AGENTS.md, a skill is text for the model and grants nothing, and load_skill reads only inside a directory
that holds a SKILL.md, so a root cannot open the user's other files to the model.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from typing import Literal
from typing import cast

from hive_core.config import LoadedConfig

from ._files import ReadProblem
from ._files import read_text_inside
from .frontmatter import SkillMetadata
from .frontmatter import parse_skill_file

__all__ = [
    "MAX_SKILL_FILE_BYTES",
    "SKILL_FILE",
    "Skill",
    "SkillCatalog",
    "SkillDiagnostic",
    "SkillRoot",
    "SkillsSettings",
    "discover_skills",
]

SKILL_FILE: Final = "SKILL.md"
"""The file that makes a directory a skill."""
MAX_SKILL_FILE_BYTES: Final = 256 * 1024
"""The largest SKILL.md, or other file of a skill, that is read (bytes)."""

DiagnosticKind = Literal["invalid", "unreadable", "shadowed", "unknown_enabled", "dropped_fields", "root"]
"""What a diagnostic is about: a SKILL.md rejected or unreadable (the skill is not loaded), a skill shadowed by
an earlier one of the same name, a name in ``skills.enabled`` that no root has, unknown frontmatter keys dropped
(the skill is loaded), or a root that cannot be listed."""


@dataclass(frozen=True)
class SkillsSettings:
    """The ``skills`` section of the configuration."""

    roots: tuple[str, ...] = ()
    """The directories searched, in order, as written; none: skills are off."""
    enabled: tuple[str, ...] | None = None
    """The skills offered, in this order; ``None``: every skill found, in the order found."""
    exclude: tuple[str, ...] = ()
    """Skills never offered."""
    max_metadata_characters: int = 12_000
    """Characters of the skill lines of the instructions' listing at most."""
    accept_unknown_fields: bool = False
    """Load a skill whose frontmatter has unknown keys, dropping them with a warning."""

    @classmethod
    def from_config(cls, loaded: LoadedConfig) -> SkillsSettings:
        """The ``skills`` section of ``loaded`` (defaults when its schema has none)."""
        section = loaded.section("skills") if "skills" in loaded.schema else {}
        enabled = section.get("enabled")
        limit = section.get("maxMetadataCharacters")
        return cls(
            roots=tuple(cast("list[str]", section.get("roots") or [])),
            enabled=tuple(cast("list[str]", enabled)) if enabled is not None else None,
            exclude=tuple(cast("list[str]", section.get("exclude") or [])),
            max_metadata_characters=cast("int", limit) if limit is not None else 12_000,
            accept_unknown_fields=bool(section.get("acceptUnknownFields", False)),
        )


@dataclass(frozen=True)
class Skill:
    """A valid skill."""

    metadata: SkillMetadata
    """Its frontmatter."""
    directory: Path
    """Its directory, resolved (every file load_skill reads lies in it)."""
    body: str
    """Its SKILL.md after the frontmatter: the instructions load_skill returns."""

    @property
    def name(self) -> str:
        """Its name."""
        return self.metadata.name

    @property
    def description(self) -> str:
        """Its description."""
        return self.metadata.description


@dataclass(frozen=True)
class SkillDiagnostic:
    """One problem found while looking for skills."""

    kind: DiagnosticKind
    """What it is about."""
    message: str
    """What is wrong, naming the file or setting."""
    path: Path | None = None
    """The SKILL.md or root it is about, when there is one."""

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class SkillRoot:
    """One configured root and what was found in it."""

    written: str
    """The root as configured."""
    path: Path
    """The directory it names."""
    exists: bool
    """Whether that is a directory."""
    skills: int = 0
    """The valid skills found in it (shadowed ones included)."""


@dataclass(frozen=True)
class SkillCatalog:
    """The skills offered, and everything found on the way."""

    skills: tuple[Skill, ...] = ()
    """The skills offered to the model, in order (enabled and not excluded)."""
    diagnostics: tuple[SkillDiagnostic, ...] = ()
    """The problems, in the order found."""
    roots: tuple[SkillRoot, ...] = ()
    """The roots searched, in order."""

    def get(self, name: str) -> Skill | None:
        """The offered skill called ``name``, or ``None``."""
        return next((skill for skill in self.skills if skill.name == name), None)


def _root_path(written: str, project_root: Path) -> Path:
    return Path(project_root, Path(written).expanduser()).absolute()


def _children(directory: Path) -> list[Path]:
    # Sorted by the names' code points, as an ordinal comparison does, so the order is the same everywhere.
    return sorted((entry for entry in directory.iterdir() if entry.is_dir()), key=lambda entry: entry.name)


def discover_skills(settings: SkillsSettings, project_root: Path) -> SkillCatalog:
    """Search ``settings.roots`` (relative ones from ``project_root``) and select the skills to offer."""
    found: dict[str, Skill] = {}
    diagnostics: list[SkillDiagnostic] = []
    roots: list[SkillRoot] = []
    seen_roots: set[Path] = set()
    for written in settings.roots:
        path = _root_path(written, project_root)
        if not path.is_dir():
            roots.append(SkillRoot(written, path, exists=False))
            continue
        resolved = path.resolve()
        if resolved in seen_roots:  # the same directory written twice would shadow all its own skills
            continue
        seen_roots.add(resolved)
        try:
            children = _children(path)
        except OSError as exc:
            diagnostics.append(
                SkillDiagnostic(
                    "root", f"{path}: the skills root cannot be listed ({exc.strerror or exc})", path
                )
            )
            roots.append(SkillRoot(written, path, exists=True))
            continue
        count = 0
        for child in children:
            skill = _candidate(child, settings.accept_unknown_fields, diagnostics)
            if skill is None:
                continue
            count += 1
            earlier = found.get(skill.name)
            if earlier is not None:
                diagnostics.append(
                    SkillDiagnostic(
                        "shadowed",
                        f"{child / SKILL_FILE}: the skill '{skill.name}' is shadowed by the one in "
                        f"{earlier.directory} (an earlier root wins)",
                        child / SKILL_FILE,
                    )
                )
                continue
            found[skill.name] = skill
        roots.append(SkillRoot(written, path, exists=True, skills=count))
    offered = _select(found, settings, diagnostics)
    return SkillCatalog(tuple(offered), tuple(diagnostics), tuple(roots))


def _candidate(child: Path, accept_unknown: bool, diagnostics: list[SkillDiagnostic]) -> Skill | None:
    file = child / SKILL_FILE
    if not os.path.lexists(file):
        return None  # not a skill at all
    directory = child.resolve()
    try:
        text = read_text_inside(file, directory, limit=MAX_SKILL_FILE_BYTES).text
    except ReadProblem as exc:
        diagnostics.append(SkillDiagnostic("unreadable", f"{file}: not loaded: {exc}", file))
        return None
    parsed = parse_skill_file(text, child.name, accept_unknown_fields=accept_unknown)
    for warning in parsed.warnings:
        diagnostics.append(SkillDiagnostic("dropped_fields", f"{file}: {warning}", file))
    if parsed.metadata is None:
        diagnostics.append(
            SkillDiagnostic("invalid", f"{file}: not loaded: {'; '.join(parsed.problems)}", file)
        )
        return None
    return Skill(parsed.metadata, directory, parsed.body)


def _select(
    found: dict[str, Skill], settings: SkillsSettings, diagnostics: list[SkillDiagnostic]
) -> Sequence[Skill]:
    chosen: list[Skill] = []
    if settings.enabled is None:
        chosen = list(found.values())
    else:
        for name in dict.fromkeys(settings.enabled):
            skill = found.get(name)
            if skill is None:
                diagnostics.append(
                    SkillDiagnostic(
                        "unknown_enabled",
                        f"skills.enabled names '{name}', but no root has a valid skill of that name",
                    )
                )
            else:
                chosen.append(skill)
    excluded = set(settings.exclude)
    return [skill for skill in chosen if skill.name not in excluded]
