"""hive as an Agent Client Protocol agent: each ACP session is a hive session, served as ``hive run --server``
serves one (the same opener, store, rules and backends), its events turned into ACP session updates.

- ``session/new`` opens a session in the client's ``cwd`` (its project), the client's ``mcpServers`` added as MCP
  plugins of that session; ``session/load`` opens a stored one and replays its conversation as updates;
  ``session/resume`` opens one without the replay; ``session/fork`` continues in a copy (hive's own loop only);
  ``session/list`` lists the stored sessions of a project.
- Modes: ``default`` (the rules decide, asks go to the client), ``accept_edits`` (what the rules would ask about a
  file edit is allowed; what they deny stays denied, everything else is asked), ``plan`` (hive's planning mode:
  only read-only tools run; hive's own loop only).
- The model is a session config option (``model``): ACP 0.12 has no ``session/set_model``.
- Every ask of the rules becomes ``session/request_permission`` (allow once, allow always, reject once, reject
  always): "allow always" is recorded in the session's grants as the terminal's "always" is, "reject always"
  refuses that tool's asks for the rest of the connection's session.
- An agent's questions are asked by one form elicitation (``elicitation/create``) when the client offers form
  elicitation: one field per question (a single choice, several choices, or free text as the question allows);
  a declined or cancelled form, or an answer outside the choices, declines the questions. A client without it is
  asked one permission-shaped choice per question, one option per answer and a decline. Nothing is declined
  unasked.
- The client's ``fs/*`` serve ``read_file`` and ``write_file`` (:mod:`.files`), and its ``terminal/*`` serve
  ``execute_command`` where hive's sandbox would not confine the command anyway (:mod:`.terminal`).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import cast

import anyio
from acp import PROTOCOL_VERSION
from acp import Client
from acp import RequestError
from acp.schema import AcceptElicitationResponse
from acp.schema import AcpMcpServer
from acp.schema import AgentCapabilities
from acp.schema import AllowedOutcome
from acp.schema import AudioContentBlock
from acp.schema import AuthenticateResponse
from acp.schema import ClientCapabilities
from acp.schema import CloseSessionResponse
from acp.schema import CurrentModeUpdate
from acp.schema import ElicitationFormSessionMode
from acp.schema import ElicitationMultiSelectPropertySchema
from acp.schema import ElicitationSchema
from acp.schema import ElicitationStringPropertySchema
from acp.schema import EmbeddedResourceContentBlock
from acp.schema import EnumOption
from acp.schema import ForkSessionResponse
from acp.schema import HttpMcpServer
from acp.schema import ImageContentBlock
from acp.schema import Implementation
from acp.schema import InitializeResponse
from acp.schema import ListSessionsResponse
from acp.schema import LoadSessionResponse
from acp.schema import McpCapabilities
from acp.schema import McpServerStdio
from acp.schema import NewSessionResponse
from acp.schema import PermissionOption
from acp.schema import PromptCapabilities
from acp.schema import PromptResponse
from acp.schema import ResourceContentBlock
from acp.schema import ResumeSessionResponse
from acp.schema import SessionCapabilities
from acp.schema import SessionCloseCapabilities
from acp.schema import SessionConfigOptionBoolean
from acp.schema import SessionConfigOptionSelect
from acp.schema import SessionConfigSelectOption
from acp.schema import SessionForkCapabilities
from acp.schema import SessionInfo
from acp.schema import SessionListCapabilities
from acp.schema import SessionMode
from acp.schema import SessionModeState
from acp.schema import SessionResumeCapabilities
from acp.schema import SetSessionConfigOptionResponse
from acp.schema import SetSessionModeResponse
from acp.schema import SseMcpServer
from acp.schema import TextContentBlock
from acp.schema import TextResourceContents
from acp.schema import TitledMultiSelectItems
from acp.schema import ToolCallUpdate
from anyio.abc import TaskGroup
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream
from anyio.streams.memory import MemoryObjectSendStream

from hive_cli.assemble import HostOptions
from hive_cli.assemble import SessionLayer
from hive_cli.errors import USER_ERRORS
from hive_cli.opening import OpenSession
from hive_cli.version import installed_version
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import Question
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import Request
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

if TYPE_CHECKING:
    from hive_core.mcp import PluginConfig
    from hive_core.tools import Tool

from .updates import Translator
from .updates import replay
from .updates import stop_reason
from .updates import tool_kind
from .updates import usage

__all__ = ["MODES", "HiveAcpAgent", "PromptBlock"]

McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)

MODES: Final = (
    SessionMode(
        id="default", name="Default", description="hive's rules decide; what they ask about is asked here"
    ),
    SessionMode(
        id="accept_edits",
        name="Accept edits",
        description="File edits the rules would ask about run unasked; the rest as the rules say",
    ),
    SessionMode(id="plan", name="Plan", description="hive's planning mode: only read-only tools run"),
)
"""The session modes, ``default`` first."""
_PERMISSION_OPTIONS: Final = (
    PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Reject for this session", kind="reject_always"),
)
_DECLINE: Final = "decline"
_MODEL_OPTION: Final = "model"


@dataclass
class _Live:
    """One ACP session this connection opened: the hive session and the streams its runner reads and writes."""

    opened: OpenSession
    cwd: Path
    requests: MemoryObjectSendStream[Request]
    events: MemoryObjectReceiveStream[Event]
    stop: Callable[[], None]
    translator: Translator
    mode: str = "default"
    model: str | None = None
    refused_tools: set[str] = field(default_factory=set[str])
    """Tools answered "reject always": their later asks are refused unasked."""
    prompting: bool = False
    editor_files: bool = False
    """Whether the client reads and writes the session's files (``fs/*``): edits are shown against its buffers."""

    @property
    def session_id(self) -> str:
        return self.opened.session_id

    @property
    def modes(self) -> SessionModeState:
        """The modes this session offers (planning mode only for hive's own loop)."""
        offered = [mode for mode in MODES if mode.id != "plan" or self.opened.agent_session is not None]
        return SessionModeState(current_mode_id=self.mode, available_modes=offered)

    def config_options(self) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        """The session's config options: the model."""
        current = self.model or self.opened.host.settings.model or "default"
        return [
            SessionConfigOptionSelect(
                type="select",
                id=_MODEL_OPTION,
                name="Model",
                description="The model the next turns use (any name the backend knows)",
                category="model",
                current_value=current,
                options=[SessionConfigSelectOption(value=current, name=current)],
            )
        ]


class HiveAcpAgent:
    """The ACP agent of ``hive acp`` (see the module's documentation); run it with :func:`acp.run_agent`."""

    def __init__(self, options: HostOptions, group: TaskGroup) -> None:
        self._options = options
        self._group = group
        self._client: Client | None = None
        self._sessions: dict[str, _Live] = {}
        self._files = (False, False)
        """Whether the client offered ``fs/read_text_file`` and ``fs/write_text_file``."""
        self._forms = False
        """Whether the client offered form elicitation (questions are then asked as one form)."""
        self._terminal = False
        """Whether the client offered ``terminal/*`` (for commands hive's sandbox would not confine)."""

    def on_connect(self, conn: Client) -> None:
        """Keep the client's side of the connection, for updates and permission requests."""
        self._client = conn

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RequestError.internal_error({"reason": "no client connected"})
        return self._client

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **_: Any,
    ) -> InitializeResponse:
        """What hive offers: stored sessions loaded, listed, resumed and forked; text and embedded text in
        prompts; MCP servers over stdio and HTTP."""
        offered = client_capabilities.fs if client_capabilities is not None else None
        if offered is not None:
            self._files = (bool(offered.read_text_file), bool(offered.write_text_file))
        elicitation = client_capabilities.elicitation if client_capabilities is not None else None
        self._forms = elicitation is not None and elicitation.form is not None
        self._terminal = client_capabilities is not None and bool(client_capabilities.terminal)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    fork=SessionForkCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            agent_info=Implementation(name="hive", title="hive", version=installed_version()),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse | None:
        """hive needs no sign-in of the client: its providers are configured on this machine."""
        raise RequestError.invalid_params({"methodId": f"hive offers no authentication method {method_id!r}"})

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **_: Any,
    ) -> NewSessionResponse:
        """A new hive session in the project at ``cwd``."""
        live = await self._open(cwd, None, mcp_servers)
        return NewSessionResponse(
            session_id=live.session_id, modes=live.modes, config_options=live.config_options()
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **_: Any,
    ) -> LoadSessionResponse:
        """The stored session ``session_id``, its conversation replayed as updates before this answer."""
        live = await self._stored(cwd, session_id, mcp_servers)
        for update in replay(live.opened.store.restore(session_id), live.translator):
            await self.client.session_update(session_id, update)
        return LoadSessionResponse(modes=live.modes, config_options=live.config_options())

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **_: Any,
    ) -> ResumeSessionResponse:
        """The stored session ``session_id``, going on without a replay."""
        live = await self._stored(cwd, session_id, mcp_servers)
        return ResumeSessionResponse(modes=live.modes, config_options=live.config_options())

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **_: Any,
    ) -> ForkSessionResponse:
        """A copy of the stored session ``session_id`` (of hive's own loop), going on as a new session."""
        from hive_cli.session_store import open_session_store
        from hive_core.sessions import last_backend_session

        with open_session_store() as store:
            info = store.get(session_id)
            if info is None:
                raise RequestError.invalid_params({"sessionId": f"no stored session {session_id!r}"})
            if last_backend_session(store.entries(session_id)) is not None:
                raise RequestError.invalid_params(
                    {
                        "sessionId": f"session {session_id!r} ran a coding-agent CLI; only hive's own sessions fork"
                    }
                )
            fork = store.fork(session_id)
        live = await self._open(cwd, fork.id, mcp_servers)
        return ForkSessionResponse(
            session_id=live.session_id, modes=live.modes, config_options=live.config_options()
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        """The stored sessions (of the project at ``cwd`` when given), most recent first."""
        from hive_cli.session_store import open_session_store
        from hive_core.config import find_project_root

        project = str(find_project_root(Path(cwd))) if cwd else None
        with open_session_store() as store:
            infos = store.list_sessions(project_path=project)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=info.project_path,
                    title=(info.first_message or "")[:80] or None,
                    updated_at=_iso(info.updated),
                )
                for info in infos
            ]
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        """Switch the session's mode for the turns to come."""
        live = self._live(session_id)
        if mode_id not in {mode.id for mode in live.modes.available_modes}:
            offered = ", ".join(mode.id for mode in live.modes.available_modes)
            raise RequestError.invalid_params({"modeId": f"no mode {mode_id!r} here (offered: {offered})"})
        live.opened.set_planning(mode_id == "plan")
        live.mode = mode_id
        await self.client.session_update(
            session_id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id)
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        """Set the model of the session's next turns."""
        live = self._live(session_id)
        if config_id != _MODEL_OPTION:
            raise RequestError.invalid_params(
                {"configId": f"no config option {config_id!r} (offered: model)"}
            )
        if not isinstance(value, str) or not value.strip():
            raise RequestError.invalid_params({"value": "the model is a non-empty name"})
        live.model = value.strip()
        return SetSessionConfigOptionResponse(config_options=list(live.config_options()))

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **_: Any) -> PromptResponse:
        """Run one turn, streaming its updates; answer with its stop reason and usage."""
        live = self._live(session_id)
        if live.prompting:
            raise RequestError.invalid_request({"sessionId": "a prompt of this session is still running"})
        content = _prompt_text(prompt)
        live.prompting = True
        try:
            live.requests.send_nowait(UserMessageRequest(content=content, model=live.model))
            return await self._turn(live)
        finally:
            live.prompting = False

    async def close_session(self, session_id: str, **_: Any) -> CloseSessionResponse | None:
        """Stop the session (its running turn is cancelled and still ends); it stays stored."""
        live = self._sessions.pop(session_id, None)
        if live is None:
            raise RequestError.invalid_params(
                {"sessionId": f"no session {session_id!r} is open on this connection"}
            )
        live.stop()
        return CloseSessionResponse()

    async def cancel(self, session_id: str, **_: Any) -> None:
        """Cancel the session's running turn (it still ends, with stop reason ``cancelled``)."""
        live = self._sessions.get(session_id)
        if live is not None:
            live.opened.runner.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""

    def close(self) -> None:
        """End every session's runner (its running turn is cancelled and still ends)."""
        for live in self._sessions.values():
            live.stop()

    # -- the turn ---------------------------------------------------------------------------------------------

    async def _turn(self, live: _Live) -> PromptResponse:
        error: ErrorEvent | None = None
        async for event in _coalesced(live.events):
            match event:
                case HitlRequestEvent():
                    await self._approve(live, event)
                case QuestionRequestEvent():
                    await self._answer(live, event)
                case ErrorEvent():
                    error = event
                case TurnEndEvent():
                    reason = stop_reason(event)
                    if error is not None and reason != "cancelled":
                        raise RequestError(-32603, error.message, {"code": error.code})
                    return PromptResponse(stop_reason=reason, usage=usage(event))
                case ToolStartEvent():
                    buffer = await self._buffer(live, live.translator.edited(event.tool, event.input))
                    for update in live.translator.feed(event, buffer):
                        await self.client.session_update(live.session_id, update)
                case _:
                    for update in live.translator.feed(event):
                        await self.client.session_update(live.session_id, update)
        raise RequestError.internal_error({"reason": "the session ended during the turn"})

    async def _approve(self, live: _Live, ask: HitlRequestEvent) -> None:
        tool = ask.tool_name or ask.action
        arguments = ask.arguments or {}
        kind = tool_kind(tool)
        if tool in live.refused_tools:
            answer = HitlResponseRequest(
                id=ask.id, approved=False, reason=f"{tool} was rejected for this session"
            )
        elif live.mode == "accept_edits" and kind == "edit":
            answer = HitlResponseRequest(id=ask.id, approved=True)
        else:
            buffer = await self._buffer(live, live.translator.edited(tool, arguments))
            call = ToolCallUpdate(
                tool_call_id=ask.call_id or ask.id,
                title=live.translator.title(tool, arguments),
                kind=kind,
                status="pending",
                raw_input=arguments,
                locations=live.translator.locations(arguments),
                content=live.translator.diff(tool, arguments, buffer) if kind == "edit" else None,
            )
            chosen = await self._choose(live, call, list(_PERMISSION_OPTIONS))
            if chosen == "reject_always":
                live.refused_tools.add(tool)
            answer = HitlResponseRequest(
                id=ask.id,
                approved=chosen in ("allow_once", "allow_always"),
                always_approve=chosen == "allow_always",
                reason=None if chosen in ("allow_once", "allow_always") else "rejected in the editor",
            )
        live.requests.send_nowait(answer)

    async def _buffer(self, live: _Live, path: Path | None) -> str | None:
        """The text of the file an edit names as the editor has it, unsaved changes included, when the client
        serves ``fs/*`` (``None`` otherwise, or when the editor has no such file: the diff then reads the disk)."""
        if path is None or not live.editor_files:
            return None
        try:
            return (await self.client.read_text_file(session_id=live.session_id, path=str(path))).content
        except RequestError:
            return None

    async def _answer(self, live: _Live, ask: QuestionRequestEvent) -> None:
        if self._forms:
            answers = await self._answers_by_form(live, ask)
        else:
            answers = await self._answers_by_choice(live, ask)
        live.requests.send_nowait(QuestionResponseRequest(id=ask.id, answers=answers or None))

    async def _answers_by_form(self, live: _Live, ask: QuestionRequestEvent) -> dict[str, list[str] | str]:
        """The questions asked as one form; nothing when it was declined, cancelled, failed or answered outside
        the choices offered."""
        fields = {f"q{index}": _question_field(question) for index, question in enumerate(ask.questions)}
        form = ElicitationFormSessionMode(
            session_id=live.session_id,
            tool_call_id=ask.call_id,
            requested_schema=ElicitationSchema(properties=dict(fields), required=list(fields)),
        )
        message = ask.questions[0].question if len(ask.questions) == 1 else "The agent asks:"
        try:
            response = await self.client.create_elicitation(message=message, mode=form)
        except Exception:
            return {}
        if not isinstance(response, AcceptElicitationResponse) or response.content is None:
            return {}
        answers: dict[str, list[str] | str] = {}
        for key, question in zip(fields, ask.questions, strict=True):
            answer = _form_answer(question, response.content.get(key))
            if answer is None:
                return {}
            answers[question.question] = answer
        return answers

    async def _answers_by_choice(self, live: _Live, ask: QuestionRequestEvent) -> dict[str, list[str] | str]:
        """Each question asked as a permission-shaped choice; nothing once one is declined."""
        answers: dict[str, list[str] | str] = {}
        for index, question in enumerate(ask.questions):
            options = [
                PermissionOption(option_id=f"answer-{number}", name=option.label, kind="allow_once")
                for number, option in enumerate(question.options)
            ]
            options.append(PermissionOption(option_id=_DECLINE, name="Decline to answer", kind="reject_once"))
            call = ToolCallUpdate(
                tool_call_id=f"{ask.call_id or ask.id}-question-{index}",
                title=question.question,
                kind="think",
                status="pending",
                raw_input={"question": question.question, "header": question.header},
            )
            chosen = await self._choose(live, call, options)
            if chosen in (None, _DECLINE):
                return {}
            answers[question.question] = [question.options[int(str(chosen).removeprefix("answer-"))].label]
        return answers

    async def _choose(self, live: _Live, call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        """The option the client picked; ``None`` when it cancelled the request or failed to answer (which
        refuses: approvals fail closed)."""
        try:
            response = await self.client.request_permission(live.session_id, call, options)
        except Exception:
            return None
        return response.outcome.option_id if isinstance(response.outcome, AllowedOutcome) else None

    # -- opening sessions --------------------------------------------------------------------------------------

    def _live(self, session_id: str) -> _Live:
        live = self._sessions.get(session_id)
        if live is None:
            raise RequestError.invalid_params(
                {"sessionId": f"no session {session_id!r} is open on this connection"}
            )
        return live

    async def _stored(self, cwd: str, session_id: str, mcp_servers: Sequence[McpServer] | None) -> _Live:
        from hive_cli.session_store import open_session_store

        known = self._sessions.get(session_id)
        if known is not None:
            return known
        with open_session_store() as store:
            if store.get(session_id) is None:
                raise RequestError.invalid_params({"sessionId": f"no stored session {session_id!r}"})
        return await self._open(cwd, session_id, mcp_servers)

    async def _open(self, cwd: str, session_id: str | None, mcp_servers: Sequence[McpServer] | None) -> _Live:
        directory = Path(cwd)
        if not directory.is_absolute() or not await anyio.Path(directory).is_dir():
            raise RequestError.invalid_params({"cwd": f"{cwd!r} is not an absolute path of a directory"})
        plugins = tuple(_plugin(server, directory) for server in mcp_servers or ())
        options = replace(
            self._options, cwd=directory, layer=SessionLayer(plugins=plugins) if plugins else None
        )
        files = _Offered(self.client, *self._files, terminal=self._terminal)
        opened: _Live | BaseException = await self._group.start(_serve, options, session_id, files)
        if isinstance(opened, BaseException):
            raise RequestError(-32603, str(opened), {"cwd": cwd}) from opened
        self._sessions[opened.session_id] = opened
        return opened


@dataclass(frozen=True)
class _Offered:
    """The client's services for hive's tools: whether it reads and writes files and runs commands."""

    client: Client
    read: bool
    write: bool
    terminal: bool


async def _serve(
    options: HostOptions,
    session_id: str | None,
    files: _Offered,
    *,
    task_status: TaskStatus[_Live | BaseException],
) -> None:
    """Open the session and run it until it is stopped; report the session (or the error that kept it from
    opening) through ``task_status``."""
    from hive_cli.serving import open_served

    started = False
    try:
        async with open_served(options, session_id) as opened:
            agent_session = opened.agent_session
            if agent_session is not None and (files.read or files.write):
                from .files import client_file_tools

                served = client_file_tools(
                    files.client, opened.session_id, opened.host.policy, read=files.read, write=files.write
                )
                agent_session.agent.tools.update((tool.name, tool) for tool in served)
            if agent_session is not None and files.terminal:
                _serve_commands(files.client, opened, agent_session.agent.tools)
            requests, incoming = anyio.create_memory_object_stream[Request](math.inf)
            outgoing, events = anyio.create_memory_object_stream[Event](math.inf)
            live = _Live(opened, options.cwd, requests, events, opened.runner.stop, Translator(options.cwd))
            live.model = options.model
            live.editor_files = files.read and files.write and agent_session is not None
            task_status.started(live)
            started = True
            async with incoming, outgoing:
                await opened.runner.serve(incoming, outgoing.send_nowait)
    except USER_ERRORS as exc:
        if not started:
            task_status.started(exc)


def _serve_commands(client: Client, opened: OpenSession, tools: dict[str, Tool]) -> None:
    """``execute_command`` through the client's terminal, when hive's sandbox would not confine commands."""
    from hive_core.sandbox import SandboxSettings
    from hive_core.tool_names import EXECUTE_COMMAND

    from .terminal import client_command_tool
    from .terminal import unconfined

    own = tools.get(EXECUTE_COMMAND)
    settings = SandboxSettings.from_config(opened.host.config)
    if own is not None and unconfined(settings):
        tools[EXECUTE_COMMAND] = client_command_tool(client, opened.session_id, settings, own)


async def _coalesced(events: MemoryObjectReceiveStream[Event]) -> AsyncIterator[Event]:
    """The events, with runs of text (or thinking) deltas already waiting merged into one: a model that streams
    faster than the client reads costs one session update per batch, not per token."""
    held: Event | None = None
    while True:
        if held is None:
            try:
                held = await events.receive()
            except anyio.EndOfStream:
                return
        event, held = held, None
        if isinstance(event, TextDeltaEvent | ThinkingDeltaEvent):
            parts = [event.content]
            while True:
                try:
                    following = events.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
                if type(following) is not type(event):
                    held = following
                    break
                parts.append(cast("TextDeltaEvent | ThinkingDeltaEvent", following).content)
            if len(parts) > 1:
                event = type(event)(content="".join(parts))
        yield event


def _plugin(server: McpServer, cwd: Path) -> PluginConfig:
    """A client's MCP server as a hive MCP plugin of the session."""
    from hive_core.mcp import PluginConfig

    if isinstance(server, McpServerStdio):
        return PluginConfig(
            name=server.name,
            transport="stdio",
            command=server.command,
            arguments=tuple(server.args),
            environment={variable.name: variable.value for variable in server.env},
            working_directory=cwd,
            source="ACP client",
        )
    if isinstance(server, HttpMcpServer):
        return PluginConfig(
            name=server.name,
            transport="http",
            url=server.url,
            headers={header.name: header.value for header in server.headers},
            source="ACP client",
        )
    raise RequestError.invalid_params(
        {"mcpServers": f"hive runs MCP servers over stdio and HTTP, not {server!r}"}
    )


def _question_field(
    question: Question,
) -> ElicitationStringPropertySchema | ElicitationMultiSelectPropertySchema:
    """A question as a form field: its choices titled by label, several of them when it is multi-select, any
    text when it allows free text (the choices then named in the description)."""
    choices = [
        EnumOption(const=option.label, title=option.label, description=option.description)
        for option in question.options
    ]
    title = question.header or question.question
    if question.multi_select and choices and not question.allow_free_text:
        return ElicitationMultiSelectPropertySchema(
            type="array",
            title=title,
            description=question.question,
            min_items=1,
            items=TitledMultiSelectItems(any_of=choices),
        )
    if choices and not question.allow_free_text:
        return ElicitationStringPropertySchema(
            type="string", title=title, description=question.question, one_of=choices
        )
    named = "; ".join(option.label for option in question.options)
    return ElicitationStringPropertySchema(
        type="string",
        title=title,
        description=f"{question.question} (for example: {named})" if named else question.question,
        min_length=1,
    )


def _form_answer(question: Question, value: object) -> list[str] | str | None:
    """A form field's value as hive's answer to the question: the chosen labels, or the free text; ``None`` when
    the value is missing or outside the choices."""
    labels = {option.label for option in question.options}
    if question.allow_free_text or not labels:
        return value if isinstance(value, str) and value.strip() else None
    picked = [value] if isinstance(value, str) else value
    if not isinstance(picked, list) or not picked:
        return None
    chosen = [str(item) for item in cast("list[object]", picked)]
    if not set(chosen) <= labels or (len(chosen) > 1 and not question.multi_select):
        return None
    return chosen


def _prompt_text(blocks: Sequence[PromptBlock]) -> str:
    """The prompt as the message hive sends: its text, embedded files with their path, links named."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            parts.append(f"<file uri={block.resource.uri!r}>\n{block.resource.text}\n</file>")
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.name}]({block.uri})")
        else:
            raise RequestError.invalid_params(
                {"prompt": f"hive takes text and embedded text, not {block.type!r} content"}
            )
    if not parts:
        raise RequestError.invalid_params({"prompt": "the prompt is empty"})
    return "\n\n".join(parts)


def _iso(moment: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
