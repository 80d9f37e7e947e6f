"""The scripted model's rounds: what a fake model answers, one round per request, as plain JSON data.

A script is a list of rounds, stored one JSON object per line (JSONL). Each round is one model response: parts
(text, thinking, tool calls) streamed in chunks, usage, a finish reason, or a failure. The scripted model server
(:mod:`hive_conformance.model_server`) replays the rounds in order over each model API's own wire format, so
the same script drives an OpenAI, an Anthropic or a Gemini client.

A *chunk* is one element of a part's ``chunks`` (or a tool call's ``arguments``). Chunk counts are the same in
every API, which is what ``after_chunks`` and ``chunk_delay`` count.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated
from typing import Any
from typing import Literal

import msgspec

__all__ = [
    "SCRIPT_FINISH_REASONS",
    "ContextLengthFailure",
    "DropConnectionFailure",
    "Failure",
    "HttpFailure",
    "MalformedStreamFailure",
    "Round",
    "ScriptFinishReason",
    "ScriptPart",
    "ScriptText",
    "ScriptThinking",
    "ScriptToolCall",
    "Usage",
    "decode_script",
    "encode_script",
    "load_script",
]

ScriptFinishReason = Literal["stop", "length", "tool_calls", "content_filter"]
"""Why the model stopped, in API-neutral spelling; each API maps it to its own (``end_turn``, ``MAX_TOKENS``…)."""

_Count = Annotated[int, msgspec.Meta(ge=0)]
_Seconds = Annotated[float, msgspec.Meta(ge=0)]
_Status = Annotated[int, msgspec.Meta(ge=100, le=599)]

SCRIPT_FINISH_REASONS: tuple[ScriptFinishReason, ...] = ("stop", "length", "tool_calls", "content_filter")
"""Every finish reason, in a stable order."""


class _Data(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """Base of the script's structs: immutable, strict when read, with defaults left out when written."""


class ScriptText(_Data, frozen=True, tag_field="type", tag="text"):
    """Reply text, streamed chunk by chunk."""

    chunks: list[str]
    """The text pieces, in stream order; each is one delta on the wire."""


class ScriptThinking(_Data, frozen=True, tag_field="type", tag="thinking"):
    """The model's reasoning, streamed chunk by chunk before or between other parts."""

    chunks: list[str]
    """The reasoning pieces, in stream order (OpenAI chat ``reasoning_content``, Anthropic ``thinking_delta``,
    Responses reasoning summary text, Gemini ``thought: true`` parts)."""
    signature: str | None = None
    """The provider-opaque signature a client must send back: Anthropic ``signature_delta``, Responses
    ``encrypted_content``, Gemini ``thoughtSignature`` on the last thought part. Chat Completions drops it."""


class ScriptToolCall(_Data, frozen=True, tag_field="type", tag="tool_call"):
    """A call of one of the client's tools; several in one round are parallel calls."""

    id: str
    """The call's id (OpenAI ``tool_calls[].id``, Responses ``call_id``, Anthropic ``tool_use.id``). Gemini
    has no call ids on the wire, so it is not sent there."""
    name: str
    """The tool's name."""
    arguments: list[str] = []
    """The arguments' JSON text split into chunks, streamed as argument deltas where the API streams them
    (Gemini sends the joined text at once, as one ``functionCall``). The joined text need not be valid JSON:
    that is how a malformed call is scripted. APIs that carry arguments as an object (Anthropic and Gemini
    whole bodies, Gemini streams) send text that is not a JSON object as a bare string."""
    signature: str | None = None
    """Gemini only: the ``thoughtSignature`` on this call's ``functionCall`` part."""


ScriptPart = ScriptText | ScriptThinking | ScriptToolCall
"""One piece of a round's output, tagged by ``type``."""


class Usage(_Data, frozen=True):
    """Token counts the model reports for the round."""

    input_tokens: _Count
    """Prompt tokens, cached ones included (OpenAI ``prompt_tokens``, Gemini ``promptTokenCount``). Anthropic
    reports the uncached rest as ``input_tokens`` and the cached ones as ``cache_read_input_tokens``."""
    output_tokens: _Count
    """Generated tokens, reasoning included."""
    cached_input_tokens: _Count = 0
    """How many of ``input_tokens`` were read from the provider's prompt cache."""


class HttpFailure(_Data, frozen=True, tag_field="kind", tag="http_error"):
    """Answer the request with an HTTP error instead of a response (a 429, a 500, a 401…)."""

    status: _Status
    """The HTTP status code."""
    message: str | None = None
    """The error's message inside the API's own error body; a stock message for the status when unset."""
    body: Any = None
    """A body sent instead of the API's own error shape: a string as plain text, any other value as JSON."""
    retry_after: _Seconds | None = None
    """Seconds sent in a ``retry-after`` header (whole numbers written without a fraction)."""
    headers: dict[str, str] = {}
    """More response headers, e.g. ``retry-after-ms`` or ``x-should-retry``."""


class ContextLengthFailure(_Data, frozen=True, tag_field="kind", tag="context_length"):
    """Reject the request as too long for the model's context window, in each API's own error shape."""

    message: str | None = None
    """The error's message; the API's usual wording (which clients match on) when unset."""


class MalformedStreamFailure(_Data, frozen=True, tag_field="kind", tag="malformed_stream"):
    """Send an event whose data is not valid JSON, then end the response cleanly."""

    after_chunks: _Count = 0
    """How many chunks are sent before the bad event (the stream's opening events are always sent). A
    non-streaming request gets a truncated JSON body instead."""


class DropConnectionFailure(_Data, frozen=True, tag_field="kind", tag="drop_connection"):
    """Close the socket in the middle of the response, without ending the HTTP message."""

    after_chunks: _Count = 0
    """How many chunks are sent before the connection drops (the stream's opening events are always sent). A
    non-streaming request gets its headers and the first half of its body."""


Failure = HttpFailure | ContextLengthFailure | MalformedStreamFailure | DropConnectionFailure
"""How a round fails instead of completing, tagged by ``kind``."""


class Round(_Data, frozen=True):
    """One model response: the answer to one request, whichever API it came through."""

    parts: list[ScriptPart] = []
    """The output, in order. Parts of a failed round are sent up to the failure point."""
    usage: Usage | None = None
    """Token counts; unset sends zeros where the API always reports usage and nothing where it may not."""
    finish_reason: ScriptFinishReason | None = None
    """Why the model stopped; unset means ``tool_calls`` when the round calls a tool and ``stop`` otherwise."""
    failure: Failure | None = None
    """Set to make the round fail instead of completing."""
    chunk_delay: _Seconds = 0.0
    """Seconds to wait before sending each chunk (for cancellation tests); a whole body waits for all of them."""
    stall_after_chunks: _Count | None = None
    """After this many chunks (the stream's opening events are always sent) the response sends nothing more
    and stays open until the client goes away or the server closes; for cancellation tests. It takes effect
    before a failure's ``after_chunks`` at the same point or later, and is ignored by failures that answer
    with an HTTP error. A non-streaming request waits the same way before sending anything: it gets no
    answer at all."""

    @property
    def effective_finish_reason(self) -> ScriptFinishReason:
        """The finish reason sent: the scripted one, else derived from the parts."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if any(isinstance(part, ScriptToolCall) for part in self.parts) else "stop"

    @property
    def chunk_count(self) -> int:
        """How many chunks the round's parts hold."""
        return sum(
            len(part.arguments if isinstance(part, ScriptToolCall) else part.chunks) for part in self.parts
        )


_decoder = msgspec.json.Decoder(Round)
_encoder = msgspec.json.Encoder(order="deterministic")


def decode_script(data: bytes | str) -> list[Round]:
    """Read a script from JSONL text: one round per line; blank lines are skipped.

    Raises ``ValueError`` naming the line when a line is not a valid round.
    """
    text = data.decode() if isinstance(data, bytes) else data
    rounds: list[Round] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rounds.append(_decoder.decode(line))
        except msgspec.DecodeError as error:
            raise ValueError(f"script line {number}: {error}") from error
    return rounds


def load_script(path: str | Path) -> list[Round]:
    """Read a script from a JSONL file."""
    return decode_script(Path(path).read_bytes())


def encode_script(rounds: Iterable[Round]) -> bytes:
    """Write rounds as JSONL, one round per line, each line ending in ``\\n``."""
    return b"".join(_encoder.encode(round_) + b"\n" for round_ in rounds)
