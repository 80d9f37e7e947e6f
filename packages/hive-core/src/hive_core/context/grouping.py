"""Pair-safe groups: an assistant message with tool calls and the tool messages answering them move together."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from hive_core.messages import Message
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart

__all__ = ["Group", "drop_unpaired", "group_messages"]


class Group(msgspec.Struct, frozen=True):
    """Consecutive messages that are kept or pruned as one: ``messages[start:end]``."""

    start: int
    """The first message's index."""
    end: int
    """One past the last message's index."""
    kind: str
    """``system``, ``user``, ``assistant`` (no calls), ``tools`` (calls and results) or ``orphan`` (results
    answering no call here)."""
    tool_names: frozenset[str] = frozenset()
    """For ``tools``: the names of the tools called, case-folded."""

    @property
    def size(self) -> int:
        """How many messages the group holds."""
        return self.end - self.start


def group_messages(messages: Sequence[Message], start: int = 0) -> list[Group]:
    """``messages[start:]`` as consecutive groups, in order, covering every message exactly once."""
    groups: list[Group] = []
    index, count = start, len(messages)
    while index < count:
        message = messages[index]
        calls = message.tool_calls if message.role == "assistant" else []
        if calls:
            ids = {c.id for c in calls}
            end = index + 1
            while end < count and messages[end].role == "tool" and _answers(messages[end], ids):
                end += 1
            groups.append(Group(index, end, "tools", frozenset(c.name.casefold() for c in calls)))
            index = end
            continue
        kind = "orphan" if message.role == "tool" else message.role
        groups.append(Group(index, index + 1, kind))
        index += 1
    return groups


def _answers(message: Message, ids: set[str]) -> bool:
    results = message.tool_results
    return bool(results) and all(r.call_id in ids for r in results)


def drop_unpaired(messages: Sequence[Message]) -> list[Message]:
    """``messages`` without tool content that lost its partner: results answering no earlier call, and calls
    with no result (except in the last message, whose results have not come yet). A message left empty goes."""
    called = {c.id for m in messages if m.role == "assistant" for c in m.tool_calls}
    answered = {r.call_id for m in messages if m.role == "tool" for r in m.tool_results}
    out: list[Message] = []
    last = len(messages) - 1
    for index, message in enumerate(messages):
        keep = [
            p
            for p in message.parts
            if not (isinstance(p, ToolResultPart) and p.call_id not in called)
            and not (isinstance(p, ToolCallPart) and p.id not in answered and index != last)
        ]
        if len(keep) == len(message.parts):
            out.append(message)
        elif keep:
            out.append(Message(message.role, keep))
    return out
