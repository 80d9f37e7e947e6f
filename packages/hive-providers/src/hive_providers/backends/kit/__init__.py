"""The floor every coding-agent backend stands on, whatever its CLI's wire.

- :mod:`.specs`: what a backend is launched from (:class:`~.specs.LaunchSpec`) and with
  (:class:`~.specs.BackendOptions`).
- :mod:`.errors`: why a backend cannot be named, found or started, and why its process failed a turn.
- :mod:`.transport`: a CLI process's stdin and stdout as a message stream (:class:`~.transport.ProcessTransport`),
  one JSON line a message unless a subclass frames them otherwise (``frame``).
- :mod:`.cli_process`: a CLI's process from start to end: how it ended, and the one stop ladder.
- :mod:`.handshake`: a CLI's first request (``initialize``), bounded, and how its failure is said.
- :mod:`.kept_connection`: whether the CLI a backend keeps between turns can serve another one.
- :mod:`.backend_shell`: what every backend holds (spec, options, session id, fork flag, call ids, pid, probe).
- :mod:`.process_turn`: one turn of a CLI that is started per turn and read line by line.
- :mod:`.tool_calls`: tool-call identity and the mapping of a CLI's tools onto hive's (:class:`~.tool_calls.ToolCallTracker`).
- :mod:`.judging`: one call of a CLI judged under hive's rules.
- :mod:`.json_values`: reading loosely typed JSON values (the one place an unknown value is narrowed to a type).
- :mod:`.ask_user_question`, :mod:`.subagent_work`: texts and shapes more than one CLI shares (a turn's
  subagents and their ``agent_work`` snapshots: :class:`~.subagent_work.Subagents`).

Nothing here imports a backend (``acp/``, ``claude/``, ``codex/``, ...); every backend imports from here.
"""

__all__: list[str] = []
