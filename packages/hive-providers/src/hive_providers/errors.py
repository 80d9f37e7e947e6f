"""Turning provider failures into :class:`~hive_core.ChatError` with the protocol's error codes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from email.utils import parsedate_to_datetime

from hive_core import ChatError
from hive_core.failures import is_context_overflow
from hive_protocol import ErrorCode

__all__ = ["chat_error_for_status", "code_for_status", "is_context_overflow", "retry_after_seconds"]

_BILLING = re.compile(r"insufficient[_ ]quota|billing|credit balance|payment|quota exceeded", re.IGNORECASE)


def code_for_status(status: int, message: str = "") -> ErrorCode:
    """The protocol error code for an HTTP failure, using the body text where the status is ambiguous."""
    if is_context_overflow(message) and status in (400, 413, 422):
        return "context_limit"
    if status == 402 or (status in (400, 403, 429) and _BILLING.search(message)):
        return "billing"
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status in (408, 504):
        return "timeout"
    if status in (400, 404, 405, 409, 413, 422):
        return "request_rejected"
    if status >= 500:
        return "internal"
    return "unknown"


def retry_after_seconds(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds the provider asked to wait, from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if (ms := lowered.get("retry-after-ms")) is not None:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def chat_error_for_status(
    provider: str, status: int, message: str, headers: Mapping[str, str] | None = None
) -> ChatError:
    """A :class:`ChatError` for an HTTP failure, naming the provider and keeping the retry-after hint."""
    code = code_for_status(status, message)
    text = f"{provider}: HTTP {status}: {message.strip() or 'no details given'}"
    return ChatError(text, code=code, retry_after=retry_after_seconds(headers or {}))
