"""hive's turn-stream events as ACP session updates: text and thinking chunks, tool calls with their ``kind``,
``locations`` and ``diff`` content, their outcome, the plan, and the turn's stop reason and usage.

One :class:`Translator` follows one session: it keeps the plan (ACP sends the whole plan each time) and, for each
edit, the file's text before it (so the diff of a call shows what the file held when it was asked for).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import Final

from acp.schema import AgentMessageChunk
from acp.schema import AgentPlanUpdate
from acp.schema import AgentThoughtChunk
from acp.schema import ContentToolCallContent
from acp.schema import FileEditToolCallContent
from acp.schema import PlanEntry
from acp.schema import StopReason as AcpStopReason
from acp.schema import TerminalToolCallContent
from acp.schema import TextContentBlock
from acp.schema import ToolCallLocation
from acp.schema import ToolCallProgress
from acp.schema import ToolCallStart
from acp.schema import ToolKind
from acp.schema import Usage
from acp.schema import UserMessageChunk

from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.tool_names import DELETE_FILE
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import FETCH_PAGE
from hive_core.tool_names import GLOB_FILES
from hive_core.tool_names import GREP_FILES
from hive_core.tool_names import LIST_DIRECTORY
from hive_core.tool_names import MANAGE_TODO
from hive_core.tool_names import MOVE_FILE
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WEB_SEARCH
from hive_core.tool_names import WRITE_FILE
from hive_protocol import Event
from hive_protocol import PlanCompletedEvent
from hive_protocol import PlanCreatedEvent
from hive_protocol import PlanStepCompletedEvent
from hive_protocol import PlanStepStartedEvent
from hive_protocol import StopReason
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent

__all__ = ["SessionUpdate", "Translator", "replay", "stop_reason", "tool_kind", "usage"]

SessionUpdate = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
)
"""The ACP session updates hive sends."""

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
"""What a tool call shows."""
_KINDS: Final[Mapping[str, ToolKind]] = {
    READ_FILE: "read",
    WRITE_FILE: "edit",
    EDIT_FILE: "edit",
    DELETE_FILE: "delete",
    MOVE_FILE: "move",
    LIST_DIRECTORY: "search",
    GLOB_FILES: "search",
    GREP_FILES: "search",
    WEB_SEARCH: "search",
    EXECUTE_COMMAND: "execute",
    FETCH_PAGE: "fetch",
    MANAGE_TODO: "think",
    # The names coding-agent CLIs give their own tools (compared in lower case).
    "read": "read",
    "view": "read",
    "write": "edit",
    "edit": "edit",
    "multiedit": "edit",
    "apply_patch": "edit",
    "bash": "execute",
    "shell": "execute",
    "grep": "search",
    "glob": "search",
    "ls": "search",
    "webfetch": "fetch",
    "todowrite": "think",
}
_PATH_KEYS: Final = ("path", "file_path", "filePath", "source", "destination", "notebook_path")
_STOP_REASONS: Final[Mapping[StopReason | None, AcpStopReason]] = {
    None: "end_turn",
    "completed": "end_turn",
    "awaiting_host_tools": "end_turn",
    "tool_terminated": "end_turn",
    "output_limit": "max_tokens",
    "step_limit": "max_turn_requests",
    "content_filter": "refusal",
    "cancelled": "cancelled",
}


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of a tool of hive's or of a coding-agent CLI's (``other`` when it is neither known)."""
    kind = _KINDS.get(name) or _KINDS.get(name.lower())
    return "other" if kind is None else kind


def stop_reason(event: TurnEndEvent) -> AcpStopReason:
    """ACP's stop reason for hive's."""
    return _STOP_REASONS.get(event.stop_reason, "end_turn")


def usage(event: TurnEndEvent) -> Usage | None:
    """The turn's tokens, when the backend counted them."""
    if event.input_tokens is None and event.output_tokens is None:
        return None
    given, made = event.input_tokens or 0, event.output_tokens or 0
    return Usage(
        input_tokens=given,
        output_tokens=made,
        total_tokens=event.total_tokens if event.total_tokens is not None else given + made,
        cached_read_tokens=event.cached_input_tokens,
    )


def _text(content: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=content)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return dict(raw)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return dict(parsed) if isinstance(parsed, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
    return {}


class Translator:
    """The updates of one session's events, in order (see the module's documentation)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        """Where relative paths in tool arguments start."""
        self._plan: list[PlanEntry] = []

    def _path(self, value: str) -> Path:
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.cwd / path

    def title(self, tool: str, arguments: Mapping[str, Any]) -> str:
        """What a call does, in a line: the tool and what it acts on."""
        target = next(
            (
                str(arguments[k])
                for k in (*_PATH_KEYS, "command", "url", "query", "pattern")
                if k in arguments
            ),
            None,
        )
        return tool if target is None else f"{tool}: {target}"

    def locations(self, arguments: Mapping[str, Any]) -> list[ToolCallLocation] | None:
        """The files a call acts on, absolute."""
        found = [
            ToolCallLocation(path=str(self._path(str(arguments[key]))))
            for key in _PATH_KEYS
            if isinstance(arguments.get(key), str)
        ]
        return found or None

    def edited(self, tool: str, raw_input: Any) -> Path | None:
        """The file an edit call names, absolute (``None`` for a call that edits no file it names)."""
        if tool_kind(tool) != "edit":
            return None
        arguments = _arguments(raw_input)
        value = arguments.get("path", arguments.get("file_path"))
        return self._path(value) if isinstance(value, str) else None

    def diff(
        self, tool: str, arguments: Mapping[str, Any], buffer: str | None = None
    ) -> list[ToolContent] | None:
        """The change an edit asks for, as ACP ``diff`` content: the file now and after the call. ``buffer`` is the
        file's text as the editor has it (unsaved changes included), shown instead of the disk's when given."""
        path_value = arguments.get("path", arguments.get("file_path"))
        if not isinstance(path_value, str):
            return None
        path = self._path(path_value)
        before: str | None = buffer
        if before is None:
            try:
                before = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                before = None
        after: str | None = None
        name = tool.lower()
        if name in (WRITE_FILE, "write") and isinstance(arguments.get("content"), str):
            content = str(arguments["content"])
            after = (before or "") + content if arguments.get("append") else content
        elif name in (EDIT_FILE, "edit") and before is not None:
            old = arguments.get("old_text", arguments.get("old_string"))
            new = arguments.get("new_text", arguments.get("new_string"))
            if isinstance(old, str) and isinstance(new, str) and old in before:
                everywhere = bool(arguments.get("replace_all"))
                after = before.replace(old, new) if everywhere else before.replace(old, new, 1)
        if after is None:
            return None
        return [FileEditToolCallContent(type="diff", path=str(path), old_text=before, new_text=after)]

    def feed(self, event: Event, buffer: str | None = None) -> list[SessionUpdate]:
        """The updates of one event (none for events ACP has no place for); ``buffer`` as :meth:`diff` takes it."""
        match event:
            case TextDeltaEvent():
                return [AgentMessageChunk(session_update="agent_message_chunk", content=_text(event.content))]
            case ThinkingDeltaEvent():
                return [AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(event.content))]
            case ToolStartEvent():
                return [self.start(event.call_id, event.tool, _arguments(event.input), buffer)]
            case ToolEndEvent():
                return [self.end(event.call_id, event.success, event.output)]
            case PlanCreatedEvent():
                self._plan = [
                    PlanEntry(content=text, priority="medium", status="pending")
                    for text in event.step_descriptions
                ]
                return [self._plan_update()]
            case PlanStepStartedEvent() | PlanStepCompletedEvent():
                if 0 <= event.step_index < len(self._plan):
                    status = "in_progress" if isinstance(event, PlanStepStartedEvent) else "completed"
                    self._plan[event.step_index] = self._plan[event.step_index].model_copy(
                        update={"status": status}
                    )
                    return [self._plan_update()]
                return []
            case PlanCompletedEvent():
                if event.success and any(entry.status != "completed" for entry in self._plan):
                    self._plan = [entry.model_copy(update={"status": "completed"}) for entry in self._plan]
                    return [self._plan_update()]
                return []
            case _:
                return []

    def start(
        self, call_id: str, tool: str, arguments: Mapping[str, Any], buffer: str | None = None
    ) -> ToolCallStart:
        """A call as it starts: its kind, title, files and, for an edit, the diff (``buffer`` as :meth:`diff`)."""
        kind = tool_kind(tool)
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=self.title(tool, arguments),
            kind=kind,
            status="pending",
            raw_input=dict(arguments),
            locations=self.locations(arguments),
            content=self.diff(tool, arguments, buffer) if kind == "edit" else None,
        )

    def end(self, call_id: str, success: bool, output: str | None) -> ToolCallProgress:
        """A call's outcome, with its output."""
        return ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            status="completed" if success else "failed",
            content=[ContentToolCallContent(type="content", content=_text(output))] if output else None,
            raw_output=output,
        )

    def _plan_update(self) -> AgentPlanUpdate:
        return AgentPlanUpdate(session_update="plan", entries=list(self._plan))


def replay(messages: list[Message], translator: Translator) -> list[SessionUpdate]:
    """A stored conversation as the updates a client builds it from: user and agent messages, thoughts, and each
    tool call with its result."""
    updates: list[SessionUpdate] = []
    for message in messages:
        for part in message.parts:
            match part:
                case TextPart() if message.role == "user":
                    updates.append(
                        UserMessageChunk(session_update="user_message_chunk", content=_text(part.text))
                    )
                case TextPart() if message.role == "assistant":
                    updates.append(
                        AgentMessageChunk(session_update="agent_message_chunk", content=_text(part.text))
                    )
                case ThinkingPart():
                    updates.append(
                        AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(part.text))
                    )
                case ToolCallPart():
                    start = translator.start(part.id, part.name, part.arguments or {})
                    updates.append(start.model_copy(update={"content": None}))  # the file changed since
                case ToolResultPart():
                    updates.append(translator.end(part.call_id, not part.is_error, part.content))
                case _:
                    pass
    return updates
