"""The environment a command inherits: an allow-list, never a secret hive holds.

hive's own environment carries provider keys (``OPENAI_API_KEY``...) and whatever else the user exported, so a
command gets only the variables named here or in ``sandbox.passVariables``. A variable hive reads configuration
from is never passed, whatever lists it, and a wildcard never passes a variable whose name says it holds a
secret (``*_TOKEN``, ``*_API_KEY``, ``*PASSWORD*``...): only its exact name does.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Final

from hive_core.config import is_secret_key

__all__ = ["PASSED_VARIABLES", "command_environment"]

PASSED_VARIABLES: Final[tuple[str, ...]] = (
    # Who and where: the shell, the user, the locale, the terminal's shape.
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "TERM",
    "COLORTERM",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    # Where programs keep their files, and which certificates they trust.
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    # Toolchains installed outside the default places.
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "CARGO_HOME",
    "RUSTUP_HOME",
    # What Windows programs cannot start without.
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "OS",
)
"""The variables every command inherits (when hive has them); ``*`` matches any run of characters."""

_FOLD_CASE: Final = sys.platform == "win32"
"""Windows spells variable names in any case."""


def command_environment(
    environ: Mapping[str, str] = os.environ,
    *,
    passed: Iterable[str] = (),
    withheld: Collection[str] = (),
) -> dict[str, str]:
    """The variables of ``environ`` a command inherits.

    A variable passes when :data:`PASSED_VARIABLES` or ``passed`` names it, exactly or by a pattern; a pattern
    does not pass a secret-looking name (see :func:`~hive_core.config.is_secret_key`); nothing in ``withheld``
    passes.
    """
    names: set[str] = set()
    patterns: list[str] = []
    for entry in (*PASSED_VARIABLES, *passed):
        entry = _fold(entry.strip())
        if not entry:
            continue
        if "*" in entry or "?" in entry or "[" in entry:
            patterns.append(entry)
        else:
            names.add(entry)
    never = {_fold(name) for name in withheld}
    result: dict[str, str] = {}
    for name, value in environ.items():
        key = _fold(name)
        if key in never:
            continue
        if key in names or (
            not is_secret_key(name) and any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns)
        ):
            result[name] = value
    return result


def _fold(name: str) -> str:
    return name.upper() if _FOLD_CASE else name
