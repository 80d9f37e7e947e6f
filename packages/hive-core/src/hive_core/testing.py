"""Test doubles that ship with the SDK, for hive's tests and for anybody testing code built on it.

:class:`ScriptedChatClient` plays a script of model rounds. It fails loudly when the loop asks for a round the
script does not have, and :meth:`ScriptedChatClient.assert_consumed` fails when rounds were left unplayed.
:class:`Approver` and :class:`Answerer` stand in for the human: one decision for every approval request, one
answer for every question, each request kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Final

import anyio
import msgspec

from hive_protocol import QuestionRequestEvent

from .approvals import ApprovalDecision
from .approvals import ApprovalRequest
from .chat import Capabilities
from .chat import ChatOptions
from .chat import ChatUpdate
from .chat import FinishReason
from .chat import FinishUpdate
from .chat import TextUpdate
from .chat import ThinkingUpdate
from .chat import ToolCallUpdate
from .chat import UsageUpdate
from .messages import Message
from .questions import Answers

__all__ = [
    "Answerer",
    "Approver",
    "Block",
    "ScriptError",
    "ScriptedChatClient",
    "ScriptedRound",
    "call",
    "fail",
    "reply",
]


class ScriptError(AssertionError):
    """The loop and the script disagree: an unexpected request, or rounds left unplayed."""


@dataclass(frozen=True)
class Block:
    """A point in a round where the stream stops until ``release`` is set (forever when it is ``None``)."""

    release: anyio.Event | None = None


Step = ChatUpdate | Block


@dataclass
class ScriptedRound:
    """One model response: updates streamed in order, then optionally a failure."""

    updates: list[Step] = field(default_factory=list[Step])
    error: BaseException | None = None
    """Raised after the updates."""
    check: Callable[[Sequence[Message], ChatOptions], None] | None = None
    """Called with the request before anything streams: assert on what the loop sent."""


def reply(
    *chunks: str,
    thinking: Sequence[str] = (),
    signature: str | None = None,
    usage: tuple[int, int] | None = None,
    finish: FinishReason = "stop",
) -> ScriptedRound:
    """A round that streams ``thinking`` then the text ``chunks``."""
    updates: list[Step] = [ThinkingUpdate(t) for t in thinking]
    if signature is not None:
        updates.append(ThinkingUpdate("", signature=signature, provider="scripted"))
    updates += [TextUpdate(c) for c in chunks]
    if usage is not None:
        updates.append(UsageUpdate(usage[0], usage[1]))
    updates.append(FinishUpdate(finish))
    return ScriptedRound(updates)


def call(
    *calls: tuple[str, dict[str, Any] | str] | tuple[str, dict[str, Any] | str, str],
    text: str = "",
    usage: tuple[int, int] | None = None,
    split: int = 0,
) -> ScriptedRound:
    """A round that calls tools: ``(name, arguments)`` or ``(name, arguments, call_id)``.

    Arguments given as a dict are encoded as JSON, a string is sent as written (for malformed arguments).
    ``split`` streams each call's arguments in pieces of that many characters, as real models do.
    """
    updates: list[Step] = [TextUpdate(text)] if text else []
    for index, spec in enumerate(calls):
        name, arguments = spec[0], spec[1]
        # Without an id the client numbers the call: call_1, call_2, ... over all its rounds.
        call_id = spec[2] if len(spec) == 3 else None
        raw = arguments if isinstance(arguments, str) else msgspec.json.encode(arguments).decode()
        pieces = [raw[i : i + split] for i in range(0, len(raw), split)] if split and raw else [raw]
        updates.append(ToolCallUpdate(index, call_id, name, pieces[0]))
        updates += [ToolCallUpdate(index, arguments=piece) for piece in pieces[1:]]
    if usage is not None:
        updates.append(UsageUpdate(usage[0], usage[1]))
    updates.append(FinishUpdate("tool_calls"))
    return ScriptedRound(updates)


def fail(error: BaseException, *chunks: str) -> ScriptedRound:
    """A round that streams ``chunks`` and then fails with ``error``."""
    return ScriptedRound([TextUpdate(c) for c in chunks], error)


_SCRIPTED_CAPABILITIES: Final = Capabilities(tools=True, streamed_tool_calls=True, thinking=True)


class ScriptedChatClient:
    """A :class:`~hive_core.chat.ChatClient` that plays scripted rounds, one per request, in order."""

    def __init__(
        self, rounds: Sequence[ScriptedRound], *, capabilities: Capabilities = _SCRIPTED_CAPABILITIES
    ) -> None:
        self._rounds = list(rounds)
        self._next = 0
        self._capabilities = capabilities
        self._calls = 0
        self.requests: list[tuple[list[Message], ChatOptions]] = []
        """Every request received: a copy of the messages and the options."""

    @property
    def capabilities(self) -> Capabilities:
        """The capabilities given at construction (by default: tools, streamed calls, thinking, no window)."""
        return self._capabilities

    @property
    def remaining(self) -> int:
        """Rounds not played yet."""
        return len(self._rounds) - self._next

    def add(self, *rounds: ScriptedRound) -> None:
        """Append rounds to the script."""
        self._rounds += rounds

    def assert_consumed(self) -> None:
        """Fail unless every round was played."""
        if self.remaining:
            raise ScriptError(f"{self.remaining} scripted round(s) were never requested")

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Play the next round."""
        self.requests.append((list(messages), options))
        if self._next >= len(self._rounds):
            last = messages[-1] if messages else None
            raise ScriptError(
                f"model request #{len(self.requests)} was not expected: the script has {len(self._rounds)} round(s); "
                f"last message: {last!r}"
            )
        scripted = self._rounds[self._next]
        self._next += 1
        if scripted.check is not None:
            scripted.check(messages, options)
        for step in scripted.updates:
            if isinstance(step, Block):
                if step.release is None:
                    await anyio.sleep_forever()
                else:
                    await step.release.wait()
                continue
            if isinstance(step, ToolCallUpdate) and step.name is not None and step.id is None:
                self._calls += 1
                step = ToolCallUpdate(step.index, f"call_{self._calls}", step.name, step.arguments)
            yield step
        if scripted.error is not None:
            raise scripted.error


class Approver:
    """An approval service that answers every request with ``decision`` and records what it was asked."""

    def __init__(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        """The answer to every request."""
        self.requests: list[ApprovalRequest] = []
        """The requests, in the order they came."""

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """Record ``request`` and answer it with :attr:`decision`."""
        self.requests.append(request)
        return self.decision


class Answerer:
    """A question service that answers every question with ``answers`` (``None``: declines) and records the
    questions."""

    def __init__(self, answers: Answers | None) -> None:
        self.answers = answers
        """The answer to every question; ``None`` declines them."""
        self.requests: list[QuestionRequestEvent] = []
        """The questions, in the order they came."""

    async def ask(self, request: QuestionRequestEvent) -> Answers | None:
        """Record ``request`` and answer it with :attr:`answers`."""
        self.requests.append(request)
        return self.answers
