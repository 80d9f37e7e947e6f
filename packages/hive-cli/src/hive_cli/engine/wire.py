"""What front ends, the session workflow and the workers pass each other through the engine.

Plain dataclasses of strings and numbers, so that the engine's own converter carries them and the workflow's
sandbox imports nothing else of hive. Requests travel as the protocol's own JSON lines, decoded by whoever acts on
them.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

__all__ = ["SessionSpec", "SessionStart", "TurnInput", "TurnOutcome"]


@dataclass(frozen=True)
class SessionSpec:
    """How a worker opens a session: what ``hive serve`` was asked for, nothing a worker would run unchecked."""

    session_id: str
    """The session's id: also the workflow's id."""
    working_directory: str
    """The project's folder: a path every worker sees (a shared volume)."""
    agent: str | None = None
    """A coding-agent CLI's name, or ``None`` for hive's own loop."""
    model: str | None = None
    provider: str | None = None
    model_endpoint: str | None = None
    agent_mode: str | None = None
    allow: list[str] = field(default_factory=list[str])
    """Pre-approval rules the front end was started with (``--allow``)."""


@dataclass(frozen=True)
class SessionStart:
    """The workflow's input: the session, and what a run before a continue-as-new left."""

    spec: SessionSpec
    turns: int = 0
    """Turns the session ran before this run of the workflow."""
    inbox: list[str] = field(default_factory=list[str])
    """Request lines received and not yet acted on."""


@dataclass(frozen=True)
class TurnInput:
    """One activity: run (or go on with) the session's ``turn``-th turn on a worker."""

    spec: SessionSpec
    turn: int
    """The turn's number in the session (1-based)."""
    message: str | None = None
    """The ``user_message`` line that starts the turn; ``None`` when a suspended turn goes on with answers."""
    answers: list[str] = field(default_factory=list[str])
    """``hitl_response`` lines for the approvals the suspended turn waits for."""
    cancel: bool = False
    """Whether the turn is to be cancelled as soon as it runs (a cancel that came while it waited)."""


@dataclass(frozen=True)
class TurnOutcome:
    """How an activity left its turn: ended, or waiting for the answers to ``waiting`` (no worker holds it)."""

    waiting: list[str] = field(default_factory=list[str])
    """The ids of the approvals the turn waits for; empty when the turn ended."""


@dataclass(frozen=True)
class TurnFailure:
    """The closing activity of a turn the engine gave up on (every try failed): end it in the session's log."""

    spec: SessionSpec
    turn: int
    """The turn's number in the session (1-based)."""
    reason: str
    """Why the last try failed, as the engine reported it."""
