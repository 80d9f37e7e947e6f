"""The summary of pruned history, written by the model in a request of its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from hive_core.chat import ChatClient
from hive_core.chat import ChatOptions
from hive_core.chat import FinishUpdate
from hive_core.chat import TextUpdate
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import system
from hive_core.messages import user

from .anchor import DECISION_PREFIX
from .tokens import MESSAGE_OVERHEAD
from .tokens import chars_to_tokens

__all__ = [
    "SUMMARY_PREFIX",
    "omitted_marker",
    "render_transcript",
    "summarize",
    "summary_instructions",
    "summary_message",
]

SUMMARY_PREFIX: Final = "[Previous conversation summary]: "
"""How the summary message begins (upstream's)."""

_REQUEST_OVERHEAD: Final = 64
"""Tokens kept free in the summary request beyond its parts (template, separators)."""


def summary_instructions(limit_tokens: int, *, anchored: bool = False) -> str:
    """The summary request's system text; ``anchored`` asks for each decision on a line of its own, which the
    anchored state keeps (see :mod:`hive_core.context.anchor`)."""
    decisions = (
        f" Write each decision made on a line of its own that begins with '{DECISION_PREFIX}'."
        if anchored
        else ""
    )
    return (
        "You summarize the earlier part of a conversation between a user and an AI coding assistant, so the "
        "assistant can continue without it. Write the summary in plain prose and lists, under "
        f"{limit_tokens} tokens. Keep: the user's goal and requests, decisions made, files read or changed "
        "(with paths), commands run and their outcomes, errors met and how they were handled, and what "
        f"remains to do.{decisions} Leave out pleasantries and anything superseded. Do not call tools; do not "
        "continue the conversation; answer with the summary only."
    )


def omitted_marker(count: int) -> str:
    """``[N earlier messages omitted]``: what stands in when there is no summary."""
    return f"[{count} earlier messages omitted]"


def summary_message(text: str) -> Message:
    """The system message that carries a summary."""
    return system(f"{SUMMARY_PREFIX}{text}")


def render_transcript(
    messages: Sequence[Message], previous: str | None = None, max_chars: int | None = None
) -> str:
    """The pruned messages as plain text for the summarizer (after an earlier summary, when there is one), cut
    in the middle to ``max_chars``."""
    lines: list[str] = []
    if previous:
        lines.append(f"[Summary of what came before]\n{previous}")
    for message in messages:
        for part in message.parts:
            if isinstance(part, TextPart) and part.text:
                lines.append(f"{message.role}: {part.text}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"assistant called {part.name} {part.arguments_text}")
            elif isinstance(part, ToolResultPart):
                status = " (error)" if part.is_error else ""
                lines.append(f"result of {part.name}{status}: {part.content}")
            elif isinstance(part, ThinkingPart):
                continue
    text = "\n\n".join(lines)
    if max_chars is not None and len(text) > max_chars:
        head = max_chars // 3
        tail = max_chars - head
        omitted = len(text) - head - tail
        text = f"{text[:head]}\n\n[... {omitted:,} characters omitted ...]\n\n{text[len(text) - tail :]}"
    return text


async def summarize(
    client: ChatClient,
    pruned: Sequence[Message],
    *,
    limit_tokens: int,
    window: int,
    options: ChatOptions,
    previous: str | None = None,
    anchored: bool = False,
) -> str | None:
    """The model's summary of ``pruned`` in at most ``limit_tokens`` tokens, or ``None`` when the request
    fails, is refused by the budget backstop or comes back empty (``anchored``: see
    :func:`summary_instructions`).

    The request has no tools, reserves ``limit_tokens`` as headroom for the answer, and sends the transcript
    cut to what fits the rest of the window.
    """
    from hive_core.budget import BUDGET_EXHAUSTED_TEXT  # budget imports this package's estimator

    instructions = summary_instructions(limit_tokens - MESSAGE_OVERHEAD, anchored=anchored)
    room = (
        window - limit_tokens - chars_to_tokens(len(instructions)) - _REQUEST_OVERHEAD - 2 * MESSAGE_OVERHEAD
    )
    if room <= 0:
        return None
    transcript = render_transcript(pruned, previous, max_chars=room * 4)
    request = ChatOptions(
        max_output_tokens=limit_tokens, model=options.model, temperature=options.temperature
    )
    chunks: list[str] = []
    try:
        async for update in client.stream([system(instructions), user(transcript)], request):
            if isinstance(update, TextUpdate):
                chunks.append(update.text)
            elif isinstance(update, FinishUpdate) and update.reason == "content_filter":
                return None
    except Exception:  # any failure of the summary request falls back to the marker
        return None
    text = "".join(chunks).strip()
    if not text or text == BUDGET_EXHAUSTED_TEXT:
        return None
    limit_chars = max(limit_tokens - MESSAGE_OVERHEAD, 1) * 4 - len(SUMMARY_PREFIX)
    return text[:limit_chars].rstrip() if len(text) > limit_chars else text
