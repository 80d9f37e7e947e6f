"""GitHub Copilot CLI on its own server protocol, as an :class:`~hive_core.backends.AgentBackend`.

``copilot --headless --no-auto-update --stdio`` speaks JSON-RPC with ``Content-Length`` framing (what the
``github-copilot-sdk`` packages speak): ``connect`` (protocol version 3), ``session.create`` / ``session.resume``
/ ``sessions.fork``, ``session.send`` for a prompt, ``session.abort`` to cancel; ``session.event`` notifications
carry the turn (see :mod:`.turn`) and ``userInput.request`` its ``ask_user`` questions. Over ACP Copilot 1.0.102
offers the model no ``ask_user`` tool and no client request for one, so questions need this protocol.

One process per backend, kept between turns, in a process group of its own; its session is created with
``requestPermission`` (every permission reaches hive) and, with a question service, ``requestUserInput`` (without
one ``--no-ask-user`` is passed and the model has no ``ask_user``; with one it is never passed). With an endpoint,
the model server goes in as the session's ``provider`` (the server ignores ``COPILOT_PROVIDER_*``). With
``resume`` the first turn resumes that session; with ``fork`` too, ``sessions.fork`` copies it first and every turn
runs in the copy. Cancelled, a
turn sends ``session.abort`` and waits ``cancel_grace`` seconds for ``session.idle``; then the process group is
killed and the next turn starts a new process that resumes the session.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable
from typing import Any
from typing import Final

import anyio
from acp.connection import Connection
from acp.exceptions import RequestError
from acp.task import TaskSupervisor

from hive_core.child_processes import SupervisedProcess
from hive_core.failures import ChatError
from hive_core.tool_round import CANCELLED_CALL_TEXT
from hive_core.tools import EventSink
from hive_protocol import UserMessageRequest
from hive_providers.backends.kit.backend_shell import BackendShell
from hive_providers.backends.kit.cli_process import CliProcess
from hive_providers.backends.kit.cli_process import open_cli
from hive_providers.backends.kit.errors import BackendNotInstalled
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.offline import cli_environment
from hive_providers.backends.probe import find_executable

from .transport import FramedTransport
from .turn import CopilotTurn

__all__ = ["NO_ASK_USER", "NO_AUTO_LOGIN", "PROTOCOL_VERSION", "SERVER_ARGUMENTS", "CopilotBackend"]

SERVER_ARGUMENTS: Final = ("--headless", "--no-auto-update", "--stdio")
"""The arguments that start Copilot's server on stdio."""
NO_AUTO_LOGIN: Final = "--no-auto-login"
"""Keeps the server off the user's stored GitHub login: passed with an endpoint, where no login is wanted."""
NO_ASK_USER: Final = "--no-ask-user"
"""The flag that removes the ``ask_user`` tool: passed only when no one can answer questions."""
PROTOCOL_VERSION: Final = 3
"""The server protocol version hive speaks (``connect`` answers it)."""
_FAILED_CALL_TEXT: Final = "Not finished: Copilot failed before this call's outcome was reported."
_log = logging.getLogger(__name__)


class CopilotBackend(BackendShell):
    """Drives ``copilot --headless --stdio``: one hive session's turns in one Copilot session."""

    def __init__(self, spec: LaunchSpec, options: BackendOptions) -> None:
        super().__init__(spec, options)
        self._opened = False
        self._cli: CliProcess | None = None
        self._rpc: Connection | None = None
        self._tasks: TaskSupervisor | None = None
        self._turn: CopilotTurn | None = None
        self._faulted = False
        self._questions_asked = 0

    def command(self) -> list[str]:
        """The command line of the server; raises :class:`BackendNotInstalled`."""
        executable = self.options.executable or find_executable(self.spec, self.options)
        if executable is None:
            raise BackendNotInstalled(self.spec.name, self.spec.executables, self.spec.install_hint)
        extra = [argument for argument in self.options.arguments or () if argument not in SERVER_ARGUMENTS]
        if self.options.endpoint is not None and NO_AUTO_LOGIN not in extra:
            extra.append(NO_AUTO_LOGIN)
        if self.options.questions is not None:
            extra = [argument for argument in extra if argument != NO_ASK_USER]
        elif NO_ASK_USER not in extra:
            extra.append(NO_ASK_USER)
        return [executable, *SERVER_ARGUMENTS, *extra]

    def environment(self) -> dict[str, str]:
        """The server's environment: hive's, the spec's, the private offline configuration, the options'."""
        return cli_environment(self.spec, self.options)

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn in Copilot's session."""
        await self._ensure_started()
        await self._ensure_session()
        assert self._session_id is not None
        turn = CopilotTurn(
            emit=emit,
            session_id=self._session_id,
            send=self._send,
            policy=self.options.policy,
            approvals=self.options.approvals,
            questions=self.options.questions,
            project=self.options.cwd,
            taken=self.call_ids,
            question_numbers=self._next_question,
        )
        self._turn = turn
        try:
            await self._send("session.send", {"sessionId": self._session_id, "prompt": request.content})
            await turn.idle.wait()
        except anyio.get_cancelled_exc_class():
            turn.cancel()
            with anyio.CancelScope(shield=True):
                await self._abort(turn)
            turn.tracker.close_all(CANCELLED_CALL_TEXT)
            turn.stop_subagents()
            raise
        except BaseException:
            turn.cancel()
            with contextlib.suppress(Exception):
                turn.tracker.close_all(_FAILED_CALL_TEXT)
                turn.stop_subagents()
            raise
        finally:
            self._turn = None
        turn.cancel()
        if self._faulted or turn.error is not None:
            turn.stop_subagents()
        if self._faulted and not turn.aborted and turn.error is None:
            turn.tracker.close_all(_FAILED_CALL_TEXT)
            message = await self._died("the turn")
            await self._stop(grace=0.0)
            raise ChatError(message, code="internal")
        if turn.error is not None:
            turn.tracker.close_all(_FAILED_CALL_TEXT)
            raise ChatError(f"{self.name}: {turn.error}", code="internal")
        turn.tracker.close_all("Copilot ended the turn without reporting this call's result.")
        emit(turn.finish())

    async def aclose(self) -> None:
        """Stop the server: close its stdin, then kill its process group. Leaves no process behind."""
        await self._stop(grace=min(self.options.cancel_grace, 1.0))

    # -- start and session -------------------------------------------------------------------------------------

    async def _ensure_started(self) -> None:
        if self._cli is not None and (self._faulted or self._cli.process.returncode is not None):
            await self._stop(grace=0.0)
        if self._cli is not None:
            return
        command = self.command()
        timeout = self.options.startup_timeout or self.spec.startup_timeout
        process = await open_cli(self.name, command, cwd=self.options.cwd, env=self.environment())
        self.last_pid, self._faulted, self._opened = process.pid, False, False
        transport = FramedTransport(process, incoming=self._incoming)
        transport.on_end = self._output_ended
        self._cli = CliProcess(self.name, process, transport)
        self._tasks = TaskSupervisor(source="hive.copilot")
        self._tasks.create(transport.drain_stderr(), name="hive.copilot.stderr")
        self._tasks.create(self._watch_exit(process), name="hive.copilot.exit")
        self._rpc = Connection(self._handle, transport)
        try:
            with anyio.fail_after(timeout):
                result = await self._send("connect", {"supportedTaskKinds": ["agent", "client", "shell"]})
        except TimeoutError:
            await self._stop(grace=0.0)
            raise BackendStartError(
                self._describe(f"{self.name} did not answer connect within {timeout:g} s"), code="timeout"
            ) from None
        except (RequestError, ConnectionError, OSError) as exc:
            message = self._describe(f"{self.name} failed connect: {exc}")
            await self._stop(grace=0.0)
            raise BackendStartError(message) from exc
        version = as_mapping(result).get("protocolVersion")
        if version != PROTOCOL_VERSION:
            await self._stop(grace=0.0)
            raise BackendStartError(
                f"{self.name} speaks server protocol {version!r}; hive speaks {PROTOCOL_VERSION}"
            )

    def _session_settings(self) -> dict[str, Any]:
        options = self.options
        settings: dict[str, Any] = {
            "workingDirectory": str(options.cwd),
            "requestPermission": True,
            "requestUserInput": options.questions is not None,
            "streaming": True,
            "envValueMode": "direct",
        }
        endpoint = options.endpoint
        model = options.model or (endpoint.model if endpoint is not None else None)
        if model:
            settings["model"] = model
        if endpoint is not None:
            settings["provider"] = {
                "type": "openai",
                "baseUrl": endpoint.base_url,
                "apiKey": endpoint.api_key,
            }
        return settings

    async def _ensure_session(self) -> None:
        if self._opened:
            return
        settings = self._session_settings()
        try:
            if self._forking and self._session_id is not None:
                forked = as_mapping(await self._send("sessions.fork", {"sessionId": self._session_id}))
                copy = forked.get("sessionId")
                if not isinstance(copy, str) or not copy:
                    raise ChatError(
                        f"{self.name} answered sessions.fork without a session id", code="internal"
                    )
                self._session_id, self._forking = copy, False
            if self._session_id is not None:
                opened = await self._send("session.resume", {"sessionId": self._session_id, **settings})
            else:
                opened = await self._send("session.create", settings)
        except RequestError as exc:
            raise ChatError(
                f"{self.name} could not open its session: {exc}", code="request_rejected"
            ) from exc
        except (ConnectionError, OSError) as exc:
            raise ChatError(
                self._describe(f"{self.name} exited opening its session"), code="internal"
            ) from exc
        session_id = as_mapping(opened).get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            raise ChatError(f"{self.name} opened a session without an id", code="internal")
        self._session_id, self._opened = session_id, True

    # -- the connection --------------------------------------------------------------------------------------

    async def _send(self, method: str, params: dict[str, Any]) -> Any:
        rpc = self._rpc
        if rpc is None or self._faulted:
            raise ConnectionError(f"{self.name} is not running")
        return await rpc.send_request(method, params)

    def _incoming(self, message: dict[str, Any]) -> bool:
        method = message.get("method")
        if method == "session.event" and "id" not in message:
            params = as_mapping(message.get("params"))
            turn = self._turn
            if turn is not None and params.get("sessionId") == turn.session_id:
                try:
                    turn.on_event(as_mapping(params.get("event")), self._spawn)
                except Exception:
                    _log.exception("mapping a Copilot session.event failed")
            return True
        return method == "session.lifecycle" and "id" not in message

    def _spawn(self, work: Awaitable[None]) -> None:
        if self._tasks is not None:
            self._tasks.create(work, name="hive.copilot.permission")

    async def _handle(self, method: str, params: Any, is_notification: bool) -> Any:
        if is_notification:
            return None
        turn = self._turn
        if method == "userInput.request" and turn is not None:
            return await turn.ask(as_mapping(params))
        raise RequestError.method_not_found(method)

    async def _watch_exit(self, process: SupervisedProcess) -> None:
        await process.wait()
        self._output_ended()
        process.kill_tree()

    def _output_ended(self) -> None:
        """The server exited, closed its output or broke its framing: the turn ends now, never waits on it."""
        self._faulted = True
        turn = self._turn
        if turn is not None:
            turn.cancel()
            turn.idle.set()

    async def _abort(self, turn: CopilotTurn) -> None:
        grace = self.options.cancel_grace
        with contextlib.suppress(RequestError, ConnectionError, OSError), anyio.move_on_after(grace):
            await self._send("session.abort", {"sessionId": turn.session_id})
        with anyio.move_on_after(grace):
            await turn.idle.wait()
        if not turn.idle.is_set():
            # It ignored the abort: not trusted again; the next turn resumes the session in a new process.
            self._faulted = True
            await self._stop(grace=0.0)

    async def _stop(self, *, grace: float) -> None:
        cli, rpc, tasks = self._cli, self._rpc, self._tasks
        self._cli = self._rpc = self._tasks = None
        self._opened = False
        with anyio.CancelScope(shield=True):
            if cli is not None:
                await cli.stop(grace, exit_wait=grace, interrupt=False)
            # A handler still answering a dead server fails its write; that is not the caller's error.
            if rpc is not None:
                try:
                    await rpc.close()
                except Exception:
                    _log.debug("closing the connection to %s failed", self.name, exc_info=True)
            if tasks is not None:
                try:
                    await tasks.shutdown()
                except Exception:
                    _log.debug("stopping the tasks of %s failed", self.name, exc_info=True)

    async def _died(self, during: str) -> str:
        """How a failing server ended, once it had a moment to exit and its stderr to drain."""
        cli = self._cli
        if cli is None:
            return f"{self.name} closed its output during {during}"
        await cli.settle()
        return cli.describe(cli.describe_exit(f"during {during}"))

    def _next_question(self) -> int:
        self._questions_asked += 1
        return self._questions_asked

    def _describe(self, what: str) -> str:
        return what if self._cli is None else self._cli.describe(what)
