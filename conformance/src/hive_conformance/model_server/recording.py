"""What the scripted model server keeps of each request it received."""

from __future__ import annotations

from typing import Any
from typing import Literal

import msgspec

__all__ = ["Endpoint", "RecordedRequest"]

Endpoint = Literal[
    "openai_chat",
    "openai_responses",
    "anthropic_messages",
    "gemini",
    "models",
    "count_tokens",
    "unknown",
]
"""Which route a request took: one of the four model APIs, the model list, a token count, or none."""


class RecordedRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One request as the server received it, kept in arrival order."""

    index: int
    """The request's position among all requests the server received (0-based)."""
    method: str
    """The HTTP method."""
    path: str
    """The request path, without the query string."""
    query: dict[str, str]
    """The query parameters (the last value wins when a name repeats)."""
    headers: dict[str, str]
    """The request headers, names in lower case (repeated headers joined with ``", "``)."""
    body: Any
    """The body parsed as JSON; ``None`` when it was empty or not JSON."""
    raw_body: bytes
    """The body's bytes as sent."""
    endpoint: Endpoint
    """The route the request took."""
    stream: bool
    """Whether the client asked for a streamed reply."""
    round: int | None
    """The index of the script round that answered it; ``None`` when no round did (script exhausted, or a
    route that consumes none)."""
