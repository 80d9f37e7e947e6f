"""The tool invocation pipeline: ordered middlewares around every tool call.

The default order, outermost first: argument-parse failure, repeated-call guard, repeated-error guard, approval
gate, resilient arguments, per-call timeout, then the tool itself. A middleware never raises to refuse: it
returns a :class:`~hive_core.tools.ToolOutcome` carrying a refusal kind. Guards read their streaks from the
conversation, so one pipeline serves any number of sessions and a streak spans rounds, turns and restarts.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any
from typing import Protocol

import anyio
import msgspec

from .approvals import ApprovalService
from .approvals import ToolCallPolicy
from .approvals import decide
from .messages import Message
from .messages import ToolCallPart
from .messages import ToolResultPart
from .tools import Tool
from .tools import ToolArgumentError
from .tools import ToolContext
from .tools import ToolOutcome
from .tracing import VERDICT_ATTRIBUTE
from .tracing import annotate

__all__ = [
    "ApprovalGate",
    "ArgumentParseFailureGuard",
    "Invocation",
    "Middleware",
    "Next",
    "Pipeline",
    "RepeatedCallGuard",
    "RepeatedErrorGuard",
    "ResilientArguments",
    "Timeout",
    "call_key",
    "default_middlewares",
]


@dataclass(frozen=True)
class Invocation:
    """One tool call going through the pipeline."""

    call: ToolCallPart
    """The call as the model made it."""
    tool: Tool | None
    """The tool called; ``None`` when the model named a tool that does not exist."""
    arguments: dict[str, Any]
    """The arguments to run with (the approval gate may replace some)."""
    context: ToolContext
    """The call's context; ``context.conversation`` is the history before this round's results."""
    planning: bool = False
    """Whether the session is in planning mode (only read-only tools run)."""
    timeout: float | None = None
    """Seconds the call may run; ``None`` for no limit."""


Next = Callable[[Invocation], Awaitable[ToolOutcome]]
"""The rest of the pipeline."""


class Middleware(Protocol):
    """One step around a tool call."""

    async def __call__(self, invocation: Invocation, call_next: Next) -> ToolOutcome:
        """Run (or refuse) ``invocation``, usually by awaiting ``call_next``."""
        ...


class Pipeline:
    """Middlewares folded around the tool invocation."""

    def __init__(self, middlewares: Sequence[Middleware]) -> None:
        self.middlewares = tuple(middlewares)
        call_next: Next = _run_tool
        for middleware in reversed(self.middlewares):
            call_next = _bind(middleware, call_next)
        self._entry = call_next

    async def run(self, invocation: Invocation) -> ToolOutcome:
        """Run ``invocation`` through every middleware; failures of the tool become failed outcomes."""
        return await self._entry(invocation)


def _bind(middleware: Middleware, call_next: Next) -> Next:
    async def step(invocation: Invocation) -> ToolOutcome:
        return await middleware(invocation, call_next)

    return step


async def _run_tool(invocation: Invocation) -> ToolOutcome:
    if invocation.tool is None:
        raise LookupError(f"there is no tool named {invocation.call.name!r}")
    return await invocation.tool.invoke(invocation.arguments, invocation.context)


def call_key(name: str, arguments: object) -> str:
    """What makes two calls "the same call": the tool name and the arguments with keys sorted."""
    return name + "\0" + msgspec.json.encode(arguments, order="sorted").decode()


def _completed_calls(conversation: Sequence[Message]) -> Iterator[tuple[ToolCallPart, ToolResultPart]]:
    """Completed calls, newest first."""
    results: dict[str, ToolResultPart] = {}
    for message in reversed(conversation):
        if message.role == "tool":
            for result in message.tool_results:
                results[result.call_id] = result
        elif message.role == "assistant":
            for call in reversed(message.tool_calls):
                result = results.get(call.id)
                if result is not None:
                    yield call, result


class ArgumentParseFailureGuard:
    """Refuses a call whose argument text is not valid JSON (``invalid_arguments``); the tool never runs."""

    async def __call__(self, invocation: Invocation, call_next: Next) -> ToolOutcome:
        call = invocation.call
        if call.parse_error is not None or call.arguments is None:
            reason = call.parse_error or "the arguments are not a JSON object"
            return ToolOutcome.refused(
                "invalid_arguments",
                f"{reason}. Re-issue the call with complete arguments that are valid JSON matching the tool's schema.",
            )
        return await call_next(invocation)


class RepeatedCallGuard:
    """Stops a model that repeats a successful call with the same arguments.

    ``max_repeats`` identical successes in a row are allowed; the next identical call is refused
    (``repeated_call``), and being refused ``max_refusals`` times in a row ends the turn.
    """

    def __init__(self, max_repeats: int = 3, max_refusals: int = 2) -> None:
        self.max_repeats = max_repeats
        self.max_refusals = max_refusals

    async def __call__(self, invocation: Invocation, call_next: Next) -> ToolOutcome:
        name = invocation.call.name
        key = call_key(name, invocation.call.arguments)
        streak = refused = 0
        for call, result in _completed_calls(invocation.context.conversation):
            # Past max_repeats the verdict cannot change: a long run of the same call must not make every
            # later call scan it.
            if streak >= self.max_repeats or call_key(call.name, call.arguments) != key:
                break
            if result.refusal == "repeated_call":
                if streak == 0:
                    refused += 1
                continue
            if result.is_error or result.refusal is not None:
                break
            streak += 1
        if streak < self.max_repeats:
            return await call_next(invocation)
        text = (
            f"'{name}' already ran {streak} times in a row with these same arguments. Its result is in the "
            "conversation; do not call it again with these arguments: use that result, call a different tool, "
            "or change the arguments."
        )
        if refused + 1 >= self.max_refusals:
            text = (
                f"'{name}' was called again with the same arguments after being refused {refused} time(s); "
                f"the request was stopped as stuck repeating '{name}'."
            )
            return ToolOutcome.refused("repeated_call", text, terminate=True)
        return ToolOutcome.refused("repeated_call", text)


class RepeatedErrorGuard:
    """Ends the turn when a tool fails with the same error ``max_errors`` times in a row (``repeated_error``)."""

    def __init__(self, max_errors: int = 3) -> None:
        self.max_errors = max_errors

    async def __call__(self, invocation: Invocation, call_next: Next) -> ToolOutcome:
        try:
            outcome = await call_next(invocation)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:  # the tool's own failure: the model reads it
            outcome = ToolOutcome.failed(exc)
        if outcome.error is None:
            return outcome
        name = invocation.call.name
        streak = 1
        for call, result in _completed_calls(invocation.context.conversation):
            if streak >= self.max_errors or call.name != name or result.error != outcome.error:
                break
            streak += 1
        if streak < self.max_errors:
            return outcome
        return ToolOutcome.refused(
            "repeated_error",
            f"'{name}' failed with the same error {streak} times in a row ({outcome.error}); the request was stopped.",
            terminate=True,
        )


class ApprovalGate:
    """Asks :func:`~hive_core.approvals.decide` about every call: allowed or approved runs it, anything else is
    refused (``denied``, ``approval_unavailable``, ``rejected``, never a pass).

    Planning mode is decided here, and only here: a call runs when its tool is marked read-only or the policy
    counts it as read-only (:meth:`~hive_core.approvals.ToolCallPolicy.is_read_only`); any other call is refused
    (``denied``) before the policy is asked. Without a policy every call is asked about (pass
    :data:`~hive_core.approvals.ALLOW_ALL` to run every call); without a service an ``ask`` is refused.
    """

    def __init__(self, policy: ToolCallPolicy | None, approvals: ApprovalService | None) -> None:
        self.policy = policy
        self.approvals = approvals

    def _runs_in_planning_mode(self, invocation: Invocation) -> bool:
        tool = invocation.tool
        if tool is None:
            return False
        return tool.read_only or (self.policy is not None and self.policy.is_read_only(tool.name))

    async def __call__(self, invocation: Invocation, call_next: Next) -> ToolOutcome:
        name = invocation.call.name
        if invocation.planning and not self._runs_in_planning_mode(invocation):
            annotate(VERDICT_ATTRIBUTE, "denied")
            return ToolOutcome.refused(
                "denied",
                f"Permission denied: planning mode runs only read-only tools; '{name}' may change things.",
            )
        judged = await decide(
            self.policy,
            self.approvals,
            call_id=invocation.call.id,
            tool_name=name,
            arguments=invocation.arguments,
        )
        annotate(VERDICT_ATTRIBUTE, judged.outcome)
        reason = judged.verdict.reason
        match judged.outcome:
            case "allowed":
                return await call_next(invocation)
            case "denied" if judged.decision is not None:
                return ToolOutcome.refused(
                    "denied",
                    f"Permission denied: the approved change to the arguments is refused: "
                    f"{reason or 'the rules forbid this call'}",
                )
            case "denied":
                return ToolOutcome.refused(
                    "denied", f"Permission denied: {reason or 'the rules forbid this call'}"
                )
            case "unavailable":
                return ToolOutcome.refused(
                    "approval_unavailable",
                    f"Approval required but no approval service is configured: {reason or name}",
                )
            case "rejected":
                assert judged.decision is not None
                return ToolOutcome.refused(
                    "rejected", f"Approval rejected: {judged.decision.reason or 'the operator declined'}"
                )
            case "approved":
                context = replace(invocation.context, approved=True)
                return await call_next(replace(invocation, arguments=judged.arguments, context=context))


class ResilientArguments:
    """Answers arguments that parsed but do not fit the tool with a numbered recovery directive.

    The directive is a successful result, so the repeated-call guard stops a model that keeps sending the same
    unfit arguments.
    """

    async def __call__(self, invocation: Invocation, call_next: Next) -> ToolOutcome:
        try:
            return await call_next(invocation)
        except ToolArgumentError as exc:
            name = invocation.call.name
            if exc.missing:
                text = (
                    f"The call to '{name}' is missing the required parameter '{exc.missing}'. Do this:\n"
                    f"1. Look for the value of '{exc.missing}' in the user's message and the conversation.\n"
                    f"2. If you find it, call '{name}' again with '{exc.missing}' set to it.\n"
                    "3. If it is not there, ask the user for it, or use a different tool.\n"
                    "Do not repeat the call with empty or missing arguments."
                )
            else:
                text = (
                    f"'{name}' rejected the call because the arguments do not fit its parameters: {exc}. "
                    "Check the parameter schema and call again with arguments that fit it, or ask the user "
                    "instead of retrying blindly."
                )
            return ToolOutcome(content=text)


class Timeout:
    """Stops a call that runs longer than its timeout (``timed_out``); the failure counts as an error streak."""

    async def __call__(self, invocation: Invocation, call_next: Next) -> ToolOutcome:
        limit = invocation.timeout
        if limit is None:
            return await call_next(invocation)
        with anyio.move_on_after(limit):
            return await call_next(invocation)
        text = f"'{invocation.call.name}' timed out after {limit:g} s"
        return ToolOutcome(content=text, success=False, refusal="timed_out", error=f"TimeoutError: {text}")


def default_middlewares(
    policy: ToolCallPolicy | None = None, approvals: ApprovalService | None = None
) -> list[Middleware]:
    """The pipeline of the CLI and the servers, outermost first."""
    return [
        ArgumentParseFailureGuard(),
        RepeatedCallGuard(),
        RepeatedErrorGuard(),
        ApprovalGate(policy, approvals),
        ResilientArguments(),
        Timeout(),
    ]
