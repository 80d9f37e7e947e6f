"""A coding-agent CLI that speaks ACP, as an :class:`~hive_core.backends.AgentBackend`.

Each turn leases a warm :class:`~.connection.AcpConnection` from the pool (by the options' session key and a
fingerprint of what makes a process reusable), or keeps one of its own without a pool; opens or reuses the CLI's
session (resuming the options' ``resume`` id on the first turn, or with ``fork`` copying it with the unstable
``session/fork``, which an agent that does not advertise ``sessionCapabilities.fork`` refuses with
:class:`~hive_providers.backends.kit.errors.BackendUnavailable` before any session is opened); maps the turn's
updates to hive events and serves its requests under hive's rules; and ends with one ``turn_end``. Cancelled,
it ends with ``stop_reason: cancelled`` and every started tool closed; failing (a CLI that exits at start,
prints no JSON, dies mid-turn) it raises an error the runner classifies, bounded by the startup timeout and by
the process's end.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING
from typing import Any

import anyio
import msgspec

from hive_core.tool_round import CANCELLED_CALL_TEXT
from hive_core.tools import EventSink
from hive_protocol import UserMessageRequest
from hive_providers.backends.kit.backend_shell import BackendShell
from hive_providers.backends.kit.cli_process import FAILED_CALL_TEXT
from hive_providers.backends.kit.errors import BackendUnavailable
from hive_providers.backends.kit.kept_connection import usable
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.offline import cli_environment
from hive_providers.backends.pool import fingerprint

from .connection import AcpConnection
from .connection import launch_command
from .services import AcpClientServices
from .update_types import decode_result
from .updates import TurnMapper

if TYPE_CHECKING:
    from hive_providers.backends.pool import AcpSessionPool

__all__ = ["AcpBackend"]

_log = logging.getLogger(__name__)


class AcpBackend(BackendShell):
    """Drives one ACP-speaking CLI: one hive session's turns in the CLI's own session."""

    def __init__(
        self, spec: LaunchSpec, options: BackendOptions, *, pool: AcpSessionPool[Any] | None = None
    ) -> None:
        super().__init__(spec, options)
        self.pool = pool if spec.poolable else None
        """The pool warm processes are leased from; ``None``: the backend keeps its own between turns."""
        self.last_connection: AcpConnection | None = None
        """The connection the last turn ran on (its process id, its notes)."""
        self._connection: AcpConnection | None = None

    def fingerprint(self) -> str:
        """What a warm process must share to serve this backend: program, arguments, environment, directory,
        mode, model and endpoint."""
        options = self.options
        endpoint = None if options.endpoint is None else msgspec.to_builtins(options.endpoint)
        return fingerprint(
            launch_command(self.spec, options),
            sorted(options.environment.items()),
            str(options.cwd),
            options.mode,
            options.model,
            endpoint,
        )

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn in the CLI."""
        if self.pool is None:
            connection = await self._own_connection()
            try:
                await self._turn(connection, request.content, emit)
            finally:
                if connection.faulted:
                    self._connection = None
                    with anyio.CancelScope(shield=True):
                        await connection.aclose()
            return
        async with self.pool.lease(
            self.name, self.options.session_key, self.fingerprint(), self._create
        ) as leased:
            connection: AcpConnection = leased
            await self._turn(connection, request.content, emit)

    async def aclose(self) -> None:
        """Stop the CLI this backend keeps (a pooled one stays the pool's)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()

    async def _own_connection(self) -> AcpConnection:
        connection = self._connection = await usable(self._connection)
        if connection is None:
            connection = self._connection = await self._create()
        return connection

    async def _create(self) -> AcpConnection:
        connection = AcpConnection()
        await connection.start(self.spec, self.options, self._environment())
        return connection

    def _environment(self) -> dict[str, str]:
        return cli_environment(self.spec, self.options)

    async def _ensure_session(self, connection: AcpConnection) -> None:
        wanted = self._session_id
        if self._forking:
            if not connection.can_fork:
                # Before any session is opened: the original is left as it was, and nothing ran.
                with anyio.CancelScope(shield=True):
                    await connection.aclose(0.0)
                raise BackendUnavailable(
                    f"{self.name} cannot fork session {wanted}: it does not offer session/fork"
                )
            self._session_id = await connection.open_session(wanted, fork=True)
            self._forking = False
            return
        current = connection.session_id
        if current is not None and (
            current == wanted or (wanted is None and self.options.session_key is not None)
        ):
            self._session_id = current
            return
        self._session_id = await connection.open_session(wanted)

    async def _turn(self, connection: AcpConnection, text: str, emit: EventSink) -> None:
        self.last_connection, self.last_pid = connection, connection.pid
        options = self.options
        tracker = ToolCallTracker(emit, taken=self.call_ids)
        mapper = TurnMapper(emit, tracker)
        services = AcpClientServices(
            emit=emit,
            tracker=tracker,
            cwd=options.cwd,
            policy=options.policy,
            approvals=options.approvals,
            questions=options.questions,
            sandbox=options.sandbox,
        )
        try:
            await self._ensure_session(connection)
            result = await connection.prompt(text, mapper, services)
        except anyio.get_cancelled_exc_class():
            # The runner writes the turn_end: it alone knows a cancel (stop_reason cancelled) from a deadline
            # (error timeout).
            tracker.close_all(CANCELLED_CALL_TEXT)
            raise
        except BaseException:
            with contextlib.suppress(Exception):
                tracker.close_all(FAILED_CALL_TEXT)
            raise
        else:
            decoded = decode_result(result)
            emit(mapper.finish(decoded, cancelled=decoded.stop_reason == "cancelled"))
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await services.aclose()
                except Exception:
                    _log.exception("closing the ACP client services failed")
