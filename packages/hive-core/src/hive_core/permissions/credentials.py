"""Credential stores and the hive home: places no tool reads or changes, wherever the project is.

A project rooted at the home folder would otherwise hold ``~/.ssh`` and ``~/.aws`` "inside the project", where
the read rules allow everything. The list is the one the sandbox hides
(:data:`~hive_core.sandbox.bubblewrap.CREDENTIAL_STORES`), under the user's home as ``$HOME`` names it and as the
password database does, plus the hive home (its ``config.yaml`` holds API keys, its store every session).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

from hive_core.config.paths import hive_home
from hive_core.sandbox.bubblewrap import CREDENTIAL_STORES

__all__ = ["CredentialStores"]


@dataclass(frozen=True)
class CredentialStores:
    """The credential stores of one environment, as absolute paths (each as written and with links resolved)."""

    paths: tuple[str, ...]
    """Every store, spelled and resolved."""
    _pattern: re.Pattern[str]

    @classmethod
    def of(cls, environ: Mapping[str, str] = os.environ) -> CredentialStores:
        """The stores under the user's home (``$HOME`` and the password database's) and the hive home."""
        homes = {home for home in (environ.get("HOME", ""), _account_home()) if home.startswith("/")}
        places = [os.path.join(home, name) for home in sorted(homes) for name in CREDENTIAL_STORES]
        places.append(str(hive_home(environ)))
        return cls.at(places)

    @classmethod
    def at(cls, places: Iterable[str]) -> CredentialStores:
        """Stores at the absolute paths ``places``."""
        paths = tuple(
            dict.fromkeys(
                spelling
                for place in places
                for spelling in (os.path.normpath(place), os.path.realpath(place))
                if spelling != "/"
            )
        )
        # One regex for all: the search tools judge every file they reach, so this runs per file.
        alternatives = "|".join(re.escape(path) for path in sorted(paths, key=len, reverse=True))
        return cls(paths, re.compile(f"(?:{alternatives})(?=/|$)" if paths else r"(?!)"))

    def holding(self, *paths: str) -> str | None:
        """The store that holds (or is) any of the absolute ``paths``; ``None`` when none does."""
        for path in paths:
            match = self._pattern.match(path)
            if match is not None:
                return match.group(0)
        return None


def _account_home() -> str:
    """The home folder the password database gives the user (``$HOME`` may have been moved)."""
    try:
        import pwd  # POSIX only
    except ImportError:
        return ""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return ""
