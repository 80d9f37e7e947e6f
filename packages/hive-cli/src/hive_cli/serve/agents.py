"""The host side of the agent endpoints: a session whose turns run in an agent process that connects back.

An agent (``hive run --http``, or any agent built on the same contract) announces itself with ``POST
/api/agent/{id}/ready``, reads the session's requests from ``GET /api/agent/{id}/inbox`` (Server-Sent Events, ``id:``
the request's position; with ``Last-Event-ID`` it resumes after it, without it a new agent gets what no earlier one
was sent) and posts its events to ``POST /api/agent/{id}/events`` (JSON Lines; ``Hive-Event-Position`` numbers the
batch's first line from 1 after ``ready``; a line the host already holds is kept once).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

from hive_cli.assemble import HostOptions
from hive_cli.engine.wire import SessionSpec
from hive_core.runners.http import EVENT_POSITION_HEADER

__all__ = [
    "EVENT_POSITION_HEADER",
    "AgentCommand",
    "AgentLink",
    "EventsRefused",
    "agent_flags",
    "session_spec",
]


class EventsRefused(Exception):
    """An events batch the host cannot place (a gap before it, or no position)."""


class AgentLink:
    """One session's inbox of requests for its agent, and the count of the agent's events taken since ``ready``."""

    def __init__(self) -> None:
        self.inbox: list[bytes] = []
        """Request lines for the agent, in order (the SSE id of ``inbox[i]`` is ``i + 1``)."""
        self.turns: list[int] = []
        """The inbox positions of its ``user_message`` lines."""
        self.delivered = 0
        """How many requests were sent on any inbox connection."""
        self.readies = 0
        """How many times an agent announced itself."""
        self._received = 0
        """The position of the last event taken from the current agent."""

    def add(self, line: bytes, *, turn: bool) -> None:
        """Queue one request line (``turn``: a ``user_message``)."""
        self.inbox.append(line)
        if turn:
            self.turns.append(len(self.inbox))

    def delivered_turns(self) -> int:
        """How many ``user_message`` lines were sent to an agent."""
        return sum(1 for position in self.turns if position <= self.delivered)

    def ready(self) -> None:
        """A (new) agent is up: its events count from 1."""
        self.readies += 1
        self._received = 0

    def take(self, first: str | None, body: bytes) -> list[bytes]:
        """The lines of an events batch not taken before, in order; raises :class:`EventsRefused` for a batch
        that does not follow what was taken."""
        if first is None or not first.strip().isdigit() or int(first) < 1:
            raise EventsRefused(f"the {EVENT_POSITION_HEADER} header must give the first event's position")
        position = int(first)
        if position > self._received + 1:
            raise EventsRefused(f"events {self._received + 1} to {position - 1} are missing")
        lines = [line for line in body.splitlines() if line.strip()]
        fresh = lines[self._received + 1 - position :]
        self._received += len(fresh)
        return fresh


@dataclass(frozen=True)
class AgentCommand:
    """How ``hive serve --isolate`` starts a session's agent: ``hive run --http`` back to this server."""

    base_url: str
    """The server's own address, as the agent reaches it."""
    environment: Mapping[str, str]
    """The agent's environment (the server's, with the token in ``HIVE_SERVE_TOKEN``)."""

    def command(self, session_id: str, options: HostOptions) -> list[str]:
        """The agent's command line for ``session_id`` with ``options``' backend, model and pre-approvals."""
        command = [
            sys.executable,
            "-m",
            "hive_cli",
            "run",
            "--http",
            self.base_url,
            "--session-id",
            session_id,
        ]
        return command + agent_flags(session_spec(session_id, options))


def session_spec(session_id: str, options: HostOptions) -> SessionSpec:
    """What opens ``session_id`` with ``options``' folder, backend, model and pre-approvals in another process."""
    return SessionSpec(
        session_id=session_id,
        working_directory=str(options.cwd),
        agent=options.agent,
        model=options.model,
        provider=options.provider,
        model_endpoint=options.model_endpoint,
        agent_mode=options.agent_mode,
        allow=list(options.allow),
    )


def agent_flags(spec: SessionSpec) -> list[str]:
    """The ``hive run`` flags that open a session with ``spec``'s backend, model and pre-approvals (for an agent
    process of ``hive serve --isolate``'s, or a turn on a ``hive worker``)."""
    flags: list[str] = []
    if spec.agent is not None:
        flags += ["--agent", spec.agent]
        if spec.model_endpoint is not None:
            flags += ["--model-endpoint", spec.model_endpoint]
        if spec.agent_mode is not None:
            flags += ["--agent-mode", spec.agent_mode]
    if spec.model is not None:
        flags += ["--model", spec.model]
    if spec.provider is not None:
        flags += ["--provider", spec.provider]
    for allowed in spec.allow:
        flags += ["--allow", allowed]
    return flags
