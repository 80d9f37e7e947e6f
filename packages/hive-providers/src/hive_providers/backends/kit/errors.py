"""Why a coding-agent backend cannot be named, found, or started, or why its process failed a turn."""

from __future__ import annotations

from collections.abc import Iterable

from hive_core.backends import HIVE_BACKEND
from hive_core.errors import UserError
from hive_core.failures import ChatError
from hive_protocol import ErrorCode

__all__ = [
    "AgentProcessError",
    "BackendNotInstalled",
    "BackendStartError",
    "BackendUnavailable",
    "UnknownBackend",
]


class UnknownBackend(UserError, LookupError):
    """A backend name that is no backend; the message lists every canonical name with its aliases."""

    def __init__(self, name: str, known: Iterable[tuple[str, tuple[str, ...]]] = ()) -> None:
        listed = "; ".join(
            [f"{HIVE_BACKEND} (hive's own loop)"]
            + [
                f"{canonical} (also {', '.join(aliases)})" if aliases else canonical
                for canonical, aliases in known
            ]
        )
        if name.strip().lower() == HIVE_BACKEND:
            problem = f"{HIVE_BACKEND!r} is hive's own loop, not a coding-agent CLI; the CLIs are: {listed}"
        else:
            problem = f"unknown agent backend {name!r}; the backends are: {listed}"
        super().__init__(problem)
        self.name = name
        """The name that was asked for."""


class BackendNotInstalled(UserError):
    """The backend's program is not on ``PATH``; the message names the programs and the install command."""

    def __init__(self, name: str, executables: tuple[str, ...], install_hint: str) -> None:
        programs = " or ".join(executables)
        super().__init__(
            f"the agent backend {name!r} is not installed: no {programs} on PATH; install it with: {install_hint}"
        )
        self.name = name
        """The backend's canonical name."""
        self.executables = executables
        """The programs looked for."""
        self.install_hint = install_hint
        """The command that installs it."""


class BackendUnavailable(UserError, ValueError):
    """A known backend that cannot do what was asked: it needs a vendor login here, or cannot copy its session
    for ``--fork``."""


class BackendStartError(ChatError):
    """A CLI exited at start, did not answer in time, or failed ``initialize``: the turn's ``error`` event."""

    def __init__(self, message: str, *, code: ErrorCode = "internal") -> None:
        super().__init__(message, code=code)


class AgentProcessError(ChatError):
    """The agent's process died, closed its output, or broke the protocol: the turn's ``error``."""
