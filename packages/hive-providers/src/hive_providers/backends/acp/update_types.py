"""ACP's ``session/update`` notifications and ``session/prompt`` result, as hive reads them: frozen structs.

:func:`decode_update` decodes one ``params.update`` by its ``sessionUpdate`` tag; a kind hive shows nothing of
(``user_message_chunk``, ``available_commands_update``...) or one a newer ACP adds is an
:class:`~..kit.wire.Unknown`.
:func:`decode_result` decodes a prompt result, with the non-standard places agents put their text and usage.
Decoding is tolerant (:mod:`hive_providers.backends.kit.wire`, salvaging): a field of the wrong type reads as
absent.
These are hive's own structs, not the ``acp`` library's pydantic models: reading an update loads no ``acp``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import Final
from typing import TypeAlias
from typing import cast

import msgspec

from hive_providers.backends.kit.wire import Unknown
from hive_providers.backends.kit.wire import WireStruct
from hive_providers.backends.kit.wire import WireUnion
from hive_providers.backends.kit.wire import decode

__all__ = [
    "ChunkContent",
    "ContentBlock",
    "MessageChunk",
    "Plan",
    "PlanEntry",
    "PromptResult",
    "ResultMeta",
    "SessionUpdate",
    "ThoughtChunk",
    "ToolCallReport",
    "UsageFigures",
    "UsageUpdate",
    "chunk_text",
    "count",
    "decode_result",
    "decode_update",
]


class ContentBlock(WireStruct, frozen=True):
    """An ACP content block; only a ``text`` block has text hive shows."""

    type: str = "text"
    """The block's kind: ``text``, ``image``, ``resource``..."""
    text: str | None = None
    """A text block's text."""


ChunkContent = str | list[str | ContentBlock] | ContentBlock | None
"""A chunk's ``content``: one block (the standard), or, from some agents, plain text or a list of blocks."""


class MessageChunk(WireStruct, frozen=True, tag_field="sessionUpdate", tag="agent_message_chunk"):
    """A piece of the agent's reply."""

    content: ChunkContent = None
    """The piece."""


class ThoughtChunk(WireStruct, frozen=True, tag_field="sessionUpdate", tag="agent_thought_chunk"):
    """A piece of the agent's reasoning."""

    content: ChunkContent = None
    """The piece."""


class PlanEntry(WireStruct, frozen=True):
    """One step of a plan."""

    content: str | None = None
    """What the step does."""
    status: str | None = None
    """``pending``, ``in_progress`` or ``completed``."""


class Plan(WireStruct, frozen=True, tag_field="sessionUpdate", tag="plan"):
    """The agent's whole plan, as it stands now."""

    entries: list[PlanEntry] = msgspec.field(default_factory=list[PlanEntry])
    """Its steps, in order."""


class UsageUpdate(WireStruct, frozen=True, tag_field="sessionUpdate", tag="usage_update"):
    """The context window's use (``unstable``: not every agent sends it)."""

    used: int | float | None = None
    """Tokens in the context now."""
    size: int | float | None = None
    """The context window."""


class ToolCallReport(WireStruct, frozen=True):
    """A ``tool_call`` or ``tool_call_update``, kept whole: the kit's tool-call tracker is its one reader."""

    fields: Mapping[str, Any]
    """The update as it came."""


_Shown: TypeAlias = MessageChunk | ThoughtChunk | Plan | UsageUpdate

SessionUpdate = _Shown | ToolCallReport | Unknown
"""One ``session/update``'s ``update``, decoded: an :class:`~..kit.wire.Unknown` is one hive shows nothing of (a
replay of the prompt, the commands, the mode, the session's title...), or a kind a later ACP adds."""

_UPDATES: Final = WireUnion[_Shown].of("sessionUpdate", _Shown, salvage=True)
_TOOL_CALLS: Final = frozenset({"tool_call", "tool_call_update"})


def decode_update(update: object) -> SessionUpdate:
    """Decode one raw ``params.update`` (anything that is not a JSON object is an :class:`~..kit.wire.Unknown`)."""
    decoded = _UPDATES.decode(update)
    if type(decoded) is Unknown and decoded.kind in _TOOL_CALLS:
        return ToolCallReport(fields=cast("Mapping[str, Any]", decoded.raw))
    return decoded


class UsageFigures(WireStruct, frozen=True):
    """A non-standard ``usage`` object, in any of the spellings agents use."""

    input_tokens: int | float | None = msgspec.field(default=None, name="inputTokens")
    input_tokens_snake: int | float | None = msgspec.field(default=None, name="input_tokens")
    prompt_tokens: int | float | None = msgspec.field(default=None, name="promptTokens")
    prompt_tokens_snake: int | float | None = msgspec.field(default=None, name="prompt_tokens")
    output_tokens: int | float | None = msgspec.field(default=None, name="outputTokens")
    output_tokens_snake: int | float | None = msgspec.field(default=None, name="output_tokens")
    completion_tokens: int | float | None = msgspec.field(default=None, name="completionTokens")
    completion_tokens_snake: int | float | None = msgspec.field(default=None, name="completion_tokens")
    cached_read_tokens: int | float | None = msgspec.field(default=None, name="cachedReadTokens")
    cached_read_tokens_snake: int | float | None = msgspec.field(default=None, name="cached_read_tokens")
    cached_input_tokens: int | float | None = msgspec.field(default=None, name="cachedInputTokens")
    cached_input_tokens_snake: int | float | None = msgspec.field(default=None, name="cached_input_tokens")

    @property
    def input(self) -> int | None:
        """The input tokens, under the first spelling that holds a count."""
        return _first(
            self.input_tokens, self.input_tokens_snake, self.prompt_tokens, self.prompt_tokens_snake
        )

    @property
    def output(self) -> int | None:
        """The output tokens, likewise."""
        return _first(
            self.output_tokens, self.output_tokens_snake, self.completion_tokens, self.completion_tokens_snake
        )

    @property
    def cached(self) -> int | None:
        """The input tokens served from the cache, likewise."""
        return _first(
            self.cached_read_tokens,
            self.cached_read_tokens_snake,
            self.cached_input_tokens,
            self.cached_input_tokens_snake,
        )


class _Quota(WireStruct, frozen=True):
    token_count: UsageFigures | None = None
    """Gemini's usage."""


class ResultMeta(WireStruct, frozen=True):
    """A prompt result's ``_meta``: where some agents put their answer and usage."""

    text: ChunkContent = None
    content: ChunkContent = None
    message: ChunkContent = None
    result: ChunkContent = None
    output: ChunkContent = None
    usage: UsageFigures | None = None
    quota: _Quota | None = None


class PromptResult(ResultMeta, frozen=True):
    """A ``session/prompt`` result: the stop reason, and what some agents answer beside it."""

    stop_reason: str | None = msgspec.field(default=None, name="stopReason")
    """Why the turn ended (``end_turn``, ``cancelled``...)."""
    meta: ResultMeta | None = msgspec.field(default=None, name="_meta")
    """Non-standard extras."""


def decode_result(result: object) -> PromptResult:
    """Decode a raw ``session/prompt`` result."""
    return decode(result, PromptResult)


def chunk_text(content: ChunkContent) -> str | None:
    """The text of a content block, of a list of them, or of plain text (``None``: no text)."""
    if isinstance(content, str):
        return content or None
    if isinstance(content, list):
        joined = "".join(chunk_text(item) or "" for item in content)
        return joined or None
    if isinstance(content, ContentBlock) and content.type == "text":
        return content.text or None
    return None


def count(value: int | float | None) -> int | None:
    """A token count: a non-negative integer (a float with no fraction passes), else ``None``."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and value >= 0 else None
    return value if value is not None and value >= 0 else None


def _first(*values: int | float | None) -> int | None:
    for value in values:
        found = count(value)
        if found is not None:
            return found
    return None
