"""Where a session store lives, as the user names it: a SQLite file's path or a ``postgresql://`` URL.

Nothing here imports a database driver: a run on the SQLite file never loads psycopg.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

__all__ = ["POSTGRES_SCHEMES", "is_postgres_url", "redact_store_url"]

POSTGRES_SCHEMES: Final = ("postgresql", "postgres")
"""The URL schemes that name a PostgreSQL store (libpq's two spellings)."""

_PASSWORD_PARAM: Final = re.compile(r"(?i)(password=)[^&;\s]*")
_HIDDEN: Final = "***"


def is_postgres_url(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL database (``postgresql://…`` or ``postgres://…``)."""
    scheme, sep, _ = location.partition("://")
    return bool(sep) and scheme.lower() in POSTGRES_SCHEMES


def redact_store_url(location: str) -> str:
    """``location`` with any password replaced by ``***`` (in the user part or a ``password=`` parameter), so
    that it can be printed; anything that is not a URL is returned as it is."""
    if "://" not in location:
        return location
    try:
        parts = urlsplit(location)
    except ValueError:
        return _PASSWORD_PARAM.sub(
            rf"\g<1>{_HIDDEN}", re.sub(r"(://[^:/@]*:)[^@/]*@", rf"\g<1>{_HIDDEN}@", location)
        )
    netloc = parts.netloc
    user, at, host = netloc.rpartition("@")
    if at and ":" in user:
        netloc = f"{user.partition(':')[0]}:{_HIDDEN}@{host}"
    query = _PASSWORD_PARAM.sub(rf"\g<1>{_HIDDEN}", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
