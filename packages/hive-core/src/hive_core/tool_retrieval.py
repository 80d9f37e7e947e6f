"""Offering a turn only the tools its request needs: the tool profile of small local models.

A 135M-parameter model given eight tool descriptions spends most of its prompt on them, answers "Say hello in
five words" with a code block, and takes seconds just to read them. :class:`ToolRetrieval` picks, per turn, the
few tools the user's message points at — by the words people use for each job (``run the tests`` →
``execute_command``, ``what is in setup.py`` → ``read_file``), by a path in the message, and by the tools the
conversation already used — and none for a plain question. Frontier models keep every tool (no selector).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Final
from typing import Protocol

from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import GLOB_FILES
from hive_core.tool_names import GREP_FILES
from hive_core.tool_names import LIST_DIRECTORY
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE

from .messages import Message
from .messages import ToolCallPart
from .tools import Tool

__all__ = ["BUILTIN_TOOL_WORDS", "ToolRetrieval", "ToolSelector"]


class ToolSelector(Protocol):
    """Chooses the tools one turn offers, out of the registered ones."""

    def select(self, prompt: str, history: Sequence[Message], tools: Mapping[str, Tool]) -> tuple[str, ...]:
        """The names to offer for the user's ``prompt`` after ``history``; empty for none."""
        ...


BUILTIN_TOOL_WORDS: Final[Mapping[str, frozenset[str]]] = {
    READ_FILE: frozenset(
        {"read", "show", "open", "content", "contents", "look", "cat", "print", "explain", "file", "says"}
    ),
    WRITE_FILE: frozenset({"write", "create", "save", "new", "generate", "scaffold"}),
    EDIT_FILE: frozenset(
        {
            "edit",
            "change",
            "fix",
            "replace",
            "rename",
            "modify",
            "update",
            "refactor",
            "add",
            "remove",
            "delete",
        }
    ),
    EXECUTE_COMMAND: frozenset(
        {
            "run",
            "execute",
            "command",
            "test",
            "tests",
            "build",
            "install",
            "shell",
            "script",
            "compile",
            "git",
            "npm",
            "pytest",
            "make",
            "lint",
            "commit",
            "diff",
            "status",
            "uv",
            "pip",
            "cargo",
        }
    ),
    GREP_FILES: frozenset(
        {
            "search",
            "grep",
            "where",
            "occurrence",
            "occurrences",
            "usage",
            "usages",
            "defined",
            "references",
            "find",
        }
    ),
    GLOB_FILES: frozenset({"files", "glob", "pattern", "which", "find"}),
    LIST_DIRECTORY: frozenset(
        {"list", "directory", "folder", "ls", "structure", "tree", "project", "layout"}
    ),
    "todo": frozenset({"plan", "todo", "task", "tasks", "steps"}),
}
"""The words that point at each built-in tool (lower case; a word counts in its singular or plural)."""

_PATH: Final = re.compile(r"(?:[\w.-]+/)+[\w.-]*|\b[\w-]+\.(?:[a-z]{1,5})\b")
"""A path or a file name in the message (``src/app.py``, ``README.md``, ``tests/``)."""
_WORD: Final = re.compile(r"[a-z][a-z0-9]*")
_PATH_TOOLS: Final = (READ_FILE, EDIT_FILE, LIST_DIRECTORY)
_STOP: Final = frozenset(
    {"the", "a", "an", "and", "or", "to", "of", "in", "on", "for", "with", "is", "are", "it", "this", "that", "me",
     "you", "i", "my", "your", "be", "can", "do", "does", "what", "how", "why", "please", "tool", "tools"}
)  # fmt: skip


class ToolRetrieval:
    """A :class:`ToolSelector` by the words of the request: at most :attr:`limit` tools, none for a plain question.

    Built-in tools are matched by :data:`BUILTIN_TOOL_WORDS`; any other tool (an MCP server's) by the words of
    its name and the first sentence of its description. A path in the message offers the file tools; a tool the
    conversation called before stays offered, so a task spanning turns keeps its tools.
    """

    def __init__(self, *, limit: int = 4, words: Mapping[str, Iterable[str]] | None = None) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        """The most tools one turn is offered."""
        self.words: dict[str, frozenset[str]] = {
            name: frozenset(vocabulary) for name, vocabulary in (words or BUILTIN_TOOL_WORDS).items()
        }
        """The words that point at each tool, by tool name."""

    def select(self, prompt: str, history: Sequence[Message], tools: Mapping[str, Tool]) -> tuple[str, ...]:
        """The tools ``prompt`` needs, best first: used before, then by the words they share with it."""
        asked = _words(prompt)
        scores: dict[str, float] = {}
        for name, tool in tools.items():
            score = len(asked & self._vocabulary(name, tool))
            if score:
                scores[name] = score
        if _PATH.search(prompt):
            for name in _PATH_TOOLS:
                if name in tools:
                    scores[name] = scores.get(name, 0) + 0.5
        used = [name for name in _called(history) if name in tools]
        ranked = sorted(scores, key=lambda name: -scores[name])
        return tuple(dict.fromkeys([*used, *ranked]))[: max(self.limit, len(used))]

    def _vocabulary(self, name: str, tool: Tool) -> frozenset[str]:
        known = self.words.get(name)
        if known is not None:
            return known
        summary = tool.spec.description.split(". ", 1)[0]
        return _words(name.replace("_", " ")) | _words(summary)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _words(text: str) -> frozenset[str]:
    found = (word for word in _WORD.findall(text.lower()) if word not in _STOP)
    return frozenset(form for word in found for form in (word, _singular(word)))


def _called(history: Sequence[Message]) -> list[str]:
    names: dict[str, None] = {}
    for message in reversed(history):
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                names.setdefault(part.name)
    return list(names)
