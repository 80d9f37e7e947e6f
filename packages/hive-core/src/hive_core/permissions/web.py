"""The ``web`` rule category: judging a URL the model chose, by its text and by the addresses its name leads to.

A ``web`` rule's pattern is matched against the whole URL, ``*`` spanning any characters (``/`` included) and
``?`` one, ignoring case: ``http://127.0.0.1:*`` covers every port and path on that address. A URL is judged in
two spellings, as written and with the address its host resolved to in place of the host
(``http://localhost:8000/`` → ``http://127.0.0.1:8000/``); for each, the winning rule decides, or, where no rule
matches, the built-in judgement: an ``http``/``https`` URL whose every address is public is allowed, and anything
else is asked about — another scheme, a loopback, link-local (``169.254.169.254``), private, shared or reserved
address, or a name that does not resolve. The stricter spelling wins, so a rule naming a public host cannot carry
the URL to an inward address its name resolves to: only a rule that matches the address itself allows that. A
``default_action: deny`` turns the built-in judgement's allows and asks into denials.
"""

from __future__ import annotations

import concurrent.futures
import ipaddress
import socket
import urllib.parse
from collections.abc import Sequence
from typing import Final
from typing import Protocol
from typing import runtime_checkable

from hive_core.approvals import PermissionAction
from hive_core.approvals import Verdict
from hive_core.approvals import strictest

from .glob import compile_glob
from .rules import PermissionRule

__all__ = [
    "RESOLVE_TIMEOUT",
    "UrlJudge",
    "WebRules",
    "address_problem",
    "resolve_host",
    "split_url",
]

RESOLVE_TIMEOUT: Final = 5.0
"""Seconds a name may take to resolve while a call is judged; past that it counts as not resolvable (asked about)."""

WEB_SCHEMES: Final = ("http", "https")


@runtime_checkable
class UrlJudge(Protocol):
    """Judges a URL a web tool is about to request (:class:`hive_core.permissions.PermissionPolicy` is one)."""

    def judge_url(self, url: str, addresses: Sequence[str]) -> Verdict:
        """Allow, deny or ask for requesting ``url``, whose host resolved to ``addresses`` (empty: it did not
        resolve)."""
        ...


def split_url(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an ``http``/``https`` URL (host lower-cased, without IPv6 brackets), or ``None``
    when ``url`` is not one or has no host."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in WEB_SCHEMES or not host:
        return None
    return scheme, host, port if port is not None else (443 if scheme == "https" else 80)


def address_problem(address: str) -> str | None:
    """Why ``address`` is not a public internet address (``"a loopback address"``…), or ``None`` when it is one."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_private:
        return "a private-network address"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved or not ip.is_global:
        return "not a public internet address"
    return None


def resolve_host(host: str, port: int, *, timeout: float = RESOLVE_TIMEOUT) -> list[str]:
    """The addresses ``host`` resolves to (itself for an IP literal), waiting at most ``timeout`` seconds; empty
    when it does not resolve in time."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return [host]
    # getaddrinfo cannot be interrupted: it runs on a worker thread that is left to finish on its own.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        future = pool.submit(socket.getaddrinfo, host, port, 0, socket.SOCK_STREAM)
        infos = future.result(timeout=timeout)
    except (OSError, UnicodeError, concurrent.futures.TimeoutError):
        return []
    finally:
        pool.shutdown(wait=False)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class WebRules:
    """The ``web`` rules and the policy's default action, judging URLs as the module describes."""

    def __init__(
        self, rules: Sequence[PermissionRule] = (), default_action: PermissionAction = "ask"
    ) -> None:
        ranked = sorted(rules, key=lambda rule: -rule.priority)
        self._rules = tuple((rule, compile_glob(rule.pattern, "command")) for rule in ranked)
        self._default_action: PermissionAction = default_action

    def judge_url(self, url: str, addresses: Sequence[str]) -> Verdict:
        """Judge ``url``, whose host resolved to ``addresses``."""
        url = url.strip()
        split = split_url(url)
        if split is None:
            return self._judged(
                url, Verdict.ask(f"{url!r} is not an http or https URL, so where it leads cannot be judged")
            )
        _, host, _ = split
        builtin = _builtin(url, host, addresses)
        spellings = [url, *(_with_address(url, host, address) for address in addresses)]
        return strictest(self._judged(spelling, builtin) for spelling in dict.fromkeys(spellings))

    def _judged(self, spelling: str, builtin: Verdict) -> Verdict:
        for rule, matches in self._rules:
            if matches(spelling):
                source = f"web rule '{rule.pattern}' ({rule.action}) for {spelling!r}"
                reason = f"{rule.reason} [{source}]" if rule.reason else f"the {source}"
                return Verdict.of(rule.action, reason)
        if self._default_action == "deny":
            return Verdict.deny(f"{builtin.reason}; the default action is deny")
        return builtin


def _builtin(url: str, host: str, addresses: Sequence[str]) -> Verdict:
    if not addresses:
        return Verdict.ask(f"the host {host!r} of {url!r} does not resolve, so it cannot be judged")
    for address in addresses:
        problem = address_problem(address)
        if problem is not None:
            shown = host if address == host else f"{host!r} resolves to {address}, which"
            return Verdict.ask(f"{url!r} is not on the public internet: {shown} is {problem}", level="high")
    return Verdict.allow(f"{url!r} is a public address")


def _with_address(url: str, host: str, address: str) -> str:
    """``url`` with ``address`` in place of ``host`` (an IPv6 address in brackets)."""
    parts = urllib.parse.urlsplit(url)
    shown = f"[{address}]" if ":" in address else address
    netloc = parts.netloc.rsplit("@", 1)[-1]
    lowered = netloc.lower()
    bracketed = f"[{host}]" if ":" in host else host
    start = lowered.find(bracketed)
    if start < 0:
        return url
    netloc = netloc[:start] + shown + netloc[start + len(bracketed) :]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
