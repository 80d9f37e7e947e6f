"""The flags every command that opens a session takes (``hive``, ``hive -p``, ``hive run``): which model or coding-agent
CLI runs the turns, and what is pre-approved; and the :class:`~hive_cli.assemble.HostOptions` they make."""

from __future__ import annotations

import sys
from typing import TypedDict

from hive_cli.assemble import HostOptions

__all__ = ["SessionFlags", "host_options"]


class SessionFlags(TypedDict):
    """What click passes for ``-m``, ``--provider``, ``--agent``, ``--agent-mode``, ``--model-endpoint`` and
    ``--allow`` (the names of :class:`~hive_cli.assemble.HostOptions`' fields)."""

    model: str | None
    provider: str | None
    agent: str | None
    agent_mode: str | None
    model_endpoint: str | None
    allow: tuple[str, ...]


def host_options(flags: SessionFlags, *, agent_named: bool = False) -> HostOptions | None:
    """The host options of ``flags``; ``None`` after saying on stderr that ``--agent-mode`` or
    ``--model-endpoint`` came without the agent they apply to (a usage error: exit 2). ``agent_named``: the agent
    comes from elsewhere (the session resumed)."""
    if (flags["agent_mode"] or flags["model_endpoint"]) and not (flags["agent"] or agent_named):
        sys.stderr.write("hive: --agent-mode and --model-endpoint need --agent NAME\n")
        return None
    return HostOptions(**flags)
