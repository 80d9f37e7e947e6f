"""Coding-agent backends: hive drives a coding-agent CLI as an :class:`~hive_core.backends.AgentBackend`.

:func:`resolve_backend` finds a CLI's :class:`LaunchSpec` by name or alias (:mod:`.registry`, which also reads
the ``hive.backends`` entry points), :func:`probe_backend` says whether it is installed and which version
(:mod:`.probe`), :func:`create_backend` builds the backend that runs its turns (:class:`AcpBackend` for the CLIs
that speak the Agent Client Protocol), and :class:`AcpSessionPool` keeps warm sessions between turns
(:mod:`.pool`). Importing this package does not import the ``acp`` package: :class:`AcpBackend` is loaded when
it is first named.
"""

from __future__ import annotations

import typing

from .kit.errors import BackendNotInstalled
from .kit.errors import BackendStartError
from .kit.errors import BackendUnavailable
from .kit.errors import UnknownBackend
from .kit.specs import BackendOptions
from .kit.specs import LaunchSpec
from .kit.specs import ModelEndpoint
from .pool import AcpSessionPool
from .pool import PoolExhausted
from .pool import PoolSettings
from .pool import PoolStats
from .pool import default_pool
from .probe import probe_backend
from .registry import BackendDefinition
from .registry import backend_specs
from .registry import create_backend
from .registry import resolve_backend

if typing.TYPE_CHECKING:
    from .acp.backend import AcpBackend

__all__ = [
    "AcpBackend",
    "AcpSessionPool",
    "BackendDefinition",
    "BackendNotInstalled",
    "BackendOptions",
    "BackendStartError",
    "BackendUnavailable",
    "LaunchSpec",
    "ModelEndpoint",
    "PoolExhausted",
    "PoolSettings",
    "PoolStats",
    "UnknownBackend",
    "backend_specs",
    "create_backend",
    "default_pool",
    "probe_backend",
    "resolve_backend",
]


def __getattr__(name: str) -> object:
    # The ACP client imports the ``acp`` package (and its pydantic schema): only when it is asked for.
    if name == "AcpBackend":
        from .acp.backend import AcpBackend

        return AcpBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
