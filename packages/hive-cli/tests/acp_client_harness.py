"""An ACP client for the ``hive acp`` tests: the ``agent-client-protocol`` package's client side, driving the
installed ``hive acp`` as a subprocess. It records every session update, answers permission requests and form
elicitations from lists the test gives, serves ``fs/*`` from its open buffers (unsaved text, written only to the
buffer) and otherwise from the disk, and ``terminal/*`` by running the command itself (recording what it served)."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import AsyncGenerator
from collections.abc import Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import cast

import anyio
from acp import PROTOCOL_VERSION
from acp import Client
from acp import RequestError
from acp import spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import AcceptElicitationResponse
from acp.schema import AllowedOutcome
from acp.schema import CancelElicitationResponse
from acp.schema import ClientCapabilities
from acp.schema import CreateTerminalResponse
from acp.schema import DeclineElicitationResponse
from acp.schema import DeniedOutcome
from acp.schema import ElicitationCapabilities
from acp.schema import ElicitationFormCapabilities
from acp.schema import ElicitationMode
from acp.schema import EnvVariable
from acp.schema import FileSystemCapabilities
from acp.schema import KillTerminalResponse
from acp.schema import PermissionOption
from acp.schema import ReadTextFileResponse
from acp.schema import ReleaseTerminalResponse
from acp.schema import RequestPermissionResponse
from acp.schema import TerminalExitStatus
from acp.schema import TerminalOutputResponse
from acp.schema import ToolCallUpdate
from acp.schema import WaitForTerminalExitResponse
from acp.schema import WriteTextFileResponse
from anyio.abc import Process
from cli_harness import HIVE
from cli_harness import TIMEOUT
from cli_harness import Workspace


@dataclass
class Terminal:
    """A command the client ran for ``terminal/create``: its request, process and output file."""

    command: list[str]
    cwd: str | None
    env: dict[str, str]
    process: Process
    output: tempfile._TemporaryFileWrapper[bytes]  # pyright: ignore[reportPrivateUsage]


@dataclass
class Asked:
    """One permission request the client got."""

    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


@dataclass
class RecordingClient:
    """The client: ``answers`` are the option ids to pick, in order (``None``: cancelled); a request past them
    fails the test."""

    answers: list[str | None] = field(default_factory=list[str | None])
    forms: list[dict[str, Any] | str] = field(default_factory=list[dict[str, Any] | str])
    """The answers to form elicitations, in order: the content to accept with, or ``"decline"`` / ``"cancel"``."""
    elicited: list[tuple[str, ElicitationMode]] = field(default_factory=list[tuple[str, ElicitationMode]])
    terminals: dict[str, Terminal] = field(default_factory=dict[str, Terminal])
    terminal_calls: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """``(method, terminal id)`` of every ``terminal/*`` request but ``create``, in order."""
    updates: list[tuple[str, Any]] = field(default_factory=list[tuple[str, Any]])
    asked: list[Asked] = field(default_factory=list[Asked])
    reads: list[str] = field(default_factory=list[str])
    writes: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    buffers: dict[str, str] = field(default_factory=dict[str, str])
    """Files open in the editor, by absolute path: their unsaved text, served and written instead of the disk's."""
    changed: anyio.Event = field(default_factory=anyio.Event)

    def _notify(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        self.asked.append(Asked(session_id, tool_call, options))
        self._notify()
        if not self.answers:
            raise AssertionError(f"unexpected permission request for {tool_call.title!r}")
        chosen = self.answers.pop(0)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen))

    async def create_elicitation(
        self, message: str, mode: ElicitationMode, **_: Any
    ) -> AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse:
        self.elicited.append((message, mode))
        self._notify()
        if not self.forms:
            raise AssertionError(f"unexpected elicitation {message!r}")
        answer = self.forms.pop(0)
        if answer == "decline":
            return DeclineElicitationResponse(action="decline")
        if answer == "cancel":
            return CancelElicitationResponse(action="cancel")
        return AcceptElicitationResponse(action="accept", content=cast("dict[str, Any]", answer))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))
        self._notify()

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=await anyio.Path(path).read_text(encoding="utf-8"))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        if path in self.buffers:
            self.buffers[path] = content
        else:
            await anyio.Path(path).write_text(content, encoding="utf-8")
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        **_: Any,
    ) -> CreateTerminalResponse:
        argv = [command, *(args or [])]
        environment = {variable.name: variable.value for variable in env or []}
        output = tempfile.NamedTemporaryFile()  # noqa: SIM115 - closed on release
        process = await anyio.open_process(
            argv, cwd=cwd, env=environment, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        terminal_id = f"term-{len(self.terminals)}"
        self.terminals[terminal_id] = Terminal(argv, cwd, environment, process, output)
        self._notify()
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _terminal(self, method: str, terminal_id: str) -> Terminal:
        self.terminal_calls.append((method, terminal_id))
        self._notify()
        return self.terminals[terminal_id]

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> TerminalOutputResponse:
        terminal = self._terminal("output", terminal_id)
        code = terminal.process.returncode
        status = None
        if code is not None:
            status = (
                TerminalExitStatus(exit_code=code)
                if code >= 0
                else TerminalExitStatus(signal=signal.Signals(-code).name)
            )
        text = (await anyio.Path(terminal.output.name).read_bytes()).decode()
        return TerminalOutputResponse(output=text, truncated=False, exit_status=status)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self._terminal("wait_for_exit", terminal_id)
        code = await terminal.process.wait()
        if code < 0:
            return WaitForTerminalExitResponse(signal=signal.Signals(-code).name)
        return WaitForTerminalExitResponse(exit_code=code)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> KillTerminalResponse:
        terminal = self._terminal("kill", terminal_id)
        if terminal.process.returncode is None:
            os.killpg(terminal.process.pid, signal.SIGKILL)
            await terminal.process.wait()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> ReleaseTerminalResponse:
        terminal = self._terminal("release", terminal_id)
        if terminal.process.returncode is None:
            os.killpg(terminal.process.pid, signal.SIGKILL)
        await terminal.process.aclose()
        terminal.output.close()
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def of(self, kind: str, session_id: str | None = None) -> list[Any]:
        """The updates of one ``sessionUpdate`` kind, in order."""
        return [
            update
            for sid, update in self.updates
            if update.session_update == kind and (session_id is None or sid == session_id)
        ]

    def text(self, session_id: str | None = None) -> str:
        """The agent's streamed text."""
        return "".join(chunk.content.text for chunk in self.of("agent_message_chunk", session_id))

    async def until(self, predicate: Any, what: str) -> None:
        """Wait (bounded) until ``predicate()`` holds: checked on every update, and polled for what no update
        announces (a process of the machine)."""
        with anyio.fail_after(TIMEOUT, reason=f"waiting for {what}"):
            while not predicate():
                with anyio.move_on_after(0.05):
                    await self.changed.wait()


@asynccontextmanager
async def hive_acp(
    ws: Workspace,
    *args: str,
    client: RecordingClient | None = None,
    fs: bool = False,
    forms: bool = False,
    terminal: bool = False,
    env: Mapping[str, str] | None = None,
) -> AsyncGenerator[tuple[ClientSideConnection, RecordingClient]]:
    """``hive acp args...`` in the workspace, initialized (offering ``fs/*`` when ``fs``, form elicitation when
    ``forms``, ``terminal/*`` when ``terminal``)."""
    ws.trust_now()
    recording = client or RecordingClient()
    as_client = cast("Client", recording)
    command = (str(HIVE), "acp", *args)
    environment = {**ws.env, **(env or {})}
    # Elicitation is of the protocol's unstable part: the client side answers it only when told to.
    async with spawn_agent_process(
        as_client, *command, env=environment, cwd=str(ws.project), use_unstable_protocol=forms
    ) as (conn, _):
        with anyio.fail_after(TIMEOUT):
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
                    terminal=terminal,
                    elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
                    if forms
                    else None,
                ),
            )
        yield conn, recording
