"""The agent loop: one turn is model round → tool calls → model round ..., until the model stops.

:class:`Agent` holds what does not change between turns (model, tools, pipeline, defaults); an
:class:`AgentSession` holds one conversation and is the *processor* every runner drives: a ``user_message`` in,
events out through an :data:`~hive_core.tools.EventSink`. Text deltas go straight from the model's stream to the
sink with no task switch in between, which is what keeps the per-delta cost near the encoder's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Final
from typing import cast

import anyio
import msgspec

from hive_protocol import MAX_NESTING_DEPTH
from hive_protocol import AddendumEvent
from hive_protocol import ErrorEvent
from hive_protocol import InvalidTurnOptions
from hive_protocol import ReasoningEffort
from hive_protocol import RefusalKind
from hive_protocol import StopReason
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import TurnEndEvent
from hive_protocol import TurnOptions
from hive_protocol import UserMessageRequest
from hive_protocol import excerpt
from hive_protocol import nested_too_deep
from hive_protocol import validate_turn_options

from .approvals import ApprovalService
from .approvals import ToolCallPolicy
from .budget import admits
from .chat import ChatClient
from .chat import ChatOptions
from .chat import FinishReason
from .chat import FinishUpdate
from .chat import NoticeUpdate
from .chat import TextUpdate
from .chat import ThinkingUpdate
from .chat import ToolCallUpdate
from .chat import UsageUpdate
from .chat import probed_capabilities
from .context import CompactionReport
from .context import ContextManager
from .context import PreparedRequest
from .context import estimate_tokens
from .execution_log import CompactionRecord
from .execution_log import ExecutionObserver
from .execution_log import ModelRequestRecord
from .failures import context_overflowed
from .messages import Message
from .messages import Part
from .messages import TextPart
from .messages import ThinkingPart
from .messages import ToolCallPart
from .messages import ToolResultPart
from .pipeline import Middleware
from .pipeline import Pipeline
from .pipeline import default_middlewares
from .spending import Pricing
from .spending import SessionSpending
from .spending import SpendingLimits
from .tool_retrieval import ToolSelector
from .tool_round import ToolOffer
from .tool_round import offer_tools
from .tool_round import run_tool_round
from .tools import EventSink
from .tools import Tool
from .tools import ToolOutcome
from .turn_request import TurnRequest

__all__ = ["DEFAULT_MAX_ITERATIONS", "Agent", "AgentSession"]

DEFAULT_MAX_ITERATIONS: Final = 10
"""Model rounds with tool calls allowed per turn before a last round without tools."""

_NOT_RUN_TEXT: Final = "Not run: the turn reached its limit of tool rounds."
_OVER_BUDGET_TEXT: Final = "Not run: the session reached its budget."

_DECIDED: Final[frozenset[RefusalKind]] = frozenset({"denied", "approval_unavailable", "rejected"})
"""Refusals that are the rules' or the user's decision, not a failure of the call: they do not count towards
:attr:`Agent.max_consecutive_errors`, nor reset the count."""

_REQUEST_SIZE: Final = msgspec.json.Encoder()


class Agent:
    """A model with tools, a policy and defaults; :meth:`session` starts a conversation with it."""

    def __init__(
        self,
        client: ChatClient,
        *,
        tools: Iterable[Tool] = (),
        instructions: str | None = None,
        policy: ToolCallPolicy | None = None,
        approvals: ApprovalService | None = None,
        middlewares: Sequence[Middleware] | None = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        max_consecutive_errors: int | None = None,
        temperature: float | None = None,
        max_output_tokens: int | None = None,
        reasoning_effort: ReasoningEffort | None = None,
        tool_timeout: float | None = None,
        working_dir: Path | None = None,
        planning: bool = False,
        context: ContextManager | None = None,
        clock: Callable[[], float] = time.monotonic,
        tool_selector: ToolSelector | None = None,
        spending: SpendingLimits | None = None,
        pricing: Pricing | None = None,
    ) -> None:
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
        if max_consecutive_errors is not None and max_consecutive_errors < 1:
            raise ValueError(f"max_consecutive_errors must be at least 1, got {max_consecutive_errors}")
        self.client = client
        self.tools: dict[str, Tool] = {}
        """The registered tools by name."""
        for item in tools:
            if item.name in self.tools:
                raise ValueError(f"two tools are named {item.name!r}")
            self.tools[item.name] = item
        self.instructions = instructions
        self.tool_selector = tool_selector
        """Chooses the tools each turn offers from what its message asks for (small local models); ``None``
        offers every registered tool."""
        self.policy = policy
        """The policy the approval gate asks (``None``: every call is asked about; pass
        :data:`~hive_core.approvals.ALLOW_ALL` to run every call); tools that reach many files ask it about each one
        when it judges paths (:class:`~hive_core.approvals.PathJudge`)."""
        self.pipeline = Pipeline(
            default_middlewares(policy, approvals) if middlewares is None else middlewares
        )
        self.max_iterations = max_iterations
        self.max_consecutive_errors = max_consecutive_errors
        """Failed tool calls in a row (in call order, across the rounds of one request) that end the request
        with ``stop_reason: tool_terminated``; a call that succeeds starts the count again. ``None``: no limit."""
        self.defaults = TurnOptions(
            temperature=temperature, max_output_tokens=max_output_tokens, reasoning_effort=reasoning_effort
        )
        """The agent's configuration; a turn's options are merged over it field by field."""
        self.tool_timeout = tool_timeout
        self.working_dir = working_dir or Path.cwd()
        self.planning = planning
        """Planning mode: only read-only tools run."""
        self.context = context if context is not None else ContextManager()
        """Prepares every request of its sessions: keeps what is sent inside the model's window (the
        conversation stays whole). It caches one conversation: a host running several sessions of one agent at
        once gives each its own (:meth:`session`)."""
        self.clock = clock
        self.spending = spending if spending is not None else SpendingLimits()
        """What each of its sessions may spend (the ``budget`` section); no limit by default."""
        self.pricing = pricing
        """Prices each model request's usage (``None``: every cost is unknown)."""
        self._probed = False

    async def probe(self) -> None:
        """Let the model client ask its server what it can do (its context window), once: the first turn does."""
        if not self._probed:
            self._probed = True
            await probed_capabilities(self.client)

    def offer(self, options: TurnOptions, prompt: str = "", history: Sequence[Message] = ()) -> ToolOffer:
        """The tools a turn with ``options`` offers the model: none when the model takes no tools. With a
        :attr:`tool_selector` and no tools named by the turn, the selector picks them for ``prompt``."""
        if not self.client.capabilities.tools:
            return ToolOffer((), "none")
        registered: Iterable[str] = self.tools
        if self.tool_selector is not None and options.tool_names is None:
            registered = self.tool_selector.select(prompt, history, self.tools)
        return offer_tools(registered, options)

    def session(
        self, history: Iterable[Message] = (), *, context: ContextManager | None = None
    ) -> AgentSession:
        """A conversation with this agent, optionally continuing ``history``; ``context`` replaces the agent's
        context manager for it."""
        return AgentSession(self, list(history), context)


@dataclass
class _Usage:
    input: int = 0
    output: int = 0
    cached: int = 0
    reports: int = 0

    @property
    def seen(self) -> bool:
        return self.reports > 0

    def add(self, update: UsageUpdate) -> None:
        self.input += update.input_tokens
        self.output += update.output_tokens
        self.cached += update.cached_input_tokens
        self.reports += 1


@dataclass
class _Round:
    """What one model response has produced so far (kept even when the turn is cancelled mid-stream)."""

    text: list[str] = field(default_factory=list[str])
    thinking: list[str] = field(default_factory=list[str])
    signature: str | None = None
    provider: str | None = None
    calls: dict[int, list[str | None]] = field(default_factory=dict[int, list[str | None]])
    finish: FinishReason | None = None

    @property
    def empty(self) -> bool:
        """Nothing of the response arrived (so nothing reached the client either)."""
        return not (self.text or self.thinking or self.calls or self.signature)

    def message(self, id_prefix: str, taken: set[str]) -> Message:
        """The round as one assistant message; call ids already in ``taken`` are replaced (and added to it)."""
        parts: list[Part] = []
        if self.thinking or self.signature:
            parts.append(ThinkingPart("".join(self.thinking), self.signature, self.provider))
        if self.text:
            parts.append(TextPart("".join(self.text)))
        for index in sorted(self.calls):
            call_id, name, arguments = self.calls[index]
            unique = _unique_id(call_id or f"{id_prefix}_{index}", taken)
            parts.append(_call_part(unique, name or "", arguments or ""))
        return Message("assistant", parts)


def _unique_id(call_id: str, taken: set[str]) -> str:
    # Models repeat call ids (some servers number the calls of every response from 0 again): a repeated id would
    # pair an approval, a result or a stored entry with the wrong call, so the repeat gets an id of its own.
    unique, suffix = call_id, 1
    while unique in taken:
        suffix += 1
        unique = f"{call_id}_{suffix}"
    taken.add(unique)
    return unique


class _CallIds:
    """The call ids of a conversation, brought up to date by scanning only the messages appended since the last
    look: a round's cost must not grow with the session's length. A conversation replaced (another list, or its
    messages swapped for others) is scanned again from the start."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._of: list[Message] | None = None
        self._seen = 0
        self._last: Message | None = None

    def of(self, conversation: list[Message]) -> set[str]:
        seen = self._seen
        if (
            conversation is not self._of
            or seen > len(conversation)
            or (seen and conversation[seen - 1] is not self._last)
        ):
            self._ids, self._of, seen = set(), conversation, 0
        for message in conversation[seen:]:
            self._ids.update(part.id for part in message.parts if isinstance(part, ToolCallPart))
        self._seen = len(conversation)
        self._last = conversation[-1] if conversation else None
        return self._ids


_TOO_DEEP_ARGUMENTS: Final = (
    f"The arguments nest arrays and objects deeper than {MAX_NESTING_DEPTH} levels; send them flatter"
)


def _call_part(call_id: str, name: str, text: str) -> ToolCallPart:
    if not text.strip():
        return ToolCallPart(call_id, name, text, {})
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        return ToolCallPart(
            call_id, name, text, None, f"The arguments are not valid JSON ({excerpt(str(exc))})"
        )
    except RecursionError:  # too deep for the decoder's own stack: refused like any other bad arguments
        return ToolCallPart(call_id, name, text, None, _TOO_DEEP_ARGUMENTS)
    if not isinstance(value, dict):
        return ToolCallPart(
            call_id, name, text, None, f"The arguments must be a JSON object, not {type(value).__name__}"
        )
    arguments = cast("dict[str, object]", value)
    if nested_too_deep(arguments):
        return ToolCallPart(call_id, name, text, None, _TOO_DEEP_ARGUMENTS)
    return ToolCallPart(call_id, name, text, arguments)


class AgentSession:
    """One conversation with an :class:`Agent`; call it with a ``user_message`` to run a turn."""

    def __init__(
        self, agent: Agent, conversation: list[Message], context: ContextManager | None = None
    ) -> None:
        self.agent = agent
        self.conversation = conversation
        """Every message so far, whole: context management reduces only what is sent."""
        self.context = context if context is not None else agent.context
        """What prepares each request from the conversation."""
        self.planning = agent.planning
        """Planning mode for this session."""
        self.observer: ExecutionObserver | None = None
        """Told of every model request, tool call and compaction as it is measured (the execution log); ``None``
        measures nothing."""
        self.spending = SessionSpending(agent.spending, agent.pricing)
        """What the session has spent against its limits; whoever restores a session restores its
        :attr:`~hive_core.spending.SessionSpending.spent` too."""
        self._call_ids = _CallIds()

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn: events go to ``emit``, ending with exactly one ``turn_end``.

        A failure of the model propagates (the runner reports it as ``error`` + ``turn_end``); cancellation
        propagates after every started tool call got its ``tool_end``.
        """
        agent = self.agent
        started = agent.clock()
        try:
            options = validate_turn_options(request.options or TurnOptions(), agent.tools)
        except InvalidTurnOptions as exc:
            emit(ErrorEvent(message=str(exc), code="request_rejected"))
            emit(TurnEndEvent())
            return
        await agent.probe()
        prompt = TurnRequest.of(request).prompt
        chat_options, offered = self._chat_options(options, request.model, prompt)
        self.conversation.append(Message("user", [TextPart(prompt)]))
        usage = _Usage()
        compactions: list[CompactionReport] = []
        notes: list[str] = []
        self.spending.start_turn()
        try:
            stop = await self._rounds(chat_options, offered, emit, usage, compactions, notes)
        except Exception:
            # The runner reports the failure (error, turn_end); the turn's compactions happened all the same.
            _report(compactions, emit, notes)
            raise
        _report(compactions, emit, notes)
        emit(
            TurnEndEvent(
                input_tokens=usage.input if usage.seen else None,
                output_tokens=usage.output if usage.seen else None,
                total_tokens=usage.input + usage.output if usage.seen else None,
                cached_input_tokens=usage.cached or None,
                stop_reason=stop,
                duration_ms=int((agent.clock() - started) * 1000),
            )
        )

    async def _rounds(
        self,
        chat_options: ChatOptions,
        offered: tuple[str, ...],
        emit: EventSink,
        usage: _Usage,
        compactions: list[CompactionReport],
        notes: list[str],
    ) -> StopReason:
        agent = self.agent
        failures = 0
        for round_index in range(agent.max_iterations + 1):
            last = round_index >= agent.max_iterations
            round_options = (
                msgspec.structs.replace(chat_options, tools=[], tool_choice="none") if last else chat_options
            )
            answered = await self._model_round(round_options, emit, usage, compactions, notes)
            if answered is None:
                return "budget_exhausted"
            message, finish, within_budget = answered
            calls = message.tool_calls
            if not within_budget:
                self._not_run(calls, _OVER_BUDGET_TEXT)
                return "budget_exhausted"
            if not calls:
                return "step_limit" if last else _stop_reason(finish)
            if last:
                self._not_run(calls, _NOT_RUN_TEXT)
                return "step_limit"
            outcomes = await run_tool_round(self, calls, offered, emit)
            for outcome in outcomes:
                if outcome.usage is not None:
                    usage.add(outcome.usage)
            if any(outcome.terminate for outcome in outcomes):
                return "tool_terminated"
            failures = _failures_in_a_row(failures, outcomes)
            limit = agent.max_consecutive_errors
            if limit is not None and failures >= limit:
                what = "a failed tool call" if failures == 1 else f"{failures} failed tool calls in a row"
                notes.append(f"The request was stopped after {what}.")
                return "tool_terminated"
            if chat_options.tool_choice not in ("auto", "none"):
                chat_options = msgspec.structs.replace(chat_options, tool_choice="auto")
        raise AssertionError("unreachable: the last round has no tools")

    def _not_run(self, calls: Sequence[ToolCallPart], text: str) -> None:
        """Answer ``calls`` the model made with ``text``, as failures: every call keeps a result."""
        if calls:
            self.conversation.append(
                Message("tool", [ToolResultPart(c.id, c.name, text, is_error=True) for c in calls])
            )

    def _chat_options(
        self, options: TurnOptions, model: str | None, prompt: str = ""
    ) -> tuple[ChatOptions, tuple[str, ...]]:
        agent = self.agent
        defaults = agent.defaults
        offer = agent.offer(options, prompt, self.conversation)
        if self.planning:
            # Planning investigates: work handed to another agent is not offered at all.
            kept = tuple(
                name for name in offer.names if name not in agent.tools or not agent.tools[name].delegates
            )
            offer = ToolOffer(kept, offer.choice if kept else "none")
        instructions = "\n\n".join(t for t in (agent.instructions, options.instructions) if t) or None
        chat = ChatOptions(
            tools=[agent.tools[name].spec for name in offer.names],
            tool_choice=offer.choice,
            temperature=options.temperature if options.temperature is not None else defaults.temperature,
            max_output_tokens=options.max_output_tokens or defaults.max_output_tokens,
            # validate_turn_options checked the effort against REASONING_EFFORTS.
            reasoning_effort=cast(
                "ReasoningEffort | None", options.reasoning_effort or defaults.reasoning_effort
            ),
            instructions=instructions,
            model=model,
        )
        return chat, offer.names

    async def compact(self, options: TurnOptions | None = None) -> CompactionReport | None:
        """Compact what the next request sends now (``/compact``), whether or not the window is full.

        The conversation keeps every message; the session's :class:`~hive_core.context.ContextManager` keeps
        the compaction for the requests that follow. ``None`` when there was nothing to compact.
        """
        chat_options, _ = self._chat_options(options or TurnOptions(), None)
        prepared = await self.context.prepare(
            self.conversation, client=self.agent.client, options=chat_options, force=True
        )
        return prepared.compaction

    async def _prepare(
        self, options: ChatOptions, compactions: list[CompactionReport], *, force: bool = False
    ) -> PreparedRequest:
        """The request to send: the conversation as the context manager reduces it, compacted further when the
        token-budget backstop would refuse it (a session that reached the budget compacts instead of sticking)."""
        client, context = self.agent.client, self.context
        prepared = await context.prepare(self.conversation, client=client, options=options, force=force)
        if not force and prepared.compaction is None and not admits(client, prepared.messages, options):
            prepared = await context.prepare(self.conversation, client=client, options=options, force=True)
        if prepared.compaction is not None:
            compactions.append(prepared.compaction)
            if self.observer is not None:
                self.observer(CompactionRecord.of(prepared.compaction, time.time()))
        return prepared

    async def _model_round(
        self,
        options: ChatOptions,
        emit: EventSink,
        usage: _Usage,
        compactions: list[CompactionReport],
        notes: list[str],
    ) -> tuple[Message, FinishReason | None, bool] | None:
        """One model request and its response, appended to the conversation, and whether the session is still
        within its budget after it; ``None`` when the budget did not let the request be sent."""
        prepared = await self._prepare(options, compactions)
        spending = self.spending
        if not spending.before(options.model, lambda: estimate_tokens(prepared.messages, options), notes):
            return None
        start = _Usage(usage.input, usage.output, usage.cached)
        retry = self.context.settings.compact_on_overflow
        while True:
            reported, written = usage.input, usage.output
            current = _Round()
            try:
                await self._measured(prepared, options, current, emit, usage)
            except Exception as exc:
                # The server says the request did not fit (the window was unknown, or the estimate was off):
                # compact and send the round once more, if nothing of it reached the client yet.
                if not (retry and current.empty and context_overflowed(exc)):
                    raise
                compacted = await self._prepare(options, compactions, force=True)
                if compacted.compaction is None:
                    raise
            else:
                # Some servers answer an overflowing prompt with an empty reply cut at its first token instead.
                cut = current.finish == "length" and usage.output == written
                if not (retry and current.empty and cut):
                    break
                compacted = await self._prepare(options, compactions, force=True)
                if compacted.compaction is None:
                    break
            retry = False
            prepared = compacted
        if usage.input > reported:
            self.context.observe_usage(usage.input - reported, prepared)
        message = current.message(f"call_{len(self.conversation)}", self._call_ids.of(self.conversation))
        self.conversation.append(message)
        within = True
        if usage.seen and (usage.input, usage.output) != (start.input, start.output):
            spent = UsageUpdate(
                usage.input - start.input, usage.output - start.output, usage.cached - start.cached
            )
            within = spending.after(options.model, spent, notes)
        return message, current.finish, within

    async def _measured(
        self, prepared: PreparedRequest, options: ChatOptions, current: _Round, emit: EventSink, usage: _Usage
    ) -> None:
        """Stream one request, telling the :attr:`observer` (if any) its size, duration and usage once it ended."""
        observer = self.observer
        if observer is None:
            await self._stream(prepared, options, current, emit, usage)
            return
        size = len(_REQUEST_SIZE.encode((prepared.messages, options)))
        reports, reported, written = usage.reports, usage.input, usage.output
        begun = time.perf_counter()
        error: str | None = None
        try:
            await self._stream(prepared, options, current, emit, usage)
        except Exception as exc:
            error = str(exc) or type(exc).__name__
            raise
        finally:
            seen = usage.reports > reports
            observer(
                ModelRequestRecord(
                    time=time.time(),
                    duration_ms=int((time.perf_counter() - begun) * 1000),
                    request_bytes=size,
                    input_tokens=usage.input - reported if seen else None,
                    output_tokens=usage.output - written if seen else None,
                    model=options.model,
                    error=error,
                )
            )

    async def _stream(
        self, prepared: PreparedRequest, options: ChatOptions, current: _Round, emit: EventSink, usage: _Usage
    ) -> None:
        try:
            async for update in self.agent.client.stream(prepared.messages, options):
                # Ordered by frequency: this runs once per streamed chunk.
                if isinstance(update, TextUpdate):
                    if update.text:
                        current.text.append(update.text)
                        emit(TextDeltaEvent(content=update.text))
                elif isinstance(update, ThinkingUpdate):
                    if update.text:
                        current.thinking.append(update.text)
                        emit(ThinkingDeltaEvent(content=update.text))
                    if update.signature is not None:
                        current.signature = update.signature
                        current.provider = update.provider
                elif isinstance(update, ToolCallUpdate):
                    slot = current.calls.setdefault(update.index, [None, None, ""])
                    if update.id:
                        slot[0] = update.id
                    if update.name:
                        slot[1] = update.name
                    slot[2] = (slot[2] or "") + update.arguments
                elif isinstance(update, UsageUpdate):
                    usage.add(update)
                elif isinstance(update, FinishUpdate):
                    current.finish = update.reason
                else:
                    notice: NoticeUpdate = update  # the one kind left: a decorator's report
                    emit(notice.event)
        except anyio.get_cancelled_exc_class():
            # Keep what the user already saw; calls that never completed are dropped with the round.
            current.calls.clear()
            if current.text or current.thinking:
                self.conversation.append(current.message(f"call_{len(self.conversation)}", set()))
            raise


def _report(compactions: Sequence[CompactionReport], emit: EventSink, notes: Sequence[str] = ()) -> None:
    """The turn's one addendum (after its last text delta): every compaction it made, then why it stopped
    early or what it spent past a budget's warning or limit."""
    parts = [report.describe() for report in compactions]
    if parts or notes:
        emit(AddendumEvent(content="; ".join((*parts, *notes))))


def _failures_in_a_row(before: int, outcomes: Iterable[ToolOutcome]) -> int:
    """The count of failed tool calls in a row after ``outcomes`` (in call order), ``before`` it: a success
    starts it again, a call the rules or the user refused (:data:`_DECIDED`) leaves it as it is."""
    count = before
    for outcome in outcomes:
        if outcome.refusal in _DECIDED:
            continue
        count = 0 if outcome.success and outcome.refusal is None else count + 1
    return count


def _stop_reason(finish: FinishReason | None) -> StopReason:
    if finish == "length":
        return "output_limit"
    if finish == "content_filter":
        return "content_filter"
    return "completed"
