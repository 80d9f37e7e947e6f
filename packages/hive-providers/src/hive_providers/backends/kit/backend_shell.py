"""The shell every CLI backend has, whatever its wire: :class:`BackendShell`, and :class:`TurnProcessBackend` for
the CLIs started once per turn (Claude Code, Pi, OMP).

The shell holds what a backend is made from (its :class:`~.specs.LaunchSpec` and :class:`~.specs.BackendOptions`),
the CLI's session id (the options' ``resume`` until a turn reports one), the hive call ids given out across turns,
the process id of the last CLI started, and :meth:`~BackendShell.probe`. A backend adds its command line, its
environment and its turn.
"""

from __future__ import annotations

import itertools

from hive_core.backends import BackendProbe
from hive_core.child_processes import SupervisedProcess
from hive_providers.backends.kit.cli_process import open_cli
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.probe import probe_backend

__all__ = ["BackendShell", "TurnProcessBackend"]


class BackendShell:
    """What every CLI backend holds and answers the same way (see the module)."""

    def __init__(self, spec: LaunchSpec, options: BackendOptions) -> None:
        self.name = spec.name
        """The backend's canonical name."""
        self.spec = spec
        """How the CLI is found and started."""
        self.options = options
        """Where it works and who judges and answers its requests."""
        self.last_pid: int | None = None
        """The process id of the last CLI started (its process group's too)."""
        self.call_ids: set[str] = set()
        """Every hive call id given out, across turns: one session never repeats one."""
        self._session_id: str | None = options.resume
        self._forking = options.fork and options.resume is not None
        """Whether the resumed session is still to be copied, not continued (until the copy has an id)."""

    @property
    def session_id(self) -> str | None:
        """The CLI's session id once a turn reported it (or the id to resume, before)."""
        return self._session_id

    async def probe(self) -> BackendProbe:
        """Whether the CLI is installed here, and its version."""
        return await probe_backend(self.spec, self.options)

    async def aclose(self) -> None:
        """Stop what the backend keeps running between turns (nothing, unless a backend says otherwise)."""


class TurnProcessBackend(BackendShell):
    """A backend whose every turn runs in a CLI process of its own (the process ends with the turn)."""

    def __init__(self, spec: LaunchSpec, options: BackendOptions) -> None:
        super().__init__(spec, options)
        self.last_command: list[str] | None = None
        """The command line of the last turn."""
        self._request_numbers = itertools.count(1)

    async def open_process(self, command: list[str], env: dict[str, str]) -> SupervisedProcess:
        """Start one turn's CLI (see :func:`~.cli_process.open_cli`), remembered as the last one."""
        self.last_command = command
        process = await open_cli(self.name, command, cwd=self.options.cwd, env=env)
        self.last_pid = process.pid
        return process

    def next_request_id(self, kind: str) -> str:
        """A request id of hive's own, unique across the backend's turns (``hive_<kind>_<n>``)."""
        return f"hive_{kind}_{next(self._request_numbers)}"
