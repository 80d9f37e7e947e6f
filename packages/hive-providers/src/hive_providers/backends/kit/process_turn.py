"""The skeleton of a turn run as one CLI process of its own (Claude Code, Pi, OMP).

:class:`ProcessTurn` drives the process a backend started for one turn: it reads stderr aside, runs the CLI's
handshake and prompt (:meth:`~ProcessTurn._start`), reads stdout line by line (:meth:`~ProcessTurn._dispatch`)
until the run ends (:meth:`~ProcessTurn._done`), and emits its ``turn_end`` (:meth:`~ProcessTurn.outcome`).
Cancelled, it closes its open calls, cancels its pending requests (each writes its own answer as it ends), sends
the CLI's interrupt (:meth:`~ProcessTurn._interrupt`) and reads on for ``cancel_grace`` seconds. Failing, it closes
its open calls and raises the error outside its task group, for the runner to classify. :meth:`~ProcessTurn.close`
ends the process and leaves none behind.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any
from typing import ClassVar
from typing import Final

import anyio
from anyio.abc import TaskGroup

from hive_core.child_processes import SupervisedProcess
from hive_core.tool_round import CANCELLED_CALL_TEXT
from hive_core.tools import EventSink
from hive_protocol import TurnEndEvent
from hive_providers.backends.kit.cli_process import FAILED_CALL_TEXT
from hive_providers.backends.kit.cli_process import CliProcess
from hive_providers.backends.kit.errors import AgentProcessError
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.kit.tool_calls import ToolCallTracker

__all__ = ["ProcessTurn"]

_WRITE_WAIT: Final = 1.0


class ProcessTurn:
    """One turn's process and stream; a subclass gives the CLI's parts (see the module)."""

    stream_format: ClassVar[str] = "JSON"
    """What the CLI's stdout speaks, as the message about its noise names it."""
    sweeps_after_exit: ClassVar[bool] = False
    """Whether :meth:`close` looks for processes carrying the child's mark even after it exited (else it kills
    what is left in its group: what left the group is killed as ``aclose`` reaps it)."""

    def __init__(
        self,
        spec: LaunchSpec,
        options: BackendOptions,
        process: SupervisedProcess,
        emit: EventSink,
        *,
        call_ids: set[str],
    ) -> None:
        self.name = spec.name
        """The backend's canonical name."""
        self.spec = spec
        self.options = options
        self.process = process
        self.cli = CliProcess(spec.name, process, stream_format=self.stream_format)
        """The process's life: its transport, how it ended, how it is stopped."""
        self.transport = self.cli.transport
        self.tracker = ToolCallTracker(emit, taken=call_ids)
        self._emit = emit
        self._pending: dict[str, anyio.CancelScope] = {}
        """The requests being answered, by id: cancelled with the turn."""
        self._started = False
        """Whether the CLI is known to run (its handshake answered): a failure since is not a start error."""
        self._cancelling = False

    @property
    def startup_timeout(self) -> float:
        """How long the CLI may take to start: the options', else the spec's."""
        if self.options.startup_timeout is not None:
            return self.options.startup_timeout
        return self.spec.startup_timeout

    async def run(self, prompt: str) -> None:
        """Run the turn to its ``turn_end``; raises what the runner classifies."""
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(self.transport.drain_stderr)
            try:
                await self._start(group, prompt)
                await self._read(group)
            except anyio.get_cancelled_exc_class():
                # The runner writes the turn_end: it alone knows a cancel from a deadline.
                with anyio.CancelScope(shield=True):
                    await self._cancel(group)
                raise
            except Exception as exc:
                # Raised below, outside the task group: the runner classifies the error itself, not a group.
                failure = exc
            finally:
                group.cancel_scope.cancel()
        if failure is not None:
            with contextlib.suppress(Exception):
                self._close_calls(FAILED_CALL_TEXT)
            raise failure
        self._emit(self.outcome())

    # -- the CLI's parts ------------------------------------------------------------------------------------

    def outcome(self) -> TurnEndEvent:
        """The ``turn_end`` of a run that ended; raises the error of one that failed."""
        raise NotImplementedError

    async def _start(self, group: TaskGroup, prompt: str) -> None:
        """The handshake and the prompt, until the CLI is known to run."""
        raise NotImplementedError

    def _dispatch(self, group: TaskGroup, message: dict[str, Any]) -> None:
        """Take one line of the CLI's output."""
        raise NotImplementedError

    def _done(self) -> bool:
        """Whether the run ended."""
        raise NotImplementedError

    def _interrupt(self) -> dict[str, Any] | None:
        """The message that asks the CLI to stop the run, or ``None`` where it takes none."""
        return None

    def _close_calls(self, text: str) -> None:
        """Close every open call with ``text`` as its result."""
        self.tracker.close_all(text)

    def _awaits_exit(self) -> bool:
        """Whether :meth:`close` gives the CLI ``cancel_grace`` to exit of itself once its stdin is closed."""
        return True

    # -- reading and writing --------------------------------------------------------------------------------

    async def _await_start(self, group: TaskGroup, ready: Callable[[], bool], late: str) -> None:
        """Read until ``ready()``, within the startup timeout; ``late`` says what the CLI did not do in time."""
        timeout = self.startup_timeout
        try:
            with anyio.fail_after(timeout):
                while not ready():
                    self._dispatch(group, await self._receive())
        except TimeoutError:
            await self._settle()
            raise BackendStartError(
                self.cli.describe(f"{self.name} {late} within {timeout:g} s"), code="timeout"
            ) from None

    async def _read(self, group: TaskGroup) -> None:
        while not self._done():
            self._dispatch(group, await self._receive())

    async def _receive(self) -> dict[str, Any]:
        """The next line of output; raises :meth:`_broken` when the output ended."""
        message = await self.transport.receive()
        if message is None:
            await self._settle()
            raise self._broken()
        return message

    async def _send(self, message: dict[str, Any]) -> None:
        try:
            await self.transport.send(message)
        except ConnectionError:
            await self._settle()
            raise self._broken() from None

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError), anyio.move_on_after(_WRITE_WAIT):
            await self.transport.send(message)

    def _broken(self) -> Exception:
        """The error for a process whose streams ended: a start error until it is known to run."""
        if self._started:
            return AgentProcessError(
                self.cli.describe(self.cli.describe_exit("during the turn")), code="internal"
            )
        return BackendStartError(self.cli.describe(self.cli.describe_exit("at start")))

    # -- ending ---------------------------------------------------------------------------------------------

    async def _cancel(self, group: TaskGroup) -> None:
        """The cancel sequence (see the module); shielded by the caller."""
        self._cancelling = True
        self._close_calls(CANCELLED_CALL_TEXT)
        for scope in list(self._pending.values()):
            scope.cancel()  # each writes its own answer as it ends
        if self.process.returncode is not None or self.transport.at_eof:
            return
        interrupt = self._interrupt()
        if interrupt is None:
            return
        await self._send_quietly(interrupt)
        with anyio.move_on_after(self.options.cancel_grace):
            while not self._done():
                message = await self.transport.receive()
                if message is None:
                    break
                self._dispatch(group, message)

    async def close(self) -> None:
        """End the process: close stdin, wait ``cancel_grace`` (where it exits of itself), SIGINT the group, wait
        again, kill the group (and every process carrying the mark). Leaves no process behind."""
        grace = self.options.cancel_grace
        await self.cli.stop(
            grace, exit_wait=grace if self._awaits_exit() else 0.0, sweep=self.sweeps_after_exit
        )

    async def _settle(self) -> None:
        """After stdout ended: give the process a moment to exit and its stderr to be read, for the message."""
        await self.cli.settle()
