"""Reading tool calls out of a local model's streamed text: the ``<tool_call>`` scheme.

A call is written as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``. :class:`ToolCallParser`
reads the streamed text: text outside the tags streams as text (a possible start of a tag is held back until it
is decided), each closed tag becomes one complete tool call. A reply that is nothing but such a JSON object
naming an offered tool (bare or in a ```json fence) also counts as a call, since small models often drop the
tags.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

import msgspec

from hive_core import ChatUpdate
from hive_core import TextUpdate
from hive_core import ToolCallUpdate

__all__ = ["TOOL_CALL_CLOSE", "TOOL_CALL_OPEN", "TOOL_RESPONSE_OPEN", "ToolCallParser"]

TOOL_CALL_OPEN: Final = "<tool_call>"
"""Opens a call."""
TOOL_CALL_CLOSE: Final = "</tool_call>"
"""Closes a call."""
TOOL_RESPONSE_OPEN: Final = "<tool_response>"
"""Opens a tool's result; a stop sequence, so that a model cannot invent its own results."""
_JSON_FENCE: Final = "```json"


class _ParsedCall(msgspec.Struct, frozen=True):
    name: str
    arguments: str


_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')
_ARGUMENTS = re.compile(r'"(?:arguments|parameters)"\s*:\s*')
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def _parse_call(body: str, known: Collection[str] | None) -> _ParsedCall | None:
    """A call from the JSON text of one block; ``known`` restricts the names (for untagged replies)."""
    text = _FENCE.sub("", body.strip())
    try:
        value: object = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):  # too deep to read: kept raw, the loop refuses it
        value = None
    if isinstance(value, dict):
        obj: dict[str, object] = value  # pyright: ignore[reportUnknownVariableType]
        name = obj.get("name")
        if isinstance(name, str) and name and (known is None or name in known):
            if "arguments" in obj:
                arguments = obj["arguments"]
            elif "parameters" in obj:
                arguments = obj["parameters"]
            elif known is not None:
                return None
            else:
                arguments = {}
            if isinstance(arguments, str):
                return _ParsedCall(name, arguments)
            return _ParsedCall(name, msgspec.json.encode(arguments).decode())
        return None
    if known is not None:
        return None
    # Broken JSON: keep the call with its raw arguments so the pipeline tells the model what is wrong.
    found = _NAME.search(text)
    if found is None:
        return None
    start = _ARGUMENTS.search(text, found.end()) or _ARGUMENTS.search(text)
    raw = text[start.end() :].strip() if start else ""
    if raw.endswith("}") and raw.count("}") > raw.count("{"):
        raw = raw[:-1].rstrip()
    return _ParsedCall(found.group(1), raw)


class ToolCallParser:
    """Splits streamed model text into text and ``<tool_call>`` blocks (see the module's documentation).

    :meth:`feed` takes each piece of text and returns the updates it completes; :meth:`finish` flushes what is
    held back at the end of the response.
    """

    def __init__(self, tool_names: Collection[str] = (), *, inside_call: bool = False) -> None:
        self._known = frozenset(tool_names)
        self._buffer = ""
        self._in_call = inside_call
        self._bare = False
        self._started = inside_call
        self._after_call = False
        self.calls = 0
        """Tool calls produced so far."""

    def feed(self, text: str) -> list[ChatUpdate]:
        """The updates completed by one more piece of text."""
        self._buffer += text
        out: list[ChatUpdate] = []
        while self._buffer:
            if self._in_call:
                end = self._buffer.find(TOOL_CALL_CLOSE)
                if end < 0:
                    break
                self._emit_call(self._buffer[:end], out)
                self._buffer = self._buffer[end + len(TOOL_CALL_CLOSE) :]
                self._in_call = False
                continue
            if self._bare:
                break
            if self._after_call:
                self._buffer = self._buffer.lstrip()
                if not self._buffer:
                    break
            if not self._started and self._known:
                head = self._buffer.lstrip()
                if head.startswith(("{", _JSON_FENCE)):
                    self._bare = True
                    break
                if _JSON_FENCE.startswith(head):
                    break  # blank, or maybe the start of a fence: wait for more
            start = self._buffer.find(TOOL_CALL_OPEN)
            if start >= 0:
                self._text(self._buffer[:start], out)
                self._buffer = self._buffer[start + len(TOOL_CALL_OPEN) :]
                self._in_call = True
                self._started = True
                continue
            keep = _partial_tag(self._buffer)
            self._text(self._buffer[: len(self._buffer) - keep], out)
            self._buffer = self._buffer[len(self._buffer) - keep :]
            break
        return out

    def finish(self) -> list[ChatUpdate]:
        """The updates held back at the end of the response."""
        out: list[ChatUpdate] = []
        rest, self._buffer = self._buffer, ""
        if self._in_call:
            self._in_call = False
            parsed = _parse_call(rest, None)
            if parsed is None:
                self._text(TOOL_CALL_OPEN + rest, out)
            else:
                self._call(parsed, out)
        elif self._bare:
            self._bare = False
            parsed = _parse_call(rest, self._known)
            if parsed is None:
                self._text(rest, out)
            else:
                self._call(parsed, out)
        elif not (self._after_call and not rest.strip()):
            self._text(rest, out)
        return out

    def _text(self, text: str, out: list[ChatUpdate]) -> None:
        if text:
            self._started = True
            self._after_call = False
            out.append(TextUpdate(text))

    def _emit_call(self, body: str, out: list[ChatUpdate]) -> None:
        parsed = _parse_call(body, None)
        if parsed is None:
            self._text(TOOL_CALL_OPEN + body + TOOL_CALL_CLOSE, out)
        else:
            self._call(parsed, out)

    def _call(self, parsed: _ParsedCall, out: list[ChatUpdate]) -> None:
        # No id: the loop numbers calls so that ids stay unique across the conversation.
        out.append(ToolCallUpdate(self.calls, name=parsed.name, arguments=parsed.arguments))
        self.calls += 1
        self._after_call = True


def _partial_tag(text: str) -> int:
    """How many characters at the end of ``text`` could start ``<tool_call>``."""
    start = text.rfind("<", max(0, len(text) - len(TOOL_CALL_OPEN) + 1))
    if start >= 0 and TOOL_CALL_OPEN.startswith(text[start:]):
        return len(text) - start
    return 0
