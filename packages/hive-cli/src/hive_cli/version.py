"""The installed version of hive-agent-cli, read from its package metadata: the one place it is written.

``hive --version`` is answered with it before anything else is imported. :func:`importlib.metadata.version` would
answer the same, but importing :mod:`importlib.metadata` (``email``, ``zipfile``, ``csv``, ``pathlib``) costs three
times the CPU of a bare interpreter's start; the ``Version:`` line of the ``*.dist-info/METADATA`` file on
``sys.path`` is read directly instead, and :mod:`importlib.metadata` is asked only when no such file is found (an
egg, a zip).
"""

from __future__ import annotations

import os
import sys

__all__ = ["DISTRIBUTION", "installed_version"]

DISTRIBUTION = (
    "hive-agent-cli"  # not typing.Final: importing typing would double the cost of `hive --version`
)
"""The distribution the ``hive`` command is installed from."""


def installed_version(distribution: str = DISTRIBUTION) -> str:
    """The version of ``distribution`` as installed: the first ``<name>-<version>.dist-info`` on ``sys.path``, as
    :func:`importlib.metadata.version` finds it."""
    prefix = distribution.replace("-", "_").replace(".", "_").lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.lower().startswith(prefix) and name.endswith(".dist-info"):
                version = _metadata_version(os.path.join(entry or ".", name, "METADATA"))
                if version is not None:
                    return version
    from importlib.metadata import version

    return version(distribution)


def _metadata_version(path: str) -> str | None:
    """The ``Version:`` header of a core metadata file (``None`` when it is unreadable or has none)."""
    try:
        with open(path, encoding="utf-8") as metadata:
            for line in metadata:
                if not line.strip():
                    return None  # the headers end at the first blank line; the description follows
                if line.startswith("Version:"):
                    return line.removeprefix("Version:").strip()
    except OSError:
        return None
    return None
