"""One Copilot turn: its ``session.event`` notifications as hive events, its permissions and its questions.

Copilot's server streams everything as ``session.event`` ``{type, data}``: ``assistant.message_delta`` and
``assistant.reasoning_delta`` are text and thinking (of the main agent: an event carrying an ``agentId`` is a
subagent's, and ``subagent.started`` / ``completed`` / ``failed`` with the subagent's latest message and tool
count become ``agent_work`` snapshots), ``tool.execution_start`` / ``tool.execution_complete`` a tool
call (kept by :class:`~hive_providers.backends.kit.tool_calls.ToolCallTracker`), ``assistant.usage`` one model
call's tokens, ``session.error`` a failure and ``session.idle`` the end of the turn (``aborted`` after
``session.abort``).

``permission.requested`` is judged as Claude Code's ``can_use_tool`` is (a ``shell`` request as ``Bash``, a
``write`` as ``Write``, a ``read`` as ``Read``; :class:`~hive_providers.backends.kit.tool_use_permissions.ToolUsePermissions`)
and answered with ``session.permissions.handlePendingPermissionRequest``: ``approve-once`` or ``reject`` with the
reason as feedback. Copilot cannot take modified arguments: an approval that modified them is a ``reject`` whose
feedback carries them, so the model may retry with them.

The ``ask_user`` tool's ``userInput.request`` ``{question, choices, allowFreeform}`` is one question: one
``question_request`` with the choices as options (no descriptions, no multi-select) and free text only when
allowed (always, for a question without choices). The answer must be exactly one non-empty value, and an offered
choice unless free text is allowed; anything else (no answer, a refused one, a timeout) declines: the request fails
with :data:`DECLINED_QUESTION`, which is how Copilot learns the user gave no answer (the model reads "The user was
unable to respond"), and the run goes on. The question's id is the ``toolCallId`` of the ``user_input.requested``
event announcing it, else its ``requestId``, else ``copilot-input-<session>-<n>``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import Final

import anyio
from acp.exceptions import RequestError

from hive_core.approvals import ApprovalService
from hive_core.approvals import ToolCallPolicy
from hive_core.questions import Answers
from hive_core.questions import QuestionService
from hive_core.tools import EventSink
from hive_protocol import Question
from hive_protocol import QuestionOption
from hive_protocol import QuestionRequestEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import TurnEndEvent
from hive_providers.backends.kit.ask_user_question import DECLINED_QUESTION
from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.judging import working_directory
from hive_providers.backends.kit.subagent_work import Subagent
from hive_providers.backends.kit.subagent_work import Subagents
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.kit.tool_updates import text_content
from hive_providers.backends.kit.tool_use_permissions import ToolUsePermissions
from hive_providers.backends.kit.wire import Unknown

from .event_types import AssistantMessage
from .event_types import EventData
from .event_types import MessageDelta
from .event_types import PermissionRequested
from .event_types import ReasoningDelta
from .event_types import SessionError
from .event_types import SessionIdle
from .event_types import SubagentCompleted
from .event_types import SubagentFailed
from .event_types import SubagentStarted
from .event_types import ToolExecutionComplete
from .event_types import ToolExecutionStart
from .event_types import Usage
from .event_types import UserInputRequested
from .event_types import decode_session_event

__all__ = ["DECLINED_QUESTION", "TOOL_KINDS", "CopilotTurn", "question_of", "validated_answer"]

TOOL_KINDS: Final[Mapping[str, str]] = {
    "bash": "execute",
    "view": "read",
    "create": "edit",
    "edit": "edit",
    "grep": "search",
    "glob": "search",
}
"""Copilot's built-in tool names to the ACP kind whose hive tool name their ``tool_start`` carries."""

_PERMISSION_TOOLS: Final[Mapping[str, str]] = {"shell": "Bash", "write": "Write", "read": "Read"}
_log = logging.getLogger(__name__)

Send = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Sends one request to Copilot's server and returns its result."""


def question_of(params: Mapping[str, Any]) -> Question | None:
    """The hive question of a ``userInput.request``; ``None`` when it has no question text."""
    text = text_of(params.get("question"))
    if text is None:
        return None
    choices = [choice for choice in as_list(params.get("choices")) if isinstance(choice, str) and choice]
    free = params.get("allowFreeform")
    return Question(
        question=text,
        multi_select=False,
        options=[QuestionOption(label=choice) for choice in choices],
        allow_free_text=not choices or free is not False,  # Copilot's default is true
    )


def validated_answer(question: Question, answers: Answers | None) -> str | None:
    """The one answer Copilot can take, or ``None`` (a decline): exactly one non-empty value, and one of the
    offered choices unless free text is allowed."""
    if answers is None:
        return None
    values = answers.get(question.question)
    if values is None or len(values) != 1 or not values[0].strip():
        return None
    value = values[0]
    if not question.allow_free_text and value not in {option.label for option in question.options}:
        return None
    return value


class CopilotTurn:
    """The state of one running turn (see the module); :attr:`idle` is set when it ended, however it ended."""

    def __init__(
        self,
        *,
        emit: EventSink,
        session_id: str,
        send: Send,
        policy: ToolCallPolicy | None,
        approvals: ApprovalService | None,
        questions: QuestionService | None,
        taken: set[str],
        question_numbers: Callable[[], int],
        project: Path | None = None,
    ) -> None:
        self._emit = emit
        self.session_id = session_id
        """The Copilot session the turn runs in."""
        self._send = send
        self.tracker = ToolCallTracker(emit, taken=taken)
        """The turn's tool calls."""
        self._responder = ToolUsePermissions(
            tracker=self.tracker, policy=policy, approvals=approvals, project=project
        )
        self._questions = questions
        self._question_numbers = question_numbers
        self.idle = anyio.Event()
        """Set by ``session.idle`` (or by the backend when the server died)."""
        self.aborted = False
        """Whether ``session.idle`` said the turn was aborted."""
        self.error: str | None = None
        """The ``session.error`` message, when Copilot reported one."""
        self.cancelled = False
        """Whether :meth:`cancel` ended the turn's pending work."""
        self._scopes: set[anyio.CancelScope] = set()
        self._streamed: set[str] = set()
        self._announced: dict[str, list[str]] = {}
        self._input_tokens = 0
        self._output_tokens = 0
        self._cached_tokens = 0
        self._usage_seen = False
        self._work = Subagents[Subagent](emit)
        self._agents: dict[str, str] = {}

    # -- events ------------------------------------------------------------------------------------------------

    def on_event(self, event: object, spawn: Callable[[Awaitable[None]], None]) -> None:
        """Map one raw ``session.event``, decoded here (:func:`~.event_types.decode_session_event`); ``spawn``
        runs the async work a permission request needs."""
        decoded = decode_session_event(event)
        data, agent = decoded.data, decoded.agent_id
        match data:
            case PermissionRequested():
                spawn(self._permission(data))  # a subagent's too: every permission reaches hive
            case UserInputRequested(question=text):
                ident = data.tool_call_id or data.request_id
                if text and ident:
                    self._announced.setdefault(text, []).append(ident)
            case SubagentStarted() | SubagentCompleted() | SubagentFailed():
                self._subagent(data, agent)
            case Unknown(kind=str(kind)) if kind.startswith("subagent."):
                pass  # another subagent event: not a subagent's own stream
            case _ if agent is not None:
                self._subagent_progress(data, agent)  # a subagent's own stream: not the reply
            case MessageDelta(delta_content=delta) if delta:
                self._streamed.add(str(data.message_id))
                self._emit(TextDeltaEvent(content=delta))
            case ReasoningDelta(delta_content=delta) if delta:
                self._emit(ThinkingDeltaEvent(content=delta))
            case AssistantMessage(content=content) if content and str(data.message_id) not in self._streamed:
                self._emit(TextDeltaEvent(content=content))  # streaming was off for this one
            case ToolExecutionStart():
                name = data.tool_name or "tool"
                self.tracker.upsert(
                    {
                        "toolCallId": data.tool_call_id,
                        "title": name,
                        "kind": TOOL_KINDS.get(name),
                        "status": "in_progress",
                        "rawInput": data.arguments,
                    }
                )
            case ToolExecutionComplete():
                self._complete(data)
            case Usage():
                self._usage(data)
            case SessionError(message=message):
                self.error = message or "Copilot reported an error"
            case SessionIdle(aborted=aborted):
                self.aborted = aborted is True
                self.idle.set()
            case _:
                pass

    def _subagent(
        self, data: SubagentStarted | SubagentCompleted | SubagentFailed, agent: str | None
    ) -> None:
        key = data.tool_call_id or agent or "subagent"
        work = self._work.by_id.get(key)
        if isinstance(data, SubagentStarted):
            if work is None:
                work = self._work.by_id[key] = Subagent(item_id=f"copilot-subagent-{key}")
            work.title = data.agent_description or data.agent_display_name or work.title
            if agent is not None:
                self._agents[agent] = key
        elif work is None:
            return
        elif isinstance(data, SubagentCompleted):
            work.status = "stopped" if data.cancelled is True else "completed"
        else:
            work.status = "failed"
            work.summary = data.error or work.summary
        self._work.snapshot()

    def _subagent_progress(self, data: EventData, agent: str) -> None:
        key = self._agents.get(agent)
        if key is None:
            running = [k for k, work in self._work.by_id.items() if work.status == "running"]
            if len(running) != 1:
                return
            key = self._agents[agent] = running[0]
        work = self._work.by_id[key]
        if isinstance(data, AssistantMessage):
            if not data.content:
                return
            work.summary = data.content
        elif isinstance(data, ToolExecutionStart):
            work.tool_calls += 1
        else:
            return
        self._work.snapshot()

    def stop_subagents(self) -> None:
        """Mark every subagent still running as stopped (a cancelled or failed turn)."""
        self._work.stop_running()

    def _complete(self, data: ToolExecutionComplete) -> None:
        success = data.success is True
        if success:
            text = data.result.content if data.result is not None else None
        else:
            text = data.error.message if data.error is not None else None
        update: dict[str, Any] = {
            "toolCallId": data.tool_call_id,
            "status": "completed" if success else "failed",
        }
        if text:
            update["content"] = text_content(text)
        self.tracker.upsert(update)

    def _usage(self, data: Usage) -> None:
        figures = (data.input_tokens, data.output_tokens, data.cache_read_tokens)
        if all(figure is None for figure in figures):
            return
        self._usage_seen = True
        self._input_tokens += data.input_tokens or 0
        self._output_tokens += data.output_tokens or 0
        self._cached_tokens += data.cache_read_tokens or 0

    def finish(self) -> TurnEndEvent:
        """The turn's ``turn_end``: completed (or cancelled after an abort), with the summed usage."""
        if not self._usage_seen:
            return TurnEndEvent(stop_reason="cancelled" if self.aborted else "completed")
        return TurnEndEvent(
            stop_reason="cancelled" if self.aborted else "completed",
            input_tokens=self._input_tokens,
            output_tokens=self._output_tokens,
            total_tokens=self._input_tokens + self._output_tokens,
            cached_input_tokens=self._cached_tokens or None,
        )

    # -- permissions -------------------------------------------------------------------------------------------

    async def _permission(self, data: PermissionRequested) -> None:
        request_id = data.request_id or None
        if request_id is None:
            return
        asked = data.permission_request
        kind = text_of(asked.get("kind")) or "tool"
        tool = _PERMISSION_TOOLS.get(kind, kind)
        if kind == "shell":
            tool_input: dict[str, Any] = {"command": text_of(asked.get("fullCommandText")) or ""}
        elif kind in ("write", "read"):
            tool_input = {"file_path": text_of(asked.get("fileName")) or text_of(asked.get("path")) or ""}
        else:
            tool_input = dict(asked)
        if (directory := working_directory(asked)) is not None:
            tool_input.setdefault("cwd", directory)  # judged where it runs (see judging)
        with self._guarded():
            answer = await self._responder.can_use_tool(
                {"tool_name": tool, "input": tool_input, "tool_use_id": text_of(asked.get("toolCallId"))}
            )
            if answer.get("behavior") != "allow":
                result: dict[str, Any] = {
                    "kind": "reject",
                    "feedback": str(answer.get("message") or "Permission denied"),
                }
            elif as_mapping(answer.get("updatedInput")) != tool_input:
                # Approved with other arguments, which Copilot cannot take: running the original would run
                # what the human did not approve.
                result = {
                    "kind": "reject",
                    "feedback": f"The user approved only a changed call: {answer.get('updatedInput')}",
                }
            else:
                result = {"kind": "approve-once", "approvedInteractively": True}
            try:
                await self._send(
                    "session.permissions.handlePendingPermissionRequest",
                    {"sessionId": self.session_id, "requestId": request_id, "result": result},
                )
            except (RequestError, ConnectionError, OSError) as exc:
                _log.warning("answering Copilot's permission request %s failed: %s", request_id, exc)

    # -- questions ---------------------------------------------------------------------------------------------

    async def ask(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one ``userInput.request``: ``{answer, wasFreeform}``, or raise (a decline, see the module)."""
        question = question_of(params)
        if question is None:
            raise RequestError(-32602, "Invalid params", {"question": "must be text"})
        waiting = self._announced.get(question.question)
        request_id = (
            waiting.pop(0) if waiting else f"copilot-input-{self.session_id}-{self._question_numbers()}"
        )
        answer: str | None = None
        with self._guarded():
            if self._questions is not None:
                answers = await self._questions.ask(
                    QuestionRequestEvent(
                        id=request_id, call_id=self.tracker.running_call_id(request_id), questions=[question]
                    )
                )
                answer = validated_answer(question, answers)
        if self.cancelled:
            # The turn was cancelled while the question waited: closed with it, not declined.
            raise RequestError(-32800, "Request cancelled", {"reason": "the turn was cancelled"})
        if answer is None:
            raise RequestError(-32603, DECLINED_QUESTION, {"declined": True})
        return {"answer": answer, "wasFreeform": answer not in {option.label for option in question.options}}

    def cancel(self) -> None:
        """End every pending permission and question (the turn was cancelled or the server is gone); later ones
        end at once."""
        self.cancelled = True
        for scope in list(self._scopes):
            scope.cancel()

    @contextlib.contextmanager
    def _guarded(self) -> Generator[None]:
        with anyio.CancelScope() as scope:
            if self.cancelled:
                scope.cancel()
            self._scopes.add(scope)
            try:
                yield
            finally:
                self._scopes.discard(scope)
