"""Offering a turn only the tools its request needs: the tool profile of small local models, and the
``toolRetrieval`` settings for any model.

A 135M-parameter model given eight tool descriptions spends most of its prompt on them, answers "Say hello in
five words" with a code block, and takes seconds just to read them; a large model offered a hundred MCP tools
pays for their descriptions on every request. :class:`ToolRetrieval` picks, per turn, the few tools the user's
message points at — by the words of each tool's name and description plus the words people use for each built-in
job (``run the tests`` → ``execute_command``, ``what is in setup.py`` → ``read_file``), by a path in the message,
and by the tools the conversation already used — and none for a plain question. It scores locally: no model, no
network. Without a selector every tool is offered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Final
from typing import Protocol
from typing import cast

from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import GLOB_FILES
from hive_core.tool_names import GREP_FILES
from hive_core.tool_names import LIST_DIRECTORY
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE

from .context.settings import ConfigSections
from .messages import Message
from .messages import ToolCallPart
from .tools import Tool

__all__ = ["BUILTIN_TOOL_WORDS", "ToolRetrieval", "ToolSelector", "tool_retrieval_from_config"]


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
_WORD: Final = re.compile(r"[a-z][a-z0-9]+")
_PATH_TOOLS: Final = (READ_FILE, EDIT_FILE, LIST_DIRECTORY)
_PATH_WEIGHT: Final = 0.5
"""What a path in the message adds to the file tools' match weight (half a word)."""
_STOP: Final = frozenset(
    {"the", "a", "an", "and", "or", "to", "of", "in", "on", "for", "with", "is", "are", "it", "this", "that", "me",
     "you", "i", "my", "your", "be", "can", "do", "does", "what", "how", "why", "please", "tool", "tools", "as",
     "at", "by", "from", "if", "its", "not", "no", "one", "was", "were", "when", "which", "will", "all", "any",
     "use", "used", "uses", "given", "returns", "return", "args"}
)  # fmt: skip


class ToolRetrieval:
    """A :class:`ToolSelector` by the words of the request: at most :attr:`max_tools` tools, none for a plain
    question.

    A tool's words are those of its name and description, plus, for a built-in, the words of
    :data:`BUILTIN_TOOL_WORDS`. Each word of the request a tool shares weighs more the fewer tools share it, and
    a path in the message counts for the file tools; a tool's relevance is its weight divided by the best tool's
    (the best match scores 1, a tool sharing nothing 0). A turn is offered, in this order: the
    :attr:`always_include` tools; the :attr:`sticky_tool_limit` tools the conversation called most recently; then
    the most relevant others scoring at least :attr:`min_relevance_score`. :attr:`min_scored_slots` of the slots
    are kept from sticky tools for relevant ones, and a relevant tool scoring at least
    :attr:`sticky_change_score` takes the slot of the least recently called sticky tool when no slot is free.
    """

    def __init__(
        self,
        *,
        max_tools: int = 4,
        min_relevance_score: float = 0.0,
        min_scored_slots: int = 0,
        always_include: Iterable[str] = (),
        sticky_tool_limit: int = 4,
        sticky_change_score: float = 1.0,
        words: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        if max_tools < 1:
            raise ValueError(f"max_tools must be at least 1, got {max_tools}")
        for name, value in (("min_scored_slots", min_scored_slots), ("sticky_tool_limit", sticky_tool_limit)):
            if value < 0:
                raise ValueError(f"{name} must not be negative, got {value}")
        self.max_tools = max_tools
        """The most tools one turn is offered (the :attr:`always_include` ones count; they are offered even
        when there are more of them)."""
        self.min_relevance_score = min_relevance_score
        """Relevance (0 to 1, the best match is 1) a tool needs to be offered for its words."""
        self.min_scored_slots = min_scored_slots
        """Slots sticky tools leave to relevant ones when there are relevant ones to fill them."""
        self.always_include = tuple(dict.fromkeys(always_include))
        """Tools offered every turn (names not registered are skipped)."""
        self.sticky_tool_limit = sticky_tool_limit
        """How many of the tools the conversation called, most recent first, stay offered (0: none)."""
        self.sticky_change_score = sticky_change_score
        """Relevance a tool needs to take a sticky tool's slot when no slot is free (above 1: never)."""
        self.words: dict[str, frozenset[str]] = {
            name: frozenset(vocabulary) for name, vocabulary in (words or BUILTIN_TOOL_WORDS).items()
        }
        """The job words of each tool, by tool name, added to the words of its name and description."""
        self._vocabularies: dict[str, tuple[Tool, frozenset[str]]] = {}

    def select(self, prompt: str, history: Sequence[Message], tools: Mapping[str, Tool]) -> tuple[str, ...]:
        """The tools for ``prompt`` after ``history``: always-included, sticky, then the most relevant."""
        always = [name for name in self.always_include if name in tools]
        slots = max(self.max_tools - len(always), 0)
        scores = self.scores(prompt, tools)
        sticky = [name for name in _called(history) if name in tools and name not in always]
        sticky = sticky[: min(self.sticky_tool_limit, slots)]
        relevant = [
            name
            for name in sorted(scores, key=lambda name: -scores[name])
            if scores[name] >= self.min_relevance_score and name not in always and name not in sticky
        ]
        # Relevant tools take the slots sticky ones leave them, then oust the oldest sticky ones if strong enough.
        sticky = sticky[: max(slots - min(self.min_scored_slots, len(relevant)), 0)]
        room = slots - len(sticky)
        for name in relevant[room:]:
            if not sticky or scores[name] < self.sticky_change_score:
                break
            sticky.pop()
            room += 1
        return (*always, *sticky, *relevant[:room])

    def scores(self, prompt: str, tools: Mapping[str, Tool]) -> dict[str, float]:
        """Each tool sharing a word with ``prompt`` (or a file tool, for a path) → its relevance, 0 to 1."""
        # A path's pieces (``setup``, ``py``) are not words of the request: the path counts on its own.
        asked = _words(_PATH.sub(" ", prompt))
        vocabularies = {name: self._vocabulary(name, tool) & asked for name, tool in tools.items()}
        sharing: dict[str, int] = {}
        for shared in vocabularies.values():
            for word in shared:
                sharing[word] = sharing.get(word, 0) + 1
        weights = {
            name: sum(1 / sharing[word] for word in shared) for name, shared in vocabularies.items() if shared
        }
        if _PATH.search(prompt):
            for name in _PATH_TOOLS:
                if name in tools:
                    weights[name] = weights.get(name, 0.0) + _PATH_WEIGHT
        best = max(weights.values(), default=0.0)
        return {name: weight / best for name, weight in weights.items()} if best else {}

    def _vocabulary(self, name: str, tool: Tool) -> frozenset[str]:
        cached = self._vocabularies.get(name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        described = _words(name.replace("_", " ")) | _words(tool.spec.description.split("\n\n", 1)[0])
        vocabulary = described | self.words.get(name, frozenset())
        self._vocabularies[name] = (tool, vocabulary)
        return vocabulary


def tool_retrieval_from_config(loaded: ConfigSections) -> ToolRetrieval | None:
    """The selector the ``toolRetrieval`` section sets up, or ``None`` when it is not ``enabled``."""
    section = loaded.section("toolRetrieval")
    if not section.get("enabled"):
        return None
    return ToolRetrieval(
        max_tools=cast("int", section["maxTools"]),
        min_relevance_score=float(cast("float", section["minRelevanceScore"])),
        min_scored_slots=cast("int", section["minScoredSlots"]),
        always_include=cast("list[str]", section.get("alwaysInclude") or []),
        sticky_tool_limit=cast("int", section["stickyToolLimit"]),
        sticky_change_score=float(cast("float", section["stickyChangeScore"])),
    )


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _words(text: str) -> frozenset[str]:
    found = (word for word in _WORD.findall(text.lower()) if word not in _STOP)
    return frozenset(form for word in found for form in (word, _singular(word)))


def _called(history: Sequence[Message]) -> list[str]:
    """The tools the conversation called, most recent first."""
    names: dict[str, None] = {}
    for message in reversed(history):
        for part in reversed(message.parts):
            if isinstance(part, ToolCallPart):
                names.setdefault(part.name)
    return list(names)
