"""Finding and reading the rules: the project's rules file, else the config section, else the defaults."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .rules import PermissionRule, PermissionRules
from .verdict import PERMISSION_ACTIONS, PermissionAction

__all__ = ["RULES_FILE_NAMES", "PermissionConfigError", "load_permission_rules", "parse_permission_section"]

RULES_FILE_NAMES: Final = ("permissions.yaml", "permissions.yml", "permissions.json")
"""Rules file names looked for in ``<project>/.hive/``, in order; the first that exists is used."""

_SECTION = "permissions"

# Rules-file spelling (snake_case) and config.yaml spelling (camelCase) of each field of PermissionRules.
_FILE_KEYS: Final = {
    "read": "read",
    "edit": "edit",
    "bash": "bash",
    "external_directory": "external_directory",
    "mcp_tools": "mcp_tools",
    "tools": "tools",
    "read_only_tools": "read_only_tools",
    "ask_before_delete": "ask_before_delete",
    "default_action": "default_action",
}
_CONFIG_KEYS: Final = {
    "read": "read",
    "edit": "edit",
    "bash": "bash",
    "externalDirectory": "external_directory",
    "mcpTools": "mcp_tools",
    "tools": "tools",
    "readOnlyTools": "read_only_tools",
    "askBeforeDelete": "ask_before_delete",
    "defaultAction": "default_action",
}
_RULE_LISTS: Final = frozenset({"read", "edit", "bash", "external_directory", "mcp_tools", "tools"})
_RULE_KEYS: Final = ("pattern", "action", "priority", "reason")

_Path = tuple[str | int, ...]


class PermissionConfigError(ValueError):
    """The permission rules could not be read: the message names the source, the line when known, and the fault."""

    source: str
    """The file (or config section) the rules came from."""
    problem: str
    """What is wrong, in words."""
    line: int | None
    """The 1-based line of the fault, when the format reports one."""

    def __init__(self, source: str, problem: str, *, line: int | None = None) -> None:
        self.source = source
        self.problem = problem
        self.line = line
        where = source if line is None else f"{source}, line {line}"
        super().__init__(f"invalid permission rules in {where}: {problem}")


def load_permission_rules(
    project_dir: Path,
    config_section: Mapping[str, Any] | None = None,
    *,
    config_origin: str = "the permissions section of config.yaml",
) -> PermissionRules:
    """The rules that apply to the project in ``project_dir``.

    The first of ``.hive/permissions.yaml``, ``.hive/permissions.yml`` and ``.hive/permissions.json`` that exists
    wins; otherwise ``config_section`` (the value of config.yaml's ``permissions`` key, camelCase keys) when it is
    not ``None``; otherwise :meth:`PermissionRules.default`. ``config_origin`` names the section in errors.

    Raises :class:`PermissionConfigError` when the chosen source is malformed.
    """
    rules_dir = Path(project_dir) / ".hive"
    for name in RULES_FILE_NAMES:
        path = rules_dir / name
        try:
            present = path.exists() or path.is_symlink()
        except OSError as error:
            raise PermissionConfigError(str(path), f"cannot check for the file ({error.strerror})") from error
        if present:
            return _load_file(path)
    if config_section is not None:
        return parse_permission_section(config_section, source=config_origin, camel_case=True)
    return PermissionRules.default()


def parse_permission_section(section: object, *, source: str, camel_case: bool = False) -> PermissionRules:
    """Validate the value of a ``permissions`` section and build the rules from it.

    ``camel_case`` selects the config.yaml spelling of the keys (``externalDirectory`` ...) instead of the rules
    file's (``external_directory`` ...). Raises :class:`PermissionConfigError` naming ``source``.
    """
    return _Reader(source, {}, _CONFIG_KEYS if camel_case else _FILE_KEYS).section(section, (_SECTION,))


def _load_file(path: Path) -> PermissionRules:
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise PermissionConfigError(source, f"the file is not UTF-8 text ({error.reason})") from error
    except OSError as error:
        raise PermissionConfigError(source, f"cannot read the file ({error.strerror or error})") from error
    if path.suffix == ".json":
        document, lines = _parse_json(text, source), {}
    else:
        document, lines = _parse_yaml(text, source)
    reader = _Reader(source, lines, _FILE_KEYS)
    if document is None:
        raise PermissionConfigError(source, f"the file is empty; it needs a top-level '{_SECTION}' section")
    if not isinstance(document, dict):
        raise reader.error((), f"the top level must be a mapping with a '{_SECTION}' key")
    top = cast("dict[object, object]", document)
    for key in top:
        if key != _SECTION:
            raise reader.error((str(key),), f"unknown top-level key {key!r}; only '{_SECTION}' is allowed")
    if _SECTION not in top:
        raise reader.error((), f"the file has no top-level '{_SECTION}' section")
    return reader.section(top[_SECTION], (_SECTION,))


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _parse_json(text: str, source: str) -> object:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise _DuplicateKey(key)
            result[key] = value
        return result

    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as error:
        raise PermissionConfigError(source, f"not valid JSON: {error.msg}", line=error.lineno) from error
    except _DuplicateKey as error:
        raise PermissionConfigError(source, f"the key {error.key!r} appears twice in one object") from error
    except RecursionError as error:
        raise PermissionConfigError(source, "not valid JSON: nested too deeply") from error


def _parse_yaml(text: str, source: str) -> tuple[object, dict[_Path, int]]:
    try:
        document: object = yaml.safe_load(text)
        node = yaml.SafeLoader(text).get_single_node()  # parsed again for its line numbers
    except yaml.MarkedYAMLError as error:
        line = error.problem_mark.line + 1 if error.problem_mark is not None else None
        problem = error.problem or error.context or "unreadable"
        raise PermissionConfigError(source, f"not valid YAML: {problem}", line=line) from error
    except yaml.YAMLError as error:
        raise PermissionConfigError(source, f"not valid YAML: {error}") from error
    except RecursionError as error:
        raise PermissionConfigError(source, "not valid YAML: nested too deeply") from error
    lines: dict[_Path, int] = {}
    if node is not None:
        _map_lines(node, (), lines, set(), source)
    return document, lines


def _map_lines(node: Node, at: _Path, lines: dict[_Path, int], seen: set[int], source: str) -> None:
    """Record the line of every value under ``node`` by its key path; refuse a key given twice."""
    lines.setdefault(at, node.start_mark.line + 1)
    if id(node) in seen:  # an alias of a node already walked (possibly itself): no need to go round again
        return
    seen.add(id(node))
    if isinstance(node, MappingNode):
        keys: set[str] = set()
        pairs: list[tuple[Node, Node]] = node.value
        for key_node, value_node in pairs:
            if not isinstance(key_node, ScalarNode):  # a list or mapping as a key: the validator rejects it
                continue
            key = str(key_node.value)
            if key in keys and key != "<<":
                raise PermissionConfigError(
                    source, f"the key {key!r} appears twice in one mapping", line=key_node.start_mark.line + 1
                )
            keys.add(key)
            lines.setdefault((*at, key), key_node.start_mark.line + 1)
            _map_lines(value_node, (*at, key), lines, seen, source)
    elif isinstance(node, SequenceNode):
        items: list[Node] = node.value
        for index, item in enumerate(items):
            _map_lines(item, (*at, index), lines, seen, source)


class _Reader:
    """Validates a parsed ``permissions`` section, reporting faults by key path (and line, when known)."""

    def __init__(self, source: str, lines: Mapping[_Path, int], keys: Mapping[str, str]) -> None:
        self._source = source
        self._lines = lines
        self._keys = keys
        # A key written in the other format's spelling gets a hint naming this format's spelling.
        other = _FILE_KEYS if keys is _CONFIG_KEYS else _CONFIG_KEYS
        mine = {field: spelling for spelling, field in keys.items()}
        self._respell = {
            spelling: mine[field] for spelling, field in other.items() if spelling != mine[field]
        }

    def error(self, at: _Path, problem: str) -> PermissionConfigError:
        line: int | None = None
        for end in range(len(at), -1, -1):
            line = self._lines.get(at[:end])
            if line is not None:
                break
        return PermissionConfigError(self._source, problem, line=line)

    def section(self, value: object, at: _Path) -> PermissionRules:
        if value is None:
            return PermissionRules()
        if not isinstance(value, Mapping):
            raise self.error(at, f"'{_dotted(at)}' must be a mapping of rule categories")
        section = cast("Mapping[object, object]", value)
        fields: dict[str, Any] = {}
        for key, item in section.items():
            field = self._keys.get(key) if isinstance(key, str) else None
            if field is None:
                raise self.error((*at, str(key)), self._unknown_key(key, at))
            where = (*at, str(key))
            if field in _RULE_LISTS:
                fields[field] = self._rules(item, where)
            elif field == "read_only_tools":
                fields[field] = self._names(item, where)
            elif field == "ask_before_delete":
                if not isinstance(item, bool):
                    raise self.error(where, f"'{_dotted(where)}' must be true or false, not {item!r}")
                fields[field] = item
            else:
                fields[field] = self._action(item, where)
        return PermissionRules(**fields)

    def _unknown_key(self, key: object, at: _Path) -> str:
        problem = f"unknown key {key!r} in '{_dotted(at)}'"
        hint = self._respell.get(key) if isinstance(key, str) else None
        if hint is not None:
            return f"{problem}; here it is spelled {hint!r}"
        return f"{problem}; expected one of {', '.join(self._keys)}"

    def _rules(self, value: object, at: _Path) -> tuple[PermissionRule, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.error(at, f"'{_dotted(at)}' must be a list of rules")
        items = cast("list[object]", value)
        return tuple(self._rule(item, (*at, index)) for index, item in enumerate(items))

    def _rule(self, value: object, at: _Path) -> PermissionRule:
        if not isinstance(value, Mapping):
            raise self.error(
                at, f"'{_dotted(at)}' must be a mapping with a pattern (and action, priority, reason)"
            )
        rule = cast("Mapping[object, object]", value)
        for key in rule:
            if key not in _RULE_KEYS:
                raise self.error(
                    (*at, str(key)),
                    f"unknown key {key!r} in rule '{_dotted(at)}'; a rule has {', '.join(_RULE_KEYS)}",
                )
        pattern = rule.get("pattern")
        if pattern is None:
            raise self.error(at, f"rule '{_dotted(at)}' has no pattern")
        if not isinstance(pattern, str) or not pattern:
            raise self.error((*at, "pattern"), f"the pattern of rule '{_dotted(at)}' must be non-empty text")
        action = self._action(rule.get("action", "ask"), (*at, "action"))
        priority = rule.get("priority", 0)
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise self.error(
                (*at, "priority"), f"the priority of rule '{_dotted(at)}' must be a whole number"
            )
        reason = rule.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise self.error((*at, "reason"), f"the reason of rule '{_dotted(at)}' must be text")
        return PermissionRule(pattern=pattern, action=action, priority=priority, reason=reason)

    def _action(self, value: object, at: _Path) -> PermissionAction:
        for action in PERMISSION_ACTIONS:
            if value == action:
                return action
        raise self.error(at, f"'{_dotted(at)}' must be one of {', '.join(PERMISSION_ACTIONS)}, not {value!r}")

    def _names(self, value: object, at: _Path) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.error(at, f"'{_dotted(at)}' must be a list of tool-name patterns")
        items = cast("list[object]", value)
        names: list[str] = []
        for index, item in enumerate(items):
            if not isinstance(item, str) or not item:
                raise self.error(
                    (*at, index), f"'{_dotted((*at, index))}' must be a non-empty tool-name pattern"
                )
            names.append(item)
        return tuple(names)


def _dotted(at: _Path) -> str:
    text = ""
    for part in at:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "(top level)"
