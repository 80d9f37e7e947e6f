"""What the OpenAI adapters share: the lazily built SDK client, error mapping and the raw event reader.

The SDK owns configuration, authentication, retries and HTTP error types; the adapters ask it for the raw
streaming :class:`httpx2.Response` and decode the events themselves with msgspec, because building the SDK's
pydantic objects for every chunk costs several times more than the chunk's own parsing.

``openai`` is imported on first use (first request or model listing), never when this module is imported.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import Unpack
from typing import cast

import anyio
import httpx2
import msgspec

from hive_core import ChatError
from hive_core.redaction import mask_url

from ._client import Connection
from ._client import RemoteChatClient
from ._client import sdk_http_client
from ._client import transport_error
from .errors import chat_error_for_status
from .errors import code_for_status
from .errors import is_context_overflow

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "OPENAI_EFFORTS",
    "OpenAIClientBase",
    "OpenAIConnection",
    "SdkFactory",
    "error_from_payload",
    "iter_payloads",
    "sdk_error",
    "unreadable",
]

SdkFactory = Callable[[httpx2.Timeout, int], "AsyncOpenAI"]
"""Builds the SDK client on first use, given the timeout and the retry budget: an ``AsyncOpenAI`` or one of its
subclasses, such as Azure's."""

OPENAI_EFFORTS: Final[Mapping[str, str | None]] = {
    "none": "none",
    "low": "low",
    "medium": "medium",
    "high": "high",
    # The last value of the SDK's ``ReasoningEffort`` literal is the API's highest.
    "extra_high": "max",
}
"""hive's reasoning efforts as OpenAI spells them; ``None`` means the parameter is left out."""


def _error_fields(body: object) -> tuple[str, str | None]:
    """The message and code inside an OpenAI-style error body (``{"error": {...}}`` or the object itself)."""
    if isinstance(body, str):
        return body, None
    if not isinstance(body, dict):
        return "", None
    fields = cast("dict[str, Any]", body)
    inner = fields.get("error", fields)
    if isinstance(inner, str):
        return inner, None
    if not isinstance(inner, dict):
        return "", None
    error = cast("dict[str, Any]", inner)
    message = error.get("message")
    code = error.get("code") or error.get("type")
    return (message if isinstance(message, str) else ""), (str(code) if code is not None else None)


def sdk_error(provider: str, exc: Exception) -> ChatError:
    """A :class:`ChatError` for an exception raised by the ``openai`` SDK or by httpx2 under it."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        message, code = _error_fields(exc.body)
        if code and code not in message:
            # The code often says more than the message ("context_length_exceeded", "insufficient_quota").
            message = f"{message} ({code})" if message else code
        return chat_error_for_status(provider, exc.status_code, message, exc.response.headers)
    if isinstance(exc, openai.APITimeoutError):
        return ChatError(f"{provider}: the request timed out", code="timeout")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        where = f" at {mask_url(str(exc.request.url))}"
        return ChatError(f"{provider}: could not reach the server{where}{detail}", code="network")
    if isinstance(exc, httpx2.TransportError):
        return transport_error(provider, exc, None)
    text = str(exc)
    code = "auth" if "credential" in text.lower() or "api_key" in text.lower() else "unknown"
    return ChatError(f"{provider}: {text}", code=code)


def unreadable(provider: str, exc: msgspec.DecodeError | RecursionError) -> ChatError:
    """The :class:`ChatError` for an event of the stream that is not JSON (or not the JSON expected, or nested
    too deep to be read)."""
    return ChatError(f"{provider}: the stream sent an unreadable event ({exc})", code="network")


def error_from_payload(provider: str, message: str, code: str | None, status: int | None = None) -> ChatError:
    """A :class:`ChatError` for an error reported inside a stream (an ``error`` event or a failed response)."""
    text = f"{message} ({code})" if code and code not in message else message
    if status is not None:
        return chat_error_for_status(provider, status, text)
    lowered = (code or "").lower()
    if "context_length" in lowered or is_context_overflow(text):
        error_code = "context_limit"
    elif "insufficient_quota" in lowered or "billing" in lowered:
        error_code = "billing"
    elif "rate_limit" in lowered:
        error_code = "rate_limit"
    elif "auth" in lowered or "api_key" in lowered or "permission" in lowered:
        error_code = "auth"
    elif lowered.startswith("invalid") or lowered in ("bad_request", "not_found"):
        error_code = code_for_status(400, text)
    else:
        error_code = "internal"
    return ChatError(f"{provider}: {text.strip() or 'the stream reported an error'}", code=error_code)


def _block_data(block: bytes) -> bytes | None:
    """The ``data`` of one SSE event block (its lines without the blank line), or ``None`` when it has none."""
    if block.startswith(b"data: "):
        if b"\n" not in block:
            return block[6:]
    else:
        at = block.find(b"\ndata: ")
        if at >= 0 and block.find(b"\n", at + 1) < 0:
            return block[at + 7 :]
    data: list[bytes] = []
    for line in block.split(b"\n"):
        if line.startswith(b"data:"):
            data.append(line[6:] if line.startswith(b"data: ") else line[5:])
    return b"\n".join(data) if data else None


async def iter_payloads(response: httpx2.Response) -> AsyncIterator[list[bytes]]:
    """The ``data`` payloads of a server-sent event stream, as a list per network read.

    One list per read (not one value per event) keeps the per-event cost to plain loop iterations. Lines may
    end in ``\\n``, ``\\r\\n`` or ``\\r``; comments and events without data are skipped. A last event that the
    stream did not close with a blank line is still delivered.
    """
    pending = b""
    async for chunk in response.aiter_bytes():
        if pending:
            chunk = pending + chunk
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):
                pending = chunk  # a \r\n may be split across reads
                continue
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        blocks = chunk.split(b"\n\n")
        pending = blocks.pop()
        payloads: list[bytes] = []
        for block in blocks:
            data = _block_data(block)
            if data is not None:
                payloads.append(data)
        if payloads:
            yield payloads
    rest = pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n").strip(b"\n")
    if rest and (data := _block_data(rest)) is not None:
        yield [data]


class OpenAIConnection(Connection, total=False):
    """How an OpenAI adapter reaches its API: a :class:`~hive_providers._client.Connection` and more."""

    provider: str
    """The provider's name in errors (default ``openai``)."""
    efforts: Mapping[str, str | None]
    """hive's reasoning efforts as this API spells them (``None``: leave the parameter out); unknown efforts
    are passed on as given. Default :data:`OPENAI_EFFORTS`."""
    default_headers: Mapping[str, str] | None
    """Headers sent with every request."""
    sdk_factory: SdkFactory | None
    """Builds a preconfigured SDK client instead (Azure's)."""


class OpenAIClientBase(RemoteChatClient):
    """The part of the OpenAI adapters that is not about one API's wire format: the SDK client, built (and
    ``openai`` imported) on the first request, model listing, and the reasoning efforts."""

    def __init__(self, *, model: str, **connection: Unpack[OpenAIConnection]) -> None:
        super().__init__(provider=connection.get("provider", "openai"), model=model, connection=connection)
        self._efforts = dict(connection.get("efforts", OPENAI_EFFORTS))
        self._headers = dict(connection.get("default_headers") or {})
        self._factory = connection.get("sdk_factory")
        self._sdk: AsyncOpenAI | None = None

    def api_effort(self, requested: str | None) -> str | None:
        """The API's spelling of a requested reasoning effort (``None``: leave the parameter out)."""
        if requested is None:
            return None
        return self._efforts.get(requested, requested)

    def sdk(self) -> AsyncOpenAI:
        """The SDK client, built (and ``openai`` imported) on first use."""
        if self._sdk is None:
            try:
                if self._factory is not None:
                    self._sdk = self._factory(self.timeout, self.max_retries)
                else:
                    from openai import AsyncOpenAI
                    from openai import DefaultAsyncHttpxClient

                    self._sdk = AsyncOpenAI(
                        api_key=self.api_key,
                        base_url=self.base_url,
                        max_retries=self.max_retries,
                        timeout=self.timeout,
                        default_headers=self._headers or None,
                        http_client=sdk_http_client(DefaultAsyncHttpxClient),
                    )
            except Exception as exc:
                raise sdk_error(self.provider, exc) from exc
        return self._sdk

    @asynccontextmanager
    async def _payloads(self, path: str, body: dict[str, Any]) -> AsyncGenerator[AsyncIterator[list[bytes]]]:
        """POST ``body`` to ``path`` through the SDK and read the event stream's payloads (:func:`iter_payloads`);
        the response is closed when the block ends, however it ends.

        The SDK applies authentication, retries (honouring ``retry-after``) and turns an error status into its
        exception; that, and a connection that fails while the body is read, become a :class:`ChatError`.
        """
        import openai

        sdk = self.sdk()
        try:
            response = await sdk.post(path, cast_to=httpx2.Response, body=body, stream=True, stream_cls=None)
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            raise sdk_error(self.provider, exc) from exc
        try:
            yield iter_payloads(response)
        except (httpx2.HTTPError, httpx2.StreamError) as exc:
            raise transport_error(self.provider, exc, self.idle_timeout) from exc
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()

    async def list_models(self) -> list[str]:
        """The ids of the models the endpoint serves."""
        import openai

        sdk = self.sdk()
        try:
            return [model.id async for model in sdk.models.list()]
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            raise sdk_error(self.provider, exc) from exc

    async def aclose(self) -> None:
        """Close the SDK client and its connections (a later request opens new ones)."""
        sdk, self._sdk = self._sdk, None
        if sdk is not None:
            with anyio.CancelScope(shield=True):
                await sdk.close()
