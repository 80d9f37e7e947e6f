"""Reading a YAML configuration file with the line and column of every key and value."""

from __future__ import annotations

from pathlib import Path
from typing import Final, NamedTuple, Protocol, cast

import msgspec
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import ConfigError

__all__ = ["KeyPath", "Mark", "YamlDocument", "parse_yaml", "read_yaml"]

KeyPath = tuple[str | int, ...]
"""Where a value sits: mapping keys (text) and list indexes (numbers) from the top of the document."""

_MERGE_TAG: Final = "tag:yaml.org,2002:merge"


class Mark(NamedTuple):
    """A position in the file, 1-based."""

    line: int
    column: int


class YamlDocument(msgspec.Struct, kw_only=True):
    """A parsed file: its value and where each part of it was written."""

    source: str
    """The file's path, as shown in messages."""
    value: object
    """The document (``None`` when the file is empty)."""
    keys: dict[KeyPath, Mark]
    """The position of each mapping key, by the path of its value."""
    values: dict[KeyPath, Mark]
    """The position of each value (the document itself at ``()``)."""
    raw: dict[KeyPath, str]
    """The source text of each scalar, as written (before YAML turned ``0x1F`` into 31, ``no`` into false)."""

    def key_mark(self, path: KeyPath) -> Mark | None:
        """Where the key of ``path`` was written, else its value, else its nearest ancestor's."""
        for depth in range(len(path), -1, -1):
            found = self.keys.get(path[:depth]) or self.values.get(path[:depth])
            if found is not None:
                return found
        return None

    def value_mark(self, path: KeyPath) -> Mark | None:
        """Where the value of ``path`` was written, else its key, else its nearest ancestor's."""
        return self.values.get(path) or self.key_mark(path)


def read_yaml(path: Path) -> YamlDocument | None:
    """Parse the file at ``path``; ``None`` if there is none. Raises :class:`ConfigError` naming the file."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError as error:
        raise ConfigError(f"the file is not UTF-8 text ({error.reason})", source=source) from error
    except OSError as error:
        raise ConfigError(f"cannot read the file ({error.strerror or error})", source=source) from error
    return parse_yaml(text, source)


def parse_yaml(text: str, source: str) -> YamlDocument:
    """Parse ``text``; a syntax error, a key given twice or an unsupported tag raises :class:`ConfigError`."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        document = YamlDocument(source=source, value=None, keys={}, values={}, raw={})
        if root is not None:
            document.value = _Builder(loader, document).build(root, (), ())
        return document
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "unreadable"
        if error.context and error.problem:
            problem = f"{error.context}: {error.problem}"
        if "'\\t'" in problem:
            problem += " (YAML indents with spaces, not tabs)"
        raise ConfigError(
            f"not valid YAML: {problem}",
            source=source,
            line=mark.line + 1 if mark is not None else None,
            column=mark.column + 1 if mark is not None else None,
        ) from error
    except yaml.YAMLError as error:
        raise ConfigError(f"not valid YAML: {error}", source=source) from error
    except RecursionError as error:
        raise ConfigError("not valid YAML: nested too deeply", source=source) from error


def _mark(node: Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


class _Constructor(Protocol):
    """The one loader method used, typed (PyYAML's stubs leave it untyped)."""

    def construct_object(self, node: Node, deep: bool = False) -> object: ...


class _Builder:
    """Builds plain values from the node tree, recording marks; scalars are constructed by the safe loader."""

    def __init__(self, loader: yaml.SafeLoader, document: YamlDocument) -> None:
        self.loader = loader
        self.document = document

    def construct(self, node: ScalarNode) -> object:
        """The scalar's value as the safe loader types it (``10`` a number, ``true`` a boolean...)."""
        return cast("_Constructor", self.loader).construct_object(node, deep=True)

    def error(self, node: Node, problem: str) -> ConfigError:
        mark = _mark(node)
        return ConfigError(problem, source=self.document.source, line=mark.line, column=mark.column)

    def build(self, node: Node, path: KeyPath, open_nodes: tuple[int, ...]) -> object:
        self.document.values[path] = _mark(node)
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
                raise self.error(key_node, f"the key {key_node.value!r} appears twice in one mapping")
            seen.add(key)
            at = (*path, str(key))
            self.document.keys[at] = _mark(key_node)
            result[key] = self.build(value_node, at, open_nodes)
        return result
