"""What every remote adapter shares: how it is reached, its timeouts, what it can do (the model's window
included), and closing."""

from __future__ import annotations

import asyncio  # noqa: TID251 - a collected client is closed as the vendor SDKs close theirs (see sdk_http_client)
import functools
import logging
import ssl
from types import TracebackType
from typing import Final
from typing import Self
from typing import TypedDict

import httpx2

from hive_core import Capabilities
from hive_core import ChatError
from hive_core.chat import WindowSource
from hive_core.redaction import mask_url
from hive_core.redaction import mask_urls

from .catalog import catalog_window
from .registry import required_setting
from .server_windows import WindowProbe
from .settings import ProviderSettings

__all__ = [
    "Connection",
    "RemoteChatClient",
    "client_timeout",
    "keyed_connection",
    "sdk_http_client",
    "shared_ssl_context",
    "transport_error",
]

_CONNECT_TIMEOUT: Final = 10.0
_PROBE_TIMEOUT: Final = 5.0
_log: Final = logging.getLogger(__name__)


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The TLS settings every HTTP client of hive verifies servers with, built once per process: loading the
    trusted certificates costs about 50 ms of CPU per client (60 ms for each vendor SDK client built with its own,
    once per session opened)."""
    return httpx2.create_ssl_context()


def sdk_http_client(default: type[httpx2.AsyncClient]) -> httpx2.AsyncClient:
    """An HTTP client of its own for one vendor SDK client: ``default`` is the SDK's ``DefaultAsyncHttpxClient``
    (its timeouts, limits and redirects), over :func:`shared_ssl_context`. It is closed when collected unclosed,
    as the SDK's own client is: a session's SDK client is not always closed, and sockets must not leak."""
    return _closing_class(default)(verify=shared_ssl_context())


@functools.cache
def _closing_class(default: type[httpx2.AsyncClient]) -> type[httpx2.AsyncClient]:
    class ClosedWhenCollected(default):
        def __del__(self) -> None:
            if self.is_closed:
                return
            try:
                asyncio.get_running_loop().create_task(self.aclose())
            except Exception:
                return

    return ClosedWhenCollected


class Connection(TypedDict, total=False):
    """How a remote adapter reaches its API; every key may be left out."""

    api_key: str | None
    """The key (``None``: the SDK's own lookup, where it has one)."""
    base_url: str | None
    """The API's root (``None``: the provider's own)."""
    context_window: int | None
    """The model's context window in tokens, which wins over what the server and the catalog say (``None``:
    the server's, once probed, else the catalog's, else unknown)."""
    window_probe: WindowProbe | None
    """How the server is asked for the model's window (``None``: it is not asked)."""
    idle_timeout: float | None
    """Seconds a response may go without a byte before it fails with ``timeout`` (``None``: no limit; default
    120)."""
    max_retries: int
    """Retries of a 408, 409, 429 or 5xx answer and of a failed connection (default 2), honouring
    ``retry-after``."""


def keyed_connection(settings: ProviderSettings) -> Connection:
    """The connection of a provider reached with a key: the key (raising
    :class:`~hive_providers.registry.MissingSettingError` without one), the endpoint (``None``: the provider's
    own), the window and the idle timeout."""
    return Connection(
        api_key=required_setting(settings, "api_key"),
        base_url=settings.endpoint or None,
        context_window=settings.context_length,
        idle_timeout=settings.idle_timeout,
    )


def client_timeout(idle_timeout: float | None) -> httpx2.Timeout:
    """The HTTP timeouts of a client: every wait for the next bytes is bounded by the stream's idle timeout."""
    connect = _CONNECT_TIMEOUT if idle_timeout is None else min(_CONNECT_TIMEOUT, idle_timeout)
    return httpx2.Timeout(idle_timeout, connect=connect)


def transport_error(provider: str, exc: Exception, idle_timeout: float | None) -> ChatError:
    """The :class:`ChatError` for an HTTP exchange that failed under the adapter: ``timeout`` when the server
    went quiet, else ``network``."""
    if isinstance(exc, httpx2.TimeoutException):
        waited = f" for {idle_timeout:g} seconds" if idle_timeout is not None else ""
        return ChatError(
            f"{provider}: the server sent nothing{waited} ({exc or 'timed out'})", code="timeout"
        )
    return ChatError(
        f"{provider}: the connection{_at(exc)} failed ({type(exc).__name__}: {exc})", code="network"
    )


def _at(exc: Exception) -> str:
    """`` to URL`` for an HTTP error that knows its request (credentials masked), else nothing."""
    try:
        request = getattr(exc, "request", None)
    except RuntimeError:  # httpx2 raises when the error was made without a request
        return ""
    url = getattr(request, "url", None)
    return f" to {mask_url(str(url))}" if url is not None else ""


class RemoteChatClient:
    """The part of a remote adapter that is not about its API: the model, the connection settings, the
    capabilities, and closing (also as an async context manager)."""

    streamed_tool_calls: bool = True
    """Whether tool-call arguments arrive in pieces (a class attribute of each adapter)."""

    def __init__(self, *, provider: str, model: str, connection: Connection) -> None:
        if not model:
            raise ValueError(f"{provider}: model must be a non-empty model name")
        idle_timeout = connection.get("idle_timeout", 120.0)
        if idle_timeout is not None and idle_timeout <= 0:
            raise ValueError(f"{provider}: idle_timeout must be positive, got {idle_timeout}")
        self.provider = provider
        """The provider's name, used in error messages."""
        self.model = model
        """The model requests name unless :attr:`~hive_core.ChatOptions.model` names another."""
        self.api_key = connection.get("api_key")
        """The key, as given."""
        self.base_url = connection.get("base_url")
        """The API's root, as given (adapters may normalise it)."""
        self.idle_timeout = idle_timeout
        """Seconds a stream may send nothing before the request fails with ``timeout`` (``None``: no limit)."""
        self.max_retries = connection.get("max_retries", 2)
        """Retries of a failed request before its error is raised."""
        self.timeout = client_timeout(idle_timeout)
        """The HTTP timeouts of every request."""
        self._context_window = connection.get("context_window")
        self._window_probe = connection.get("window_probe")
        self._probed = False
        self._server_window: int | None = None
        self._catalog: tuple[str, int | None] | None = None  # (model, its catalog window), looked up once

    def thinking(self) -> bool:
        """Whether the model returns its reasoning separately."""
        return True

    def _window(self) -> tuple[int | None, WindowSource | None]:
        if self._context_window is not None:
            return self._context_window, "configured"
        if self._server_window is not None:
            return self._server_window, "server"
        if self._catalog is None or self._catalog[0] != self.model:
            self._catalog = (self.model, catalog_window(self.model))
        known = self._catalog[1]
        return known, ("catalog" if known is not None else None)

    @property
    def capabilities(self) -> Capabilities:
        """Tools, streamed calls as the adapter streams them, thinking as the model does, and the window: the
        configured one, else the server's (once :meth:`probe_capabilities` asked), else the catalog's."""
        window, source = self._window()
        return Capabilities(
            tools=True,
            streamed_tool_calls=self.streamed_tool_calls,
            thinking=self.thinking(),
            context_window=window,
            context_window_source=source,
        )

    async def probe_capabilities(self) -> Capabilities:
        """Ask the server for the model's window, once (:class:`~hive_core.chat.CapabilityProbe`); a server that
        cannot say, or fails, leaves the window to the catalog (the failure is logged at debug level). Nothing is
        asked when the window is configured or the adapter has no way to ask."""
        if not self._probed and self._window_probe is not None and self._context_window is None:
            self._probed = True
            headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else None
            timeout = _PROBE_TIMEOUT if self.idle_timeout is None else min(_PROBE_TIMEOUT, self.idle_timeout)
            try:
                async with httpx2.AsyncClient(
                    timeout=timeout, headers=headers, verify=shared_ssl_context()
                ) as http:
                    self._server_window = await self._window_probe(http, self.base_url or "", self.model)
            except Exception as exc:  # the probe is advice: whatever failed, the client works without it
                reason = mask_urls(f"{type(exc).__name__}: {exc}")
                _log.debug(
                    "%s: the server did not say the window of %s (%s)", self.provider, self.model, reason
                )
        return self.capabilities

    async def aclose(self) -> None:
        """Close the client's connections (a later request opens new ones)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
