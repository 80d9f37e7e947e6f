"""What hive never shows whole: secrets, and the credentials a URL can carry.

A secret is masked as ``abcd...wxyz`` (``***`` when short). A URL keeps its scheme, host, path and the harmless
parts of its query, and masks the rest whole, as ``***``: the userinfo of ``https://user:password@host`` (a user
alone is a token as often as a name, ``https://TOKEN@host``) and every query or fragment value whose name says it
is a secret (``?api_key=``, ``?key=``, ``?token=``, ``#access_token=``, ``?sig=``...), percent-encoded names
included. No character of a credential in a URL is shown: a URL's secret is often short or structured, and four
characters of it are too many. Masking is for display only: what is used is never changed.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import SplitResult
from urllib.parse import unquote
from urllib.parse import urlsplit

__all__ = ["is_secret_name", "mask_secret", "mask_url", "mask_urls"]

_SEPARATORS: Final = re.compile(r"[_\-\s]+")
_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
_SECRET_WORDS: Final = frozenset({"key", "apikey", "token", "secret", "password", "passphrase", "credential"})
# Query parameters also go by these: a shared-access signature, a password, an authorization.
_SECRET_QUERY_WORDS: Final = _SECRET_WORDS | {
    "sig",
    "signature",
    "pass",
    "passwd",
    "pwd",
    "auth",
    "authorization",
    "apitoken",
    "accesstoken",
    "sas",
    "jwt",
    "bearer",
    "session",
    "sessionid",
    "cookie",
}
_MASK_MIN_LENGTH: Final = 12
_HIDDEN: Final = "***"
_PAIR_SPLIT: Final = re.compile(r"([&;])")
"""Between a query's pairs: ``&``, and ``;`` which some servers read as ``&``."""
# A URL in running text: a scheme, "://", and everything up to white space or a quote or bracket around it.
_URL_IN_TEXT: Final = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>()\[\]{}]+")


def _words(name: str) -> list[str]:
    return [word.lower() for word in _WORDS.findall(_SEPARATORS.sub(" ", name))]


def is_secret_name(name: str) -> bool:
    """Whether a name (a key, a variable) says it holds a secret: one of its words is key, token, secret,
    password, passphrase or credential (``apiKey``, ``OPENAI_API_KEY``; not ``maxSessionTokens``)."""
    return any(word in _SECRET_WORDS for word in _words(name))


def mask_secret(value: str) -> str:
    """``value`` masked for display: ``abcd...wxyz`` when 12 characters or longer, else ``***``; empty stays
    empty (there is nothing to hide)."""
    if not value:
        return ""
    if len(value) < _MASK_MIN_LENGTH:
        return "***"
    return f"{value[:4]}...{value[-4:]}"


def mask_url(url: str) -> str:
    """``url`` with its credentials masked (see the module); anything that is no URL with a host comes back as
    it was."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port, which the netloc rewrite below could not keep
    except ValueError:
        return _mask_userinfo_text(url)
    if not parts.scheme or not parts.netloc:
        return url
    netloc = _mask_netloc(parts)
    query = _mask_query(parts.query)
    fragment = _mask_query(parts.fragment)  # OAuth's implicit flow puts ``access_token=`` there
    if netloc == parts.netloc and query == parts.query and fragment == parts.fragment:
        return url
    return parts._replace(netloc=netloc, query=query, fragment=fragment).geturl()


def mask_urls(text: str) -> str:
    """``text`` with every URL in it masked by :func:`mask_url`."""
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda found: mask_url(found.group()), text)


def _mask_netloc(parts: SplitResult) -> str:
    _userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return parts.netloc
    return f"{_HIDDEN}@{host}"


def _mask_query(query: str) -> str:
    if not query:
        return query
    return "".join(_mask_pair(piece) for piece in _PAIR_SPLIT.split(query))


def _mask_pair(piece: str) -> str:
    if piece in ("&", ";"):
        return piece
    name, equals, value = piece.partition("=")
    if equals and value and _is_secret_query_name(name):
        return f"{name}={_HIDDEN}"
    return piece


def _is_secret_query_name(name: str) -> bool:
    # ``api%5Fkey`` and ``api+key`` are ``api_key`` to the server that reads them.
    plain = unquote(name.replace("+", " "))
    words = _words(plain)
    joined = "".join(words)
    return any(word in _SECRET_QUERY_WORDS for word in words) or joined in _SECRET_QUERY_WORDS


def _mask_userinfo_text(url: str) -> str:
    # Not parseable (a bad port, a bracket out of place): still never show what sits before an "@".
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.partition("@")
    if not sep or not at or "/" in userinfo:
        return url
    return f"{scheme}://{_HIDDEN}@{host}"
