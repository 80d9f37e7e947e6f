"""What every request to ``hive serve`` passes before it reaches a route: the token, the ``Host`` and the ``Origin``.

A server that runs code answers only its own user. The token is required on every route, loopback included
(``Authorization: Bearer``, or the cookie the page set from the printed URL's ``?token=``), compared in constant
time. ``Host`` must name the address the server is bound to, so a page on another site cannot reach it through a
name that resolves to 127.0.0.1 (DNS rebinding). A cross-origin ``Origin`` is refused, so another site's page
cannot make the browser send requests with the cookie (CSRF).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from http.cookies import SimpleCookie
from typing import Final
from urllib.parse import parse_qs

from starlette.types import ASGIApp
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

__all__ = ["COOKIE", "Guard", "allowed_hosts"]

COOKIE: Final = "hive_serve_token"
"""The cookie the page keeps the token in."""

_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The ``Host`` values a server bound to ``host``:``port`` answers (every loopback name when it is loopback)."""
    bound = f"[{host}]" if ":" in host and not host.startswith("[") else host
    names = {bound}
    if bound in _LOOPBACK_NAMES or host in ("::1", "0.0.0.0", "::"):
        names.update(_LOOPBACK_NAMES)
    return frozenset(f"{name}:{port}" for name in names)


class Guard:
    """ASGI middleware: refuses a request without the token (401), or with a foreign ``Host`` or a cross-origin
    ``Origin`` (403), before the app sees it; a page load with ``?token=`` sets the cookie."""

    def __init__(self, app: ASGIApp, *, token: str, hosts: Iterable[str]) -> None:
        self.app = app
        self._token = token.encode()
        self._hosts = frozenset(host.lower() for host in hosts)
        self._origins = frozenset(f"http://{host}" for host in self._hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]
        }
        if headers.get("host", "").lower() not in self._hosts:
            await _refuse(
                send, 403, "this server answers only to the address it is bound to", "forbidden_host"
            )
            return
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self._origins:
            await _refuse(send, 403, "cross-origin requests are refused", "forbidden_origin")
            return
        given = self._given_token(headers)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        from_query = query.get("token", [None])[0]
        if from_query is not None and scope["method"] == "GET" and scope["path"] == "/":
            if not secrets.compare_digest(from_query.encode(), self._token):
                await _refuse(send, 401, "wrong token", "unauthorized")
                return
            await _set_cookie_and_go_home(send, from_query)
            return
        if given is None or not secrets.compare_digest(given.encode(), self._token):
            await _refuse(
                send, 401, "a valid token is required (Authorization: Bearer TOKEN)", "unauthorized"
            )
            return
        await self.app(scope, receive, send)

    @staticmethod
    def _given_token(headers: dict[str, str]) -> str | None:
        authorization = headers.get("authorization", "")
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value:
            return value.strip()
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is no token
            return None
        morsel = cookie.get(COOKIE)
        return morsel.value if morsel is not None else None


async def _refuse(send: Send, status: int, message: str, code: str) -> None:
    body = json.dumps({"error": message, "code": code}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _set_cookie_and_go_home(send: Send, token: str) -> None:
    cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [(b"location", b"/"), (b"set-cookie", cookie.encode()), (b"content-length", b"0")],
        }
    )
    await send({"type": "http.response.body", "body": b""})
