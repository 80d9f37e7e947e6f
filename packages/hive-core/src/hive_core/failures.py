"""Failures and how they map onto the protocol's error codes."""

from __future__ import annotations

import re
from typing import Final

from hive_protocol import ErrorCode
from hive_protocol import FallbackCategory

from .errors import HiveError
from .redaction import mask_urls

__all__ = ["ChatError", "classify", "context_overflowed", "fallback_category", "is_context_overflow"]

_CONTEXT_OVERFLOW: Final = re.compile(
    r"context[_ ]length|context window|context size|maximum context|too many tokens|prompt is too long|"
    r"input is too long|exceeds the (?:maximum|available|context)|token limit|reduce the length",
    re.IGNORECASE,
)


class ChatError(HiveError):
    """A model request failed. Providers raise it (or a subclass) with the protocol's error code.

    Not a :class:`~hive_core.errors.UserError`: the loop reports it on the wire as an ``error`` event with
    its code, and a host shows that event.
    """

    def __init__(
        self, message: str, *, code: ErrorCode = "unknown", retry_after: float | None = None
    ) -> None:
        # Masked here, once for every provider: a message may quote an endpoint, credentials and all.
        super().__init__(mask_urls(message))
        self.code: ErrorCode = code
        """The protocol's code for this failure."""
        self.retry_after = retry_after
        """Seconds the provider asked to wait before trying again."""


def classify(exc: BaseException) -> ErrorCode:
    """The protocol error code for any failure of a turn."""
    if isinstance(exc, ChatError):
        return exc.code
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, ConnectionError):
        return "network"
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)):
        return "file_system"
    if isinstance(exc, ValueError):
        return "request_rejected"
    return "internal"


def fallback_category(code: ErrorCode) -> FallbackCategory:
    """How a failure of a given code is treated by retry and fallback."""
    if code == "rate_limit":
        return "rate_limit"
    if code in ("auth", "billing"):
        return "auth"
    if code in ("network", "timeout", "internal", "unknown"):
        return "transient"
    return "fatal"


def is_context_overflow(message: str) -> bool:
    """Whether an error text says the request did not fit the model's context window (OpenAI's "maximum context
    length", Anthropic's "prompt is too long", llama.cpp's "exceeds the available context size"...)."""
    return bool(_CONTEXT_OVERFLOW.search(message))


def context_overflowed(exc: BaseException) -> bool:
    """Whether a failed model request failed because it did not fit the window: a :class:`ChatError` with code
    ``context_limit``, or one a provider reported as merely rejected whose text says so."""
    if not isinstance(exc, ChatError):
        return False
    if exc.code == "context_limit":
        return True
    return exc.code in ("request_rejected", "unknown", "internal") and is_context_overflow(str(exc))
