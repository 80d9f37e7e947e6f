"""Reading a YAML or JSON file with the line and column of every key and value.

One reader serves ``config.yaml``, the permission rules and the plugins files. It refuses what a plain parser
lets through: a key given twice in one mapping (plain YAML and JSON keep the last silently), an alias that
contains itself, a tag the safe loader does not know. Every fault is raised as the error class the caller
names, a :class:`~hive_core.errors.UserError` subclass built with the shape they all share
(``problem, *, source, line, column``), so a fault the reader finds and one the caller's own checks find (with
:meth:`Document.key_mark`) point at the file the same way.
"""

from __future__ import annotations

import bisect
import json
from pathlib import Path
from typing import Final
from typing import Literal
from typing import NamedTuple
from typing import Protocol
from typing import cast

import msgspec
import yaml
from yaml.nodes import MappingNode
from yaml.nodes import Node
from yaml.nodes import ScalarNode
from yaml.nodes import SequenceNode

from hive_core.errors import UserError

__all__ = ["Document", "Format", "KeyPath", "Mark", "parse_document", "read_document", "read_text"]

KeyPath = tuple[str | int, ...]
"""Where a value sits: mapping keys (text) and list indexes (numbers) from the top of the document."""

Format = Literal["yaml", "json"]
"""How a file is written: ``.json`` files are JSON, every other file YAML."""

_MERGE_TAG: Final = "tag:yaml.org,2002:merge"
_SCALARS: Final = json.JSONDecoder()
"""Decodes the strings, numbers and constants of a JSON text, as ``json.loads`` would."""


class Mark(NamedTuple):
    """A position in the file, 1-based; both parts are ``None`` when the position is not known."""

    line: int | None
    """The line."""
    column: int | None
    """The column, in characters."""


_NOWHERE: Final = Mark(None, None)


class Document(msgspec.Struct, kw_only=True):
    """A parsed file: its value and where each part of it was written.

    A value that was never a file (a section of an already-merged configuration) is a document without
    positions: ``Document(source=..., value=...)``.
    """

    source: str
    """The file's path (or the value's origin), as shown in messages."""
    value: object
    """The document (``None`` when the file is empty)."""
    keys: dict[KeyPath, Mark] = msgspec.field(default_factory=dict[KeyPath, Mark])
    """The position of each mapping key, by the path of its value."""
    values: dict[KeyPath, Mark] = msgspec.field(default_factory=dict[KeyPath, Mark])
    """The position of each value (the document itself at ``()``)."""
    raw: dict[KeyPath, str] = msgspec.field(default_factory=dict[KeyPath, str])
    """The source text of each scalar, as written (before YAML turned ``0x1F`` into 31, ``no`` into false)."""

    def key_mark(self, path: KeyPath) -> Mark:
        """Where the key of ``path`` was written, else its value, else its nearest ancestor's."""
        for depth in range(len(path), -1, -1):
            found = self.keys.get(path[:depth]) or self.values.get(path[:depth])
            if found is not None:
                return found
        return _NOWHERE

    def value_mark(self, path: KeyPath) -> Mark:
        """Where the value of ``path`` was written, else its key, else its nearest ancestor's."""
        return self.values.get(path) or self.key_mark(path)


def read_text(path: Path, *, error: type[UserError]) -> str | None:
    """The text of the file at ``path`` (a UTF-8 byte-order mark dropped); ``None`` if there is none.

    An unreadable file, or one that is not UTF-8, raises ``error`` naming it.
    """
    source = str(path)
    try:
        return path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError as exc:
        raise error(f"the file is not UTF-8 text ({exc.reason})", source=source) from exc
    except OSError as exc:
        raise error(f"cannot read the file ({exc.strerror or exc})", source=source) from exc


def read_document(path: Path, *, error: type[UserError]) -> Document | None:
    """Parse the file at ``path``, as JSON when it ends in ``.json``, else as YAML; ``None`` if there is none.

    Any fault (unreadable, not UTF-8, malformed, a key given twice) raises ``error`` naming the file, and the
    line and column when there is one.
    """
    text = read_text(path, error=error)
    if text is None:
        return None
    return parse_document(
        text, source=str(path), format="json" if path.suffix == ".json" else "yaml", error=error
    )


def parse_document(text: str, *, source: str, format: Format = "yaml", error: type[UserError]) -> Document:
    """Parse ``text`` (``source`` names it in errors); a fault raises ``error`` with its position."""
    if format == "json":
        return _parse_json(text, source, error)
    return _parse_yaml(text, source, error)


# -- YAML -----------------------------------------------------------------------------------------------------


def _parse_yaml(text: str, source: str, error: type[UserError]) -> Document:
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        document = Document(source=source, value=None)
        if root is not None:
            document.value = _YamlBuilder(loader, document, error).build(root, (), ())
        return document
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "unreadable"
        if exc.context and exc.problem:
            problem = f"{exc.context}: {exc.problem}"
        if "'\\t'" in problem:
            problem += " (YAML indents with spaces, not tabs)"
        raise error(
            f"not valid YAML: {problem}",
            source=source,
            line=mark.line + 1 if mark is not None else None,
            column=mark.column + 1 if mark is not None else None,
        ) from exc
    except yaml.YAMLError as exc:
        raise error(f"not valid YAML: {exc}", source=source) from exc
    except RecursionError as exc:
        raise error("not valid YAML: nested too deeply", source=source) from exc


def _node_mark(node: Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


class _Constructor(Protocol):
    """The one loader method used, typed (PyYAML's stubs leave it untyped)."""

    def construct_object(self, node: Node, deep: bool = False) -> object: ...


class _YamlBuilder:
    """Builds plain values from the node tree, recording marks; scalars are constructed by the safe loader."""

    def __init__(self, loader: yaml.SafeLoader, document: Document, error: type[UserError]) -> None:
        self.loader = loader
        self.document = document
        self.error_type = error

    def construct(self, node: ScalarNode) -> object:
        """The scalar's value as the safe loader types it (``10`` a number, ``true`` a boolean...)."""
        return cast("_Constructor", self.loader).construct_object(node, deep=True)

    def error(self, node: Node, problem: str) -> UserError:
        mark = _node_mark(node)
        return self.error_type(problem, source=self.document.source, line=mark.line, column=mark.column)

    def build(self, node: Node, path: KeyPath, open_nodes: tuple[int, ...]) -> object:
        self.document.values[path] = _node_mark(node)
        if isinstance(node, ScalarNode):
            self.document.raw[path] = str(node.value)
            return self.construct(node)
        if id(node) in open_nodes:  # an alias of one of its own ancestors: the value would be infinite
            raise self.error(node, "not valid YAML here: an alias refers to a node that contains it")
        inside = (*open_nodes, id(node))
        if isinstance(node, SequenceNode):
            items: list[Node] = node.value
            return [self.build(item, (*path, index), inside) for index, item in enumerate(items)]
        if isinstance(node, MappingNode):
            return self.mapping(node, path, inside)
        raise self.error(node, "unsupported YAML node")

    def mapping(self, node: MappingNode, path: KeyPath, open_nodes: tuple[int, ...]) -> dict[object, object]:
        result: dict[object, object] = {}
        pairs: list[tuple[Node, Node]] = node.value
        merged = [value_node for key_node, value_node in pairs if key_node.tag == _MERGE_TAG]
        own = [(key_node, value_node) for key_node, value_node in pairs if key_node.tag != _MERGE_TAG]
        # ``<<: *base`` (or a list of them, the first winning) goes in first; the mapping's own keys override.
        for value_node in reversed(merged):
            sources: list[Node] = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for source in reversed(sources):
                if not isinstance(source, MappingNode):
                    raise self.error(
                        source, "not valid YAML: '<<' must merge a mapping or a list of mappings"
                    )
                if id(source) in open_nodes:
                    raise self.error(source, "not valid YAML here: a mapping merges itself")
                result.update(self.mapping(source, path, (*open_nodes, id(source))))
        seen: set[object] = set()
        for key_node, value_node in own:
            if not isinstance(key_node, ScalarNode):
                raise self.error(key_node, "a mapping key must be a plain value, not a list or a mapping")
            key = self.construct(key_node)
            if key in seen:
                raise self.error(
                    key_node, f"not valid YAML: the key {key_node.value!r} appears twice in one mapping"
                )
            seen.add(key)
            at = (*path, str(key))
            self.document.keys[at] = _node_mark(key_node)
            result[key] = self.build(value_node, at, open_nodes)
        return result


# -- JSON -----------------------------------------------------------------------------------------------------


def _parse_json(text: str, source: str, error: type[UserError]) -> Document:
    try:
        json.loads(text)  # for the standard library's words and position when the text is not JSON
    except json.JSONDecodeError as exc:
        raise error(f"not valid JSON: {exc.msg}", source=source, line=exc.lineno, column=exc.colno) from exc
    except RecursionError as exc:
        raise error("not valid JSON: nested too deeply", source=source) from exc
    document = Document(source=source, value=None)
    try:
        document.value = _JsonBuilder(text, document, error).build()
    except RecursionError as exc:
        raise error("not valid JSON: nested too deeply", source=source) from exc
    return document


class _JsonBuilder:
    """Walks text already known to be JSON, building its value and recording where each part starts."""

    def __init__(self, text: str, document: Document, error: type[UserError]) -> None:
        self.text = text
        self.document = document
        self.error_type = error
        self.line_starts = [0, *(index + 1 for index, char in enumerate(text) if char == "\n")]

    def mark(self, index: int) -> Mark:
        line = bisect.bisect_right(self.line_starts, index)
        return Mark(line, index - self.line_starts[line - 1] + 1)

    def skip(self, index: int) -> int:
        while index < len(self.text) and self.text[index] in " \t\n\r":
            index += 1
        return index

    def build(self) -> object:
        value, _ = self.value(self.skip(0), ())
        return value

    def value(self, index: int, path: KeyPath) -> tuple[object, int]:
        """The value starting at ``index`` and the index just after it."""
        self.document.values[path] = self.mark(index)
        char = self.text[index]
        if char == "{":
            return self.object(index + 1, path)
        if char == "[":
            items: list[object] = []
            index = self.skip(index + 1)
            while self.text[index] != "]":
                item, index = self.value(index, (*path, len(items)))
                items.append(item)
                index = self.after_item(index)
            return items, index + 1
        value, end = cast("tuple[object, int]", _SCALARS.raw_decode(self.text, index))
        self.document.raw[path] = self.text[index:end]
        return value, end

    def object(self, index: int, path: KeyPath) -> tuple[dict[str, object], int]:
        result: dict[str, object] = {}
        index = self.skip(index)
        while self.text[index] != "}":
            key_start = index
            key, index = cast("tuple[str, int]", _SCALARS.raw_decode(self.text, index))
            if key in result:
                mark = self.mark(key_start)
                raise self.error_type(
                    f"not valid JSON: the key {key!r} appears twice in one object",
                    source=self.document.source,
                    line=mark.line,
                    column=mark.column,
                )
            self.document.keys[(*path, key)] = self.mark(key_start)
            index = self.skip(self.skip(index) + 1)  # past the colon
            result[key], index = self.value(index, (*path, key))
            index = self.after_item(index)
        return result, index + 1

    def after_item(self, index: int) -> int:
        """Past the comma after an item (if there is one) and the blanks around it."""
        index = self.skip(index)
        return self.skip(index + 1) if self.text[index] == "," else index
