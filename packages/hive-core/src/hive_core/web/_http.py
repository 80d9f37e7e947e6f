"""Requests to URLs the model chose: every hop judged by the web rules, and the connection pinned to the judged address.

Each hop (the first URL and every redirect) is resolved, judged (:class:`~hive_core.permissions.web.UrlJudge`) and
then requested over a connection made to the very address that was judged: the network backend below refuses any
other host and connects to that address whatever the name resolves to by then, so a name cannot be judged public
and then answer with an inward address. TLS still verifies the certificate against the name in the URL.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from typing import cast

import anyio
import httpcore2
import httpx2

from hive_core.errors import HiveError
from hive_core.permissions.web import UrlJudge
from hive_core.permissions.web import split_url

__all__ = ["MAX_REDIRECTS", "Fetched", "PinnedFetcher", "WebError", "WebRefused"]

MAX_REDIRECTS: Final = 5
"""Redirects followed for one request at most."""

USER_AGENT: Final = "hive-web/0.1 (the web tools of the hive agent host)"

_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})


class WebError(HiveError):
    """A web tool's request failed: the network, a timeout, an HTTP error or the rules. The model reads it."""


class WebRefused(WebError):
    """The web rules did not allow a URL a request reached."""


@dataclass(frozen=True)
class Fetched:
    """A response that was read (its body cut at the byte cap)."""

    url: str
    """Where the body came from, after redirects."""
    status: int
    """The HTTP status."""
    content_type: str
    """The media type, lower-cased, without parameters (empty when not given)."""
    charset: str | None
    """The charset the ``Content-Type`` names, if any."""
    body: bytes
    """The body, at most the cap."""
    truncated: bool
    """Whether the body went on past the cap."""

    def text(self) -> str:
        """The body decoded by its charset (UTF-8 when none or unknown), undecodable bytes replaced."""
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


@functools.cache
def _tls() -> ssl.SSLContext:
    return httpx2.create_ssl_context()


class _Pinned(httpcore2.AsyncNetworkBackend):
    """Connects only to ``host``, and then to ``address``: the address that was judged."""

    def __init__(self, host: str, address: str) -> None:
        self._host = host
        self._address = address
        # httpcore2 declares a stand-in class for when anyio is missing; hive always has anyio.
        self._inner = cast("httpcore2.AsyncNetworkBackend", httpcore2.AnyIOBackend())

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        if host.strip("[]").lower() != self._host:
            raise httpcore2.ConnectError(f"{host} is not the host that was judged")
        return await self._inner.connect_tcp(
            self._address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("the web tools connect over TCP only")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


async def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (itself for an IP literal); empty when it does not resolve."""
    if _is_literal(host):
        return [host]
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class PinnedFetcher:
    """GETs URLs the model chose, judging every hop with ``judge``.

    ``approved`` is a URL a person approved for this call: a hop on its origin (scheme, host and port) runs even
    where the rules would ask, since the person saw it; every other hop that the rules do not allow is refused
    with :class:`WebRefused`, never followed.
    """

    def __init__(self, judge: UrlJudge, *, timeout: float, approved: str | None = None, tool: str) -> None:
        self._judge = judge
        self._timeout = timeout
        self._approved = split_url(approved) if approved is not None else None
        self._tool = tool

    async def get(self, url: str, *, max_bytes: int, accept: str = "*/*") -> Fetched:
        """GET ``url``, following redirects (each judged), reading at most ``max_bytes`` of the body.

        Raises :class:`WebRefused` for a hop the rules do not allow and :class:`WebError` for a network error, a
        timeout or too many redirects. An HTTP error status is returned, not raised.
        """
        current = url.strip()
        for _ in range(MAX_REDIRECTS + 1):
            split, address = await self._judged(current)
            try:
                with anyio.fail_after(self._timeout):
                    fetched, location = await self._one(current, split[1], address, max_bytes, accept)
            except TimeoutError:
                raise WebError(f"{current} did not answer within {self._timeout:g} s") from None
            except (httpcore2.NetworkError, httpcore2.TimeoutException, httpcore2.ProtocolError) as error:
                raise WebError(f"requesting {current} failed: {error or type(error).__name__}") from None
            except (httpcore2.UnsupportedProtocol, ValueError) as error:
                raise WebError(f"{current} cannot be requested: {error}") from None
            if location is None:
                return fetched
            current = urllib.parse.urljoin(current, location)
        raise WebError(f"{url} redirected more than {MAX_REDIRECTS} times")

    async def _judged(self, url: str) -> tuple[tuple[str, str, int], str]:
        split = split_url(url)
        if split is None:
            raise WebError(f"{url!r} is not an http or https URL; the web tools read only those")
        addresses = await resolve(split[1], split[2])
        verdict = self._judge.judge_url(url, addresses)
        if verdict.action != "allow" and split != self._approved:
            if verdict.action == "deny":
                raise WebRefused(f"{url} was not requested: the web rules deny it ({verdict.reason})")
            raise WebRefused(
                f"{url} was not requested: the web rules ask about it ({verdict.reason}). To read it, call "
                f"{self._tool} with that URL, so that the person can approve it"
            )
        if not addresses:
            raise WebError(f"the host {split[1]!r} of {url} does not resolve")
        return split, addresses[0]

    async def _one(
        self, url: str, host: str, address: str, max_bytes: int, accept: str
    ) -> tuple[Fetched, str | None]:
        headers = [
            (b"User-Agent", USER_AGENT.encode()),
            (b"Accept", accept.encode()),
            (b"Accept-Encoding", b"identity"),
        ]
        pool = httpcore2.AsyncConnectionPool(
            ssl_context=_tls(), network_backend=_Pinned(host, address), max_connections=1
        )
        async with pool, pool.stream("GET", url, headers=headers) as response:
            fields = {
                name.decode("latin-1").lower(): value.decode("latin-1") for name, value in response.headers
            }
            location = fields.get("location")
            if response.status in _REDIRECTS and location:
                return Fetched(url, response.status, "", None, b"", False), location
            body = bytearray()
            truncated = False
            async for chunk in response.aiter_stream():
                body += chunk
                if len(body) > max_bytes:
                    del body[max_bytes:]
                    truncated = True
                    break
        media, _, parameters = fields.get("content-type", "").partition(";")
        charset = None
        for parameter in parameters.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name.lower() == "charset" and value:
                charset = value.strip('"').strip()
        return Fetched(url, response.status, media.strip().lower(), charset, bytes(body), truncated), None
