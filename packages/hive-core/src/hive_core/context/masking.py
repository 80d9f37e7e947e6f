"""Observation masking: old tool results become placeholders that name the call, so the model can repeat it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from hive_core.messages import Message
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart

from .tokens import chars_to_tokens

__all__ = ["MAX_ARGUMENTS_IN_PLACEHOLDER", "mask_boundary", "mask_observations", "masked_placeholder"]

MAX_ARGUMENTS_IN_PLACEHOLDER: Final = 200
"""Arguments longer than this are left out of a placeholder (the call id still names the call)."""


def masked_placeholder(content: str, name: str = "tool", call: ToolCallPart | None = None) -> str:
    """``[Masked: <name> result, <chars> chars, ~<lines> lines]`` (upstream's, byte for byte), then how to see
    the result again: the call with its arguments, or its id when they are long."""
    placeholder = f"[Masked: {name} result, {len(content):,} chars, ~{content.count(chr(10)) + 1} lines]"
    if call is None:
        return placeholder
    if len(call.arguments_text) <= MAX_ARGUMENTS_IN_PLACEHOLDER:
        return f"{placeholder} Call {call.name} with {call.arguments_text or '{}'} again to see it."
    return f"{placeholder} Repeat call {call.id} ({call.name}) to see it."


def mask_boundary(
    messages: Sequence[Message],
    *,
    protected_turns: int = 3,
    protected_rounds: int | None = None,
    protected_tokens: int | None = None,
) -> int:
    """The index before which tool results are masked (0: none).

    The turn rule: results before the start of the last ``protected_turns`` user messages (fewer user messages:
    none by this rule). Inside a turn, ``protected_rounds`` keeps the newest tool rounds (tool messages) and
    ``protected_tokens`` the newest results within that many tokens; results older than either are masked too.
    The boundary only moves forward as a conversation grows, and each scan stops at its boundary.
    """
    boundary = 0
    if protected_turns > 0:
        seen = 0
        for index in range(len(messages) - 1, -1, -1):
            if messages[index].role == "user":
                seen += 1
                if seen == protected_turns:
                    boundary = index
                    break
    if protected_rounds is not None:
        seen = 0
        for index in range(len(messages) - 1, boundary - 1, -1):
            if messages[index].role == "tool":
                if seen == protected_rounds:
                    boundary = max(boundary, index + 1)
                    break
                seen += 1
    if protected_tokens is not None:
        spent = 0
        for index in range(len(messages) - 1, boundary - 1, -1):
            message = messages[index]
            if message.role == "tool":
                spent += sum(chars_to_tokens(len(r.content)) for r in message.tool_results)
                if spent > protected_tokens:
                    boundary = max(boundary, index + 1)
                    break
    return boundary


def mask_message(message: Message, calls: dict[str, ToolCallPart], min_length: int = 200) -> Message:
    """``message`` with each tool result of at least ``min_length`` characters replaced by its placeholder
    (the same object when nothing changes). ``calls``: the conversation's calls by id."""
    if message.role != "tool":
        return message
    parts = list(message.parts)
    changed = False
    for index, part in enumerate(parts):
        if isinstance(part, ToolResultPart) and len(part.content) >= min_length:
            call = calls.get(part.call_id)
            name = call.name if call is not None else (part.name or "tool")
            # An old result's images go with its text: the placeholder says how to get both again.
            parts[index] = ToolResultPart(
                part.call_id,
                part.name,
                masked_placeholder(part.content, name, call),
                is_error=part.is_error,
                refusal=part.refusal,
                error=part.error,
            )
            changed = True
    return Message(message.role, parts) if changed else message


def mask_observations(
    messages: Sequence[Message],
    *,
    protected_turns: int = 3,
    min_length: int = 200,
    protected_rounds: int | None = None,
    protected_tokens: int | None = None,
) -> list[Message]:
    """``messages`` with the tool results before :func:`mask_boundary` masked (a new list; the input is not
    modified)."""
    boundary = mask_boundary(
        messages,
        protected_turns=protected_turns,
        protected_rounds=protected_rounds,
        protected_tokens=protected_tokens,
    )
    calls = {c.id: c for m in messages[:boundary] if m.role == "assistant" for c in m.tool_calls}
    return [mask_message(m, calls, min_length) for m in messages[:boundary]] + list(messages[boundary:])
