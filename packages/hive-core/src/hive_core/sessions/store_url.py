"""Where a session store lives, as the user names it: a SQLite file's path or a ``postgresql://`` URL.

Nothing here imports a database driver: a run on the SQLite file never loads psycopg.
"""

from __future__ import annotations

from typing import Final

__all__ = ["POSTGRES_SCHEMES", "is_postgres_url"]

POSTGRES_SCHEMES: Final = ("postgresql", "postgres")
"""The URL schemes that name a PostgreSQL store (libpq's two spellings)."""


def is_postgres_url(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL database (``postgresql://…`` or ``postgres://…``)."""
    scheme, sep, _ = location.partition("://")
    return bool(sep) and scheme.lower() in POSTGRES_SCHEMES
