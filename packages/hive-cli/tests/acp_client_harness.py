"""An ACP client for the ``hive acp`` tests: the ``agent-client-protocol`` package's client side, driving the
installed ``hive acp`` as a subprocess. It records every session update, answers permission requests from a list
the test gives, and serves ``fs/*`` from the disk (counting what it served)."""

from __future__ import annotations

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
from acp.schema import AllowedOutcome
from acp.schema import ClientCapabilities
from acp.schema import DeniedOutcome
from acp.schema import FileSystemCapabilities
from acp.schema import PermissionOption
from acp.schema import ReadTextFileResponse
from acp.schema import RequestPermissionResponse
from acp.schema import ToolCallUpdate
from acp.schema import WriteTextFileResponse
from cli_harness import HIVE
from cli_harness import TIMEOUT
from cli_harness import Workspace


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
    updates: list[tuple[str, Any]] = field(default_factory=list[tuple[str, Any]])
    asked: list[Asked] = field(default_factory=list[Asked])
    reads: list[str] = field(default_factory=list[str])
    writes: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
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

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))
        self._notify()

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        return ReadTextFileResponse(content=await anyio.Path(path).read_text(encoding="utf-8"))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        await anyio.Path(path).write_text(content, encoding="utf-8")
        return WriteTextFileResponse()

    async def create_terminal(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/create")

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
    env: Mapping[str, str] | None = None,
) -> AsyncGenerator[tuple[ClientSideConnection, RecordingClient]]:
    """``hive acp args...`` in the workspace, initialized (offering ``fs/*`` when ``fs``)."""
    ws.trust_now()
    recording = client or RecordingClient()
    # It answers what the tests need; the terminal methods it lacks are never offered to hive.
    as_client = cast("Client", recording)
    command = (str(HIVE), "acp", *args)
    environment = {**ws.env, **(env or {})}
    async with spawn_agent_process(as_client, *command, env=environment, cwd=str(ws.project)) as (conn, _):
        with anyio.fail_after(TIMEOUT):
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=False
                ),
            )
        yield conn, recording
