"""One tool round: the calls of a model message run through the pipeline, and their results recorded.

:func:`run_tool_round` is the round of the agent loop and of a resumed turn
(:class:`~hive_core.sessions.SuspendedTurn`): a ``tool_start`` for each call it runs, each call through the
session's pipeline (concurrently when there are several), a ``tool_end`` as each ends, then one ``tool`` message
with every call's result in call order. :func:`offer_tools` says which tools a turn offers the model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Final
from typing import overload

import anyio

from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnOptions

from .approvals import PathJudge
from .chat import RequiredTool
from .chat import ToolChoice
from .execution_log import ToolOutcomeKind
from .execution_log import ToolRecord
from .execution_log import tool_outcome_kind
from .messages import Message
from .messages import Part
from .messages import ToolCallPart
from .messages import ToolResultPart
from .pipeline import Invocation
from .tools import EventSink
from .tools import ToolContext
from .tools import ToolOutcome
from .tracing import NO_SPAN
from .tracing import Span
from .tracing import tool_span
from .tracing import tracer

if TYPE_CHECKING:
    from .loop import AgentSession

__all__ = [
    "CANCELLED_CALL_TEXT",
    "TOOL_OUTPUT_EVENT_CAP",
    "ToolOffer",
    "offer_tools",
    "run_tool_round",
]

TOOL_OUTPUT_EVENT_CAP: Final = 8192
"""Characters of a tool's output carried by ``tool_end`` (the model still reads the whole result)."""

CANCELLED_CALL_TEXT: Final = "Cancelled: the turn was cancelled before this call finished."
"""The result of a call whose turn was cancelled while it ran."""


@dataclass(frozen=True)
class ToolOffer:
    """The tools a turn offers the model."""

    names: tuple[str, ...]
    """The offered tools, in the order the model is shown them."""
    choice: ToolChoice
    """What the model is asked to do with them in the turn's first round (``none`` when nothing is offered)."""


def offer_tools(registered: Iterable[str], options: TurnOptions) -> ToolOffer:
    """What a turn with ``options`` offers out of the ``registered`` tool names.

    ``tool_names`` picks the tools (every registered one when unset); ``tool_mode: none`` offers none;
    ``require_any`` requires a call, and ``require:<tool>`` requires a call of that tool, offered beside the
    picked ones.
    """
    names = dict.fromkeys(registered if options.tool_names is None else options.tool_names)
    mode = options.tool_mode or "auto"
    choice: ToolChoice
    if mode == "none":
        names.clear()
        choice = "none"
    elif mode == "auto":
        choice = "auto"
    elif mode == "require_any":
        choice = "required"
    else:
        choice = RequiredTool(mode.removeprefix("require:"))
        names[choice.name] = None
    return ToolOffer(tuple(names), choice if names else "none")


class _History(Sequence[Message]):
    """The conversation as it was when a round's calls started, without copying it: the guards read a few of the
    newest messages, and a copy of the whole session's history for every round would cost more as it grows. The
    round appends its results to the conversation afterwards; they are not part of this view."""

    __slots__ = ("_length", "_messages")

    def __init__(self, messages: Sequence[Message]) -> None:
        self._messages = messages
        self._length = len(messages)

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            return tuple(self._messages[i] for i in range(*index.indices(self._length)))
        if not -self._length <= index < self._length:
            raise IndexError("history index out of range")
        return self._messages[index % self._length]

    def __iter__(self) -> Iterator[Message]:
        messages = self._messages
        return (messages[i] for i in range(self._length))

    def __reversed__(self) -> Iterator[Message]:
        messages = self._messages
        return (messages[i] for i in range(self._length - 1, -1, -1))


async def run_tool_round(
    session: AgentSession,
    calls: Sequence[ToolCallPart],
    offered: Collection[str],
    emit: EventSink,
    *,
    known: Mapping[str, ToolResultPart] | None = None,
    on_settled: Callable[[ToolCallPart], None] | None = None,
) -> list[ToolOutcome]:
    """Run ``calls`` (one model message's) and append their ``tool`` message to the session's conversation.

    A call of a tool outside ``offered`` is answered as unknown without running anything. Calls with a result in
    ``known`` (by call id) are not run again: the message carries that result. ``on_settled`` is told of each
    call whose outcome is known, before its ``tool_end``. Returns the outcomes of the calls run, in call order.

    Cancelled, every call still running gets its ``tool_end`` and its result (:data:`CANCELLED_CALL_TEXT`)
    before the cancellation propagates, so the conversation stays well formed.
    """
    known = known or {}
    todo = [call for call in calls if call.id not in known]
    for call in todo:
        emit(
            ToolStartEvent(
                tool=call.name,
                input=call.arguments if call.arguments is not None else call.arguments_text,
                call_id=call.id,
            )
        )
    outcomes: dict[str, ToolOutcome] = {}
    history = _History(session.conversation)

    observer = session.observer

    async def run_one(call: ToolCallPart) -> None:
        begun = time.perf_counter()
        with tool_span(call) as span:
            try:
                outcome = await _outcome(session, call, offered, history, emit)
            except anyio.get_cancelled_exc_class():
                if observer is not None:
                    observer(_measured(call, begun, "cancelled"))
                raise
            if span is not NO_SPAN:
                _traced_outcome(span, outcome)
        if observer is not None:
            observer(_measured(call, begun, tool_outcome_kind(outcome)))
        outcomes[call.id] = outcome
        if on_settled is not None:
            on_settled(call)
        emit(_tool_end(call, outcome))

    try:
        if len(todo) == 1:
            await run_one(todo[0])
        else:
            async with anyio.create_task_group() as group:
                for call in todo:
                    group.start_soon(run_one, call)
    except anyio.get_cancelled_exc_class():
        for call in todo:
            if call.id not in outcomes:
                outcomes[call.id] = ToolOutcome(content=CANCELLED_CALL_TEXT, success=False)
                emit(_tool_end(call, outcomes[call.id]))
        session.conversation.append(_results(calls, outcomes, known))
        raise
    session.conversation.append(_results(calls, outcomes, known))
    return [outcomes[call.id] for call in todo]


async def _outcome(
    session: AgentSession,
    call: ToolCallPart,
    offered: Collection[str],
    history: Sequence[Message],
    emit: EventSink,
) -> ToolOutcome:
    agent = session.agent
    found = agent.tools.get(call.name) if call.name in offered else None
    if found is None and call.arguments is not None:
        available = ", ".join(sorted(offered)) or "none"
        return ToolOutcome(
            content=f"There is no tool named {call.name!r} this turn. Available tools: {available}.",
            success=False,
            error=f"LookupError: unknown tool {call.name!r}",
        )
    invocation = Invocation(
        call,
        found,
        dict(call.arguments or {}),
        ToolContext(
            call.id,
            call.name,
            agent.working_dir,
            emit,
            history,
            path_judge=agent.policy if isinstance(agent.policy, PathJudge) else None,
            instructions=agent.instructions,
        ),
        planning=session.planning,
        timeout=found.timeout if found is not None and found.timeout is not None else agent.tool_timeout,
    )
    try:
        return await agent.pipeline.run(invocation)
    except anyio.get_cancelled_exc_class():
        raise
    except Exception as exc:
        return ToolOutcome.failed(exc)


def _traced_outcome(span: Span, outcome: ToolOutcome) -> None:
    """Record a call's outcome on its ``execute_tool`` span: its kind, ``error.type`` when it failed or was
    refused, and its result when content is captured."""
    kind = tool_outcome_kind(outcome)
    span.set("hive.tool.outcome", kind)
    if outcome.refusal is not None:
        span.fail(outcome.refusal)
    elif not outcome.success:
        span.fail("tool_error")
    if tracer().capture_content:
        span.set("gen_ai.tool.call.result", outcome.content)


def _measured(call: ToolCallPart, begun: float, outcome: ToolOutcomeKind) -> ToolRecord:
    return ToolRecord(
        time=time.time(),
        name=call.name,
        call_id=call.id,
        duration_ms=int((time.perf_counter() - begun) * 1000),
        outcome=outcome,
    )


def _results(
    calls: Sequence[ToolCallPart], outcomes: Mapping[str, ToolOutcome], known: Mapping[str, ToolResultPart]
) -> Message:
    parts: list[Part] = [known.get(call.id) or _result(call, outcomes[call.id]) for call in calls]
    return Message("tool", parts)


def _result(call: ToolCallPart, outcome: ToolOutcome) -> ToolResultPart:
    return ToolResultPart(
        call.id,
        call.name,
        outcome.content,
        is_error=not outcome.success or outcome.refusal is not None,
        refusal=outcome.refusal,
        error=outcome.error,
        images=outcome.images,
    )


def _tool_end(call: ToolCallPart, outcome: ToolOutcome) -> ToolEndEvent:
    output = outcome.content
    if len(output) > TOOL_OUTPUT_EVENT_CAP:
        output = (
            output[:TOOL_OUTPUT_EVENT_CAP]
            + f"\n[... {len(outcome.content) - TOOL_OUTPUT_EVENT_CAP} more characters]"
        )
    return ToolEndEvent(
        tool=call.name,
        success=outcome.success and outcome.refusal is None,
        output=output,
        call_id=call.id,
        refusal=outcome.refusal,
        stats=outcome.stats,
    )
