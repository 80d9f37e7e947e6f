"""AGENTS.md: the project's instructions for agents, added to the agent's instructions.

The files are read from the project root (the repository root) down to the working directory: in each directory
its ``AGENTS.md``, or its ``CLAUDE.md`` when it has no ``AGENTS.md``. They are added root first, nearest last, each
under a heading with its path relative to the project root, so the model knows which part of the tree each one
speaks for and that a nearer one overrides a farther one.

The limit (``agentsMd.maxCharacters``) counts the files' text, not the headings. The nearest file matters most,
so files are taken from the nearest up: those that fit whole are kept whole; the first that does not fit keeps its
beginning, up to the limit, and the files above it are left out. A note at the head of the section says what was
cut or left out, and :attr:`AgentsMd.notes` says it to the user.

A file that cannot be read (not UTF-8, not a regular file, a link leading out of the project, unreadable) is left
out with a warning; the others still load. A project that is not trusted gets its AGENTS.md read all the same: it
is text for the model, like any file the agent reads, and lowers no protection (the rules, the sandbox and the
approvals judge every call whatever it says).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final
from typing import cast

from hive_core.config import LoadedConfig
from hive_core.skills._files import ReadProblem
from hive_core.skills._files import read_text_inside

__all__ = ["AGENTS_FILE", "FALLBACK_FILE", "AgentsMd", "AgentsMdFile", "AgentsMdSettings", "read_agents_md"]

AGENTS_FILE: Final = "AGENTS.md"
"""The file read in each directory."""
FALLBACK_FILE: Final = "CLAUDE.md"
"""The file read instead in a directory that has no :data:`AGENTS_FILE`."""

_HEADER: Final = (
    "# Project instructions (AGENTS.md)\n\n"
    "The project's AGENTS.md files, from the project root down to the working directory. Each applies to the "
    "files under its own directory; where two disagree, the later (nearer) one wins."
)


@dataclass(frozen=True)
class AgentsMdSettings:
    """The ``agentsMd`` section of the configuration."""

    enabled: bool = True
    """Whether AGENTS.md files are read."""
    max_characters: int = 32_000
    """Characters of AGENTS.md text at most (the headings hive adds not counted)."""

    @classmethod
    def from_config(cls, loaded: LoadedConfig) -> AgentsMdSettings:
        """The ``agentsMd`` section of ``loaded`` (defaults when its schema has none)."""
        section = loaded.section("agentsMd") if "agentsMd" in loaded.schema else {}
        limit = section.get("maxCharacters")
        return cls(
            enabled=bool(section.get("enabled", True)),
            max_characters=cast("int", limit) if limit is not None else 32_000,
        )


@dataclass(frozen=True)
class AgentsMdFile:
    """One file as it goes into the instructions."""

    relative: str
    """Its path from the project root, with ``/`` separators (``AGENTS.md``, ``src/CLAUDE.md``)."""
    text: str
    """What of it is kept."""
    cut: bool = False
    """Whether only its beginning is kept."""


@dataclass(frozen=True)
class AgentsMd:
    """The AGENTS.md files of one working directory, within the limit."""

    files: tuple[AgentsMdFile, ...] = ()
    """The files kept, root first."""
    left_out: tuple[str, ...] = ()
    """The files left out for want of room (relative paths, root first)."""
    warnings: tuple[str, ...] = ()
    """One line for each file that could not be read."""
    max_characters: int = 32_000
    """The limit they were read under."""

    @property
    def notes(self) -> tuple[str, ...]:
        """What the limit cut, for the user (empty when everything fit)."""
        note = self._limit_note()
        return (note,) if note else ()

    def _limit_note(self) -> str:
        parts = [
            f"{file.relative} is cut to its first {len(file.text):,} characters"
            for file in self.files
            if file.cut
        ]
        if self.left_out:
            parts.append(f"{', '.join(self.left_out)} {'are' if len(self.left_out) > 1 else 'is'} left out")
        if not parts:
            return ""
        return (
            f"AGENTS.md text is limited to {self.max_characters:,} characters (agentsMd.maxCharacters): "
            f"{'; '.join(parts)}."
        )

    @property
    def section(self) -> str:
        """The instructions' section, or ``""`` when there is no file."""
        if not self.files:
            return ""
        blocks = [_HEADER]
        note = self._limit_note()
        if note:
            blocks.append(f"(Note: {note})")
        for file in self.files:
            text = file.text + ("\n\n[… the rest of this file is cut]" if file.cut else "")
            blocks.append(f"## {file.relative}\n\n{text}")
        return "\n\n".join(blocks)


def _directories(root: Path, cwd: Path) -> list[Path]:
    """``root`` and each directory below it down to ``cwd`` (just ``root`` when ``cwd`` is not under it)."""
    try:
        below = cwd.relative_to(root).parts
    except ValueError:
        below = ()
    found = [root]
    for part in below:
        found.append(found[-1] / part)
    return found


def read_agents_md(root: Path, cwd: Path, settings: AgentsMdSettings | None = None) -> AgentsMd:
    """The AGENTS.md files from the project ``root`` down to ``cwd``, within ``settings.max_characters``; no file
    when ``settings.enabled`` is false. Never raises for what a file holds."""
    settings = settings or AgentsMdSettings()
    if not settings.enabled:
        return AgentsMd(max_characters=settings.max_characters)
    root = root.resolve()
    cwd = cwd.resolve()
    if cwd.is_file():
        cwd = cwd.parent
    limit = settings.max_characters
    # Read no more of a file than could be kept: a UTF-8 character is at most four bytes.
    read_limit = 4 * limit + 4
    found: list[tuple[str, str, bool]] = []
    warnings: list[str] = []
    for directory in _directories(root, cwd):
        for name in (AGENTS_FILE, FALLBACK_FILE):
            path = directory / name
            if not path.is_file() and not path.is_symlink():
                continue
            relative = path.relative_to(root).as_posix()
            try:
                read = read_text_inside(path, root, limit=read_limit, cut_at=True)
            except ReadProblem as exc:
                warnings.append(f"{relative} is left out of the instructions: {exc}")
            else:
                text = read.text.strip()
                if text:
                    found.append((relative, text, read.cut))
            break  # a directory's AGENTS.md, readable or not, stands in for its CLAUDE.md
    kept: list[AgentsMdFile] = []
    left_out: list[str] = []
    room = limit
    for relative, text, cut in reversed(found):
        if room <= 0:
            left_out.append(relative)
        elif len(text) <= room and not cut:
            kept.append(AgentsMdFile(relative, text))
            room -= len(text)
        else:
            kept.append(AgentsMdFile(relative, text[:room].rstrip(), cut=True))
            room = 0
    return AgentsMd(
        files=tuple(reversed(kept)),
        left_out=tuple(reversed(left_out)),
        warnings=tuple(warnings),
        max_characters=limit,
    )
