"""The errors hive raises on purpose, in one hierarchy.

:class:`HiveError` is the root. :class:`UserError` is what a person can fix (a bad configuration file, an
unknown name, a malformed argument): its message is one line fit to print, naming the file, line and column
where there is one. A host shows a :class:`UserError` as that line; any other exception is a bug, reported as
one (``hive`` prints its traceback under ``--debug``). Subclasses keep the standard exception they refine as a
second base (``LookupError`` for something not found, ``ValueError`` for a bad value), so ``except ValueError``
written before still works.

Every :class:`UserError` is built the same way, ``Error(problem, *, source=..., line=..., column=...)`` plus
the fields of its own, so a reader that finds a fault can raise whichever class its caller names
(:func:`hive_core.config.structured.read_document`)::

    HiveError
    ├── UserError
    │   ├── ConfigError (ValueError)              hive_core.config: a configuration file, variable or key
    │   ├── PermissionConfigError (ValueError)    hive_core.permissions: the permission rules
    │   ├── PluginConfigError (ValueError)        hive_core.mcp: a plugins file
    │   ├── InvalidSessionId (ValueError)         hive_core.sessions: an id given on the command line
    │   ├── SessionNotFound (LookupError)         hive_core.sessions
    │   ├── SessionExists (ValueError)            hive_core.sessions
    │   ├── UnsupportedSchema (RuntimeError)      hive_core.sessions: a database written by a newer hive
    │   ├── SessionStoreError (RuntimeError)      hive_core.sessions: a database that is damaged or unreachable
    │   ├── SessionInUse (RuntimeError)           hive_core.sessions: another process serves the session
    │   ├── SandboxUnavailable (RuntimeError)     hive_core.sandbox: sandbox.mode needs a sandbox none can run
    │   ├── ProviderSelectionError (ValueError)   hive_providers.registry: no usable provider
    │   │   └── UnknownProviderError              hive_providers.registry: a name that is no provider
    │   ├── SessionChoiceError (LookupError)      hive_cli.conversation: ``-r`` names no session
    │   └── PipedInputTooLarge (ValueError)       hive_cli.piped_input: more text on stdin than hive reads
    ├── ChatError                                 hive_core.failures: a model request failed (an error event)
    ├── ToolArgumentError (ValueError)            hive_core.tools: a call's arguments do not fit its tool
    └── McpServerError (RuntimeError)             hive_core.mcp: a server could not answer a call

Errors a model makes calling a tool are not user errors: a tool raises what it likes, and the model reads it
as the call's result.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["ErrorPosition", "HiveError", "UserError", "where"]


def where(source: str | None, line: int | None = None, column: int | None = None) -> str:
    """``source:line:column`` with the parts that are known (empty when ``source`` is ``None``)."""
    if source is None:
        return ""
    if line is None:
        return source
    return f"{source}:{line}" if column is None else f"{source}:{line}:{column}"


class ErrorPosition(TypedDict, total=False):
    """Where a :class:`UserError` is, as its keyword arguments: what a subclass passes on unchanged."""

    source: str | None
    """The file (or variable) the fault is in."""
    line: int | None
    """The 1-based line of the fault."""
    column: int | None
    """The 1-based column of the fault."""


class HiveError(Exception):
    """The root of every error hive raises on purpose."""


class UserError(HiveError):
    """A fault the user can fix; ``str()`` is the whole message, with its position first when known."""

    problem: str
    """What is wrong, in words."""
    source: str | None
    """The file (or variable) the fault is in; ``None`` when it is not in a file (a bad argument)."""
    line: int | None
    """The 1-based line of the fault, when known."""
    column: int | None
    """The 1-based column of the fault, when known."""

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(problem)
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column

    def __str__(self) -> str:
        position = where(self.source, self.line, self.column)
        return f"{position}: {self.problem}" if position else self.problem
