"""Finding and reading the rules: the project's rules file, else the config section, else the defaults.

A rules file or section adds to the built-in defaults (:meth:`PermissionRules.default`): its rules are listed
before the defaults' in each category, so at equal priority the project's rule wins, while the defaults' guards
with a higher priority (``rm -rf``, ``sudo``, secrets) still apply; a field it sets (``default_action``,
``ask_before_delete``) replaces the default's. ``inherit: false`` in the section makes it the whole rule set.

A project the user has not trusted (:class:`~hive_core.config.TrustStore`) cannot lower protection with its own
rules: its rules file and the ``permissions`` section of its ``config.yaml`` only tighten the user's rules (the
global section, else the defaults). Their deny rules apply; their ask rules apply below every deny rule of the
category; their allow rules, ``inherit: false``, a wider ``default_action``, ``ask_before_delete: false`` and
``read_only_tools`` are ignored (:func:`loosening_settings` lists them).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import Final
from typing import cast

import msgspec

from hive_core.approvals import PERMISSION_ACTIONS
from hive_core.approvals import PermissionAction
from hive_core.config.paths import RULES_FILE_NAMES
from hive_core.config.paths import hive_home
from hive_core.config.structured import Document
from hive_core.config.structured import KeyPath
from hive_core.config.structured import read_document
from hive_core.config.trust import IgnoredSetting
from hive_core.config.trust import TrustStore
from hive_core.errors import UserError

from .glob import path_pattern_problem
from .rules import PermissionRule
from .rules import PermissionRules

__all__ = [
    "RULES_FILE_NAMES",
    "PermissionConfigError",
    "extend_rules",
    "load_permission_rules",
    "loosening_settings",
    "parse_permission_section",
    "parse_tightening_rules",
]


_SECTION = "permissions"

# Rules-file spelling (snake_case) and config.yaml spelling (camelCase) of each field of PermissionRules.
_FILE_KEYS: Final = {
    "read": "read",
    "edit": "edit",
    "bash": "bash",
    "external_directory": "external_directory",
    "mcp_tools": "mcp_tools",
    "tools": "tools",
    "web": "web",
    "read_only_tools": "read_only_tools",
    "ask_before_delete": "ask_before_delete",
    "default_action": "default_action",
    "inherit": "inherit",
}
_CONFIG_KEYS: Final = {
    "read": "read",
    "edit": "edit",
    "bash": "bash",
    "externalDirectory": "external_directory",
    "mcpTools": "mcp_tools",
    "tools": "tools",
    "web": "web",
    "readOnlyTools": "read_only_tools",
    "askBeforeDelete": "ask_before_delete",
    "defaultAction": "default_action",
    "inherit": "inherit",
}
_RULE_LISTS: Final = frozenset({"read", "edit", "bash", "external_directory", "mcp_tools", "tools", "web"})
_PATH_RULE_LISTS: Final = frozenset({"read", "edit", "external_directory"})
_RULE_KEYS: Final = ("pattern", "action", "priority", "reason")


class PermissionConfigError(UserError, ValueError):
    """The permission rules cannot be used: the message names the source, the line and column when known, and
    the fault."""

    def __str__(self) -> str:
        position = f" in {self.source}" if self.source is not None else ""
        if self.line is not None:
            position += (
                f", line {self.line}" if self.column is None else f", line {self.line}, column {self.column}"
            )
        return f"invalid permission rules{position}: {self.problem}"


def load_permission_rules(
    project_dir: Path,
    config_section: Mapping[str, Any] | None = None,
    *,
    config_origin: str = "the permissions section of config.yaml",
    trusted: bool | None = None,
    project_section: Mapping[str, Any] | None = None,
    project_origin: str | None = None,
) -> PermissionRules:
    """The rules that apply to the project in ``project_dir``.

    For a ``trusted`` project (``None``: as the trust store in the hive home says): the first of
    ``.hive/permissions.yaml``, ``.hive/permissions.yml`` and ``.hive/permissions.json`` that exists wins;
    otherwise ``config_section`` (the value of config.yaml's ``permissions`` key, camelCase keys) when it is not
    ``None``; either adds to :meth:`PermissionRules.default` unless it says ``inherit: false`` (see the module);
    with neither, the defaults alone. ``config_origin`` names the section in errors.

    For a project not trusted, ``config_section`` is the user's own (the global file's), and the project's rules
    file and ``project_section`` (its ``config.yaml``'s section, read from ``project_origin``) only tighten it
    (see the module).

    Raises :class:`PermissionConfigError` when a source is malformed.
    """
    if trusted is None:
        trusted = TrustStore(hive_home()).is_trusted(Path(project_dir))
    path = _rules_file(Path(project_dir))
    if trusted:
        if path is not None:
            return _inherited(*_load_file(path))
        section = config_section if config_section is not None else project_section
        if section is not None:
            return _from_section(section, config_origin)
        return PermissionRules.default()
    rules = (
        _from_section(config_section, config_origin)
        if config_section is not None
        else PermissionRules.default()
    )
    for added, reader in _project_sources(path, project_section, project_origin):
        rules = _tightened(rules, added, reader.given)
    return rules


def loosening_settings(
    project_dir: Path,
    project_section: Mapping[str, Any] | None = None,
    project_origin: str | None = None,
) -> list[IgnoredSetting]:
    """What the project's own rules (its rules file, and ``project_section`` from its ``config.yaml``) say that
    would lower protection, each with its file and line: ignored unless the project is trusted."""
    found: list[IgnoredSetting] = []
    for added, reader in _project_sources(_rules_file(Path(project_dir)), project_section, project_origin):
        source = reader.source
        spelled = {field: spelling for spelling, field in reader.keys.items()}

        def note(setting: str, at: KeyPath, *, source: str = source, reader: _Reader = reader) -> None:
            found.append(IgnoredSetting(setting=setting, source=source, line=reader.line(at)))

        if not reader.inherit:
            note("permissions inherit: false", (*reader.root, spelled["inherit"]))
        if "default_action" in reader.given and _WIDTH[added.default_action] > _WIDTH["ask"]:
            note(
                f"permissions default_action: {added.default_action}",
                (*reader.root, spelled["default_action"]),
            )
        if "ask_before_delete" in reader.given and not added.ask_before_delete:
            note("permissions ask_before_delete: false", (*reader.root, spelled["ask_before_delete"]))
        for index, name in enumerate(added.read_only_tools):
            note(f"permissions read_only_tools '{name}'", (*reader.root, spelled["read_only_tools"], index))
        for field in sorted(_RULE_LISTS):
            for index, rule in enumerate(getattr(added, field)):
                if rule.action == "allow":
                    note(f"permissions {field} allow '{rule.pattern}'", (*reader.root, spelled[field], index))
    return found


_WIDTH: Final[dict[PermissionAction, int]] = {"deny": 0, "ask": 1, "allow": 2}


def _rules_file(rules_dir: Path) -> Path | None:
    for name in RULES_FILE_NAMES:
        path = rules_dir / ".hive" / name
        try:
            present = path.exists() or path.is_symlink()
        except OSError as error:
            raise PermissionConfigError(
                f"cannot check for the file ({error.strerror})", source=str(path)
            ) from error
        if present:
            return path
    return None


def _from_section(section: Mapping[str, Any], origin: str) -> PermissionRules:
    document = Document(source=origin, value=section)
    reader = _Reader(document, _CONFIG_KEYS)
    return _inherited(reader.section(section, (_SECTION,)), reader)


def _project_sources(
    path: Path | None, section: Mapping[str, Any] | None, origin: str | None
) -> list[tuple[PermissionRules, _Reader]]:
    """The project's own rule sources as written: its ``config.yaml`` section (read again from ``origin`` for
    its lines when that is a file) and its rules file."""
    sources: list[tuple[PermissionRules, _Reader]] = []
    if section is not None:
        document = Document(source=origin or "the permissions section of .hive/config.yaml", value=section)
        root: KeyPath = ()
        if origin is not None:
            read = _read_quietly(Path(origin))
            if read is not None and isinstance(read.value, dict):
                for key in cast("dict[object, object]", read.value):
                    if isinstance(key, str) and key.lower() == _SECTION:
                        document, root = read, (key,)
        reader = _Reader(document, _CONFIG_KEYS, root=root)
        sources.append((reader.section(section, root or (_SECTION,)), reader))
    if path is not None:
        sources.append(_load_file(path))
    return sources


def _read_quietly(path: Path) -> Document | None:
    try:
        return read_document(path, error=PermissionConfigError)
    except PermissionConfigError:
        return None


def _tightened(base: PermissionRules, added: PermissionRules, given: set[str]) -> PermissionRules:
    """``base`` with what in ``added`` only tightens it: deny rules first (at their priority), ask rules after
    the base's and below its lowest deny rule of the category, a stricter ``default_action``,
    ``ask_before_delete: true``."""
    fields: dict[str, object] = {}
    for name in _RULE_LISTS:
        mine: tuple[PermissionRule, ...] = getattr(base, name)
        theirs: tuple[PermissionRule, ...] = getattr(added, name)
        denies = [rule.priority for rule in mine if rule.action == "deny"]
        ceiling = min(denies) - 1 if denies else None
        asks = tuple(
            rule
            if ceiling is None or rule.priority <= ceiling
            else msgspec.structs.replace(rule, priority=ceiling)
            for rule in theirs
            if rule.action == "ask"
        )
        fields[name] = (*(rule for rule in theirs if rule.action == "deny"), *mine, *asks)
    fields["read_only_tools"] = base.read_only_tools
    fields["ask_before_delete"] = base.ask_before_delete or (
        "ask_before_delete" in given and added.ask_before_delete
    )
    stricter = "default_action" in given and _WIDTH[added.default_action] < _WIDTH[base.default_action]
    fields["default_action"] = added.default_action if stricter else base.default_action
    return PermissionRules(**fields)  # pyright: ignore[reportArgumentType]


def extend_rules(base: PermissionRules, added: PermissionRules, given: frozenset[str]) -> PermissionRules:
    """``added`` over ``base``: its rules first in each category, then the base's; the other fields named in
    ``given`` from ``added``, the rest from ``base``."""
    fields: dict[str, object] = {}
    for name in base.__struct_fields__:
        mine, theirs = getattr(added, name), getattr(base, name)
        if name in _RULE_LISTS or name == "read_only_tools":
            fields[name] = (*mine, *(item for item in theirs if item not in mine))
        else:
            fields[name] = mine if name in given else theirs
    return PermissionRules(**fields)  # pyright: ignore[reportArgumentType]


def _inherited(rules: PermissionRules, reader: _Reader) -> PermissionRules:
    if not reader.inherit:
        return rules
    return extend_rules(PermissionRules.default(), rules, frozenset(reader.given))


def parse_permission_section(section: object, *, source: str, camel_case: bool = False) -> PermissionRules:
    """Validate the value of a ``permissions`` section and build the rules from it, as written (without the
    defaults it would add to; ``inherit`` is checked and otherwise ignored here).

    ``camel_case`` selects the config.yaml spelling of the keys (``externalDirectory`` ...) instead of the rules
    file's (``external_directory`` ...). Raises :class:`PermissionConfigError` naming ``source``.
    """
    document = Document(source=source, value=section)
    return _Reader(document, _CONFIG_KEYS if camel_case else _FILE_KEYS).section(section, (_SECTION,))


def parse_tightening_rules(
    document: Document, value: object, at: KeyPath, *, camel_case: bool = False
) -> PermissionRules:
    """The rule lists written at ``at`` of ``document`` (its value ``value``), in the shape of a ``permissions``
    section, that may only tighten other rules: every rule asks or denies, and no other key (``defaultAction``,
    ``inherit``...) is set. An agent definition's ``rules`` are such a section.

    Raises :class:`PermissionConfigError` naming the line of a malformed rule, an ``allow`` rule or another key.
    """
    keys = _CONFIG_KEYS if camel_case else _FILE_KEYS
    reader = _Reader(document, keys, root=at)
    rules = reader.section(value, at)
    for key in cast("Mapping[object, object]", value or {}):
        field = keys.get(str(key))
        if field not in _RULE_LISTS:
            lists = ", ".join(spelling for spelling, name in keys.items() if name in _RULE_LISTS)
            raise reader.error((*at, str(key)), f"{key!r} cannot be set here: only rule lists ({lists})")
        for index, rule in enumerate(cast("tuple[PermissionRule, ...]", getattr(rules, field))):
            if rule.action == "allow":
                raise reader.error(
                    (*at, str(key), index, "action"),
                    f"rule '{_dotted((*at, str(key), index))}' allows: an agent's rules can only ask or deny, "
                    "on top of the project's",
                )
    return rules


def _load_file(path: Path) -> tuple[PermissionRules, _Reader]:
    document = read_document(path, error=PermissionConfigError)
    if document is None:  # a dangling link
        raise PermissionConfigError("cannot read the file (it is a link to nothing)", source=str(path))
    reader = _Reader(document, _FILE_KEYS, root=(_SECTION,))
    if document.value is None:
        raise PermissionConfigError(
            f"the file is empty; it needs a top-level '{_SECTION}' section", source=document.source
        )
    if not isinstance(document.value, dict):
        raise reader.error((), f"the top level must be a mapping with a '{_SECTION}' key")
    top = cast("dict[object, object]", document.value)
    for key in top:
        if key != _SECTION:
            raise reader.error((str(key),), f"unknown top-level key {key!r}; only '{_SECTION}' is allowed")
    if _SECTION not in top:
        raise reader.error((), f"the file has no top-level '{_SECTION}' section")
    return reader.section(top[_SECTION], (_SECTION,)), reader


class _Reader:
    """Validates a parsed ``permissions`` section, reporting faults by key path (and position, when known)."""

    def __init__(self, document: Document, keys: Mapping[str, str], *, root: KeyPath = ()) -> None:
        self._document = document
        self._keys = keys
        self.keys = keys
        """Spelling → field of this format."""
        self.source = document.source
        """Where the section was read from."""
        self.root: KeyPath = root or (_SECTION,)
        """The key path of the section in its document."""
        # A key written in the other format's spelling gets a hint naming this format's spelling.
        other = _FILE_KEYS if keys is _CONFIG_KEYS else _CONFIG_KEYS
        mine = {field: spelling for spelling, field in keys.items()}
        self._respell = {
            spelling: mine[field] for spelling, field in other.items() if spelling != mine[field]
        }
        self.inherit = True
        """Whether the section adds to the defaults (``inherit``, default true)."""
        self.given: set[str] = set()
        """The fields the section set."""

    def line(self, at: KeyPath) -> int | None:
        """The line the key at ``at`` was written on, when known."""
        return self._document.key_mark(at).line

    def error(self, at: KeyPath, problem: str) -> PermissionConfigError:
        mark = self._document.key_mark(at)
        return PermissionConfigError(
            problem, source=self._document.source, line=mark.line, column=mark.column
        )

    def section(self, value: object, at: KeyPath) -> PermissionRules:
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
            if field == "inherit":
                if not isinstance(item, bool):
                    raise self.error(where, f"'{_dotted(where)}' must be true or false, not {item!r}")
                self.inherit = item
                continue
            self.given.add(field)
            if field in _RULE_LISTS:
                fields[field] = self._rules(item, where, paths=field in _PATH_RULE_LISTS)
            elif field == "read_only_tools":
                fields[field] = self._names(item, where)
            elif field == "ask_before_delete":
                if not isinstance(item, bool):
                    raise self.error(where, f"'{_dotted(where)}' must be true or false, not {item!r}")
                fields[field] = item
            else:
                fields[field] = self._action(item, where)
        return PermissionRules(**fields)

    def _unknown_key(self, key: object, at: KeyPath) -> str:
        problem = f"unknown key {key!r} in '{_dotted(at)}'"
        hint = self._respell.get(key) if isinstance(key, str) else None
        if hint is not None:
            return f"{problem}; here it is spelled {hint!r}"
        return f"{problem}; expected one of {', '.join(self._keys)}"

    def _list(self, value: object, at: KeyPath, what: str) -> list[object]:
        """The items of a list field; none when it is null."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(at, f"'{_dotted(at)}' must be a list of {what}")
        return cast("list[object]", value)

    def _rules(self, value: object, at: KeyPath, *, paths: bool) -> tuple[PermissionRule, ...]:
        items = self._list(value, at, "rules")
        return tuple(self._rule(item, (*at, index), paths=paths) for index, item in enumerate(items))

    def _rule(self, value: object, at: KeyPath, *, paths: bool) -> PermissionRule:
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
        problem = path_pattern_problem(pattern) if paths else None
        if problem is not None:
            raise self.error(
                (*at, "pattern"), f"the pattern of rule '{_dotted(at)}' cannot be used: {problem}"
            )
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

    def _action(self, value: object, at: KeyPath) -> PermissionAction:
        for action in PERMISSION_ACTIONS:
            if value == action:
                return action
        raise self.error(at, f"'{_dotted(at)}' must be one of {', '.join(PERMISSION_ACTIONS)}, not {value!r}")

    def _names(self, value: object, at: KeyPath) -> tuple[str, ...]:
        names: list[str] = []
        for index, item in enumerate(self._list(value, at, "tool-name patterns")):
            if not isinstance(item, str) or not item:
                raise self.error(
                    (*at, index), f"'{_dotted((*at, index))}' must be a non-empty tool-name pattern"
                )
            names.append(item)
        return tuple(names)


def _dotted(at: KeyPath) -> str:
    text = ""
    for part in at:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "(top level)"
