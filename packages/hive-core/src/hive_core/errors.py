"""The errors hive raises on purpose, in one hierarchy.

:class:`HiveError` is the root. :class:`UserError` is what a person can fix (a bad configuration file, an
unknown name, a malformed argument): its message is one line fit to print, naming the file, line and column
where there is one. A host shows a :class:`UserError` as that line; any other exception is a bug, reported with
its traceback. Subclasses keep the standard exception they refine as a second base (``LookupError`` for
something not found, ``ValueError`` for a bad value), so ``except ValueError`` written before still works.
"""

from __future__ import annotations

__all__ = ["HiveError", "UserError", "where"]


def where(source: str | None, line: int | None = None, column: int | None = None) -> str:
    """``source:line:column`` with the parts that are known (empty when ``source`` is ``None``)."""
    if source is None:
        return ""
    if line is None:
        return source
    return f"{source}:{line}" if column is None else f"{source}:{line}:{column}"


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
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        position = where(source, line, column)
        super().__init__(f"{position}: {problem}" if position else problem)
