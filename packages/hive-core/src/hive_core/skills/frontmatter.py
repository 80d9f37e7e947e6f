"""A SKILL.md file's frontmatter, checked as the Agent Skills specification's validator checks it.

The file starts with a ``---`` line (a byte-order mark and CRLF line endings are fine), then YAML, then a closing
``---`` line; what follows is the skill's body, the instructions ``load_skill`` returns. The YAML is a mapping of
these keys only:

- ``name`` (required): 1 to 64 characters of lower-case letters, digits and single hyphens between them
  (``^[a-z0-9]+(-[a-z0-9]+)*$``), equal to the skill's directory name once both are NFKC-normalised;
- ``description`` (required): 1 to 1,024 characters;
- ``license``: text; ``compatibility``: 1 to 500 characters;
- ``metadata``: a mapping of text to text;
- ``allowed-tools``: tool names separated by spaces (a YAML list of names is read too). They are parsed and kept,
  never enforced: a skill grants nothing.

Any other key makes the skill invalid, unless unknown keys are accepted (``skills.acceptUnknownFields``, for
bundles written for another client): then each is dropped with a warning. A problem is reported as text, never
raised.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from dataclasses import field
from typing import Final
from typing import Protocol
from typing import cast

import yaml
from yaml.nodes import MappingNode
from yaml.nodes import Node
from yaml.nodes import ScalarNode
from yaml.nodes import SequenceNode

__all__ = [
    "ALLOWED_KEYS",
    "MAX_COMPATIBILITY_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "NAME_PATTERN",
    "ParsedSkill",
    "SkillMetadata",
    "parse_skill_file",
]

NAME_PATTERN: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""What a skill's name is made of (matched against the whole name)."""
MAX_NAME_LENGTH: Final = 64
"""Characters of a skill's name at most."""
MAX_DESCRIPTION_LENGTH: Final = 1024
"""Characters of a skill's description at most."""
MAX_COMPATIBILITY_LENGTH: Final = 500
"""Characters of a skill's ``compatibility`` at most."""
ALLOWED_KEYS: Final = ("name", "description", "license", "allowed-tools", "metadata", "compatibility")
"""The frontmatter keys the specification defines."""

_FENCE: Final = "---"


@dataclass(frozen=True)
class SkillMetadata:
    """A skill's frontmatter, valid."""

    name: str
    """Its name, equal to its directory's."""
    description: str
    """What it is for and when to use it (shown to the model)."""
    license: str | None = None
    """Its licence, when it names one."""
    compatibility: str | None = None
    """What it needs of its environment, when it says."""
    metadata: dict[str, str] = field(default_factory=dict[str, str])
    """Further text properties (author, version...)."""
    allowed_tools: tuple[str, ...] = ()
    """The tools it says it may use; parsed, never enforced."""


@dataclass(frozen=True)
class ParsedSkill:
    """What reading one SKILL.md gave: its frontmatter, or the problems that make it invalid."""

    metadata: SkillMetadata | None
    """The valid frontmatter; ``None`` when :attr:`problems` is not empty."""
    body: str
    """The text after the frontmatter (empty when it cannot be found)."""
    problems: tuple[str, ...] = ()
    """Why the skill is invalid, one sentence each; empty for a valid skill."""
    warnings: tuple[str, ...] = ()
    """What was accepted but dropped (unknown keys, with ``accept_unknown_fields``)."""


# libyaml's parser where PyYAML has it: every SKILL.md of every root is read each time a host is built, and the
# pure-Python one takes a few milliseconds a file.
_LOADER: Final = cast("type[yaml.SafeLoader]", getattr(yaml, "CSafeLoader", yaml.SafeLoader))


class _Loader(Protocol):
    def get_single_node(self) -> Node | None: ...
    def construct_document(self, node: Node) -> object: ...
    def dispose(self) -> None: ...


class _YamlProblem(Exception):
    def __init__(self, problem: str, line: int | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line
        """The 0-based line in the YAML text, when known."""


def _refuse_repeats(node: Node, seen: set[int]) -> None:
    """Raise :class:`_YamlProblem` for a key given twice in one mapping (YAML would keep the last silently)."""
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, MappingNode):
        keys: set[str] = set()
        for key, value in cast("list[tuple[Node, Node]]", node.value):
            if isinstance(key, ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                text = cast("str", key.value)
                if text in keys:
                    raise _YamlProblem(f"the key {text!r} is given twice", key.start_mark.line)
                keys.add(text)
            _refuse_repeats(value, seen)
    elif isinstance(node, SequenceNode):
        for item in cast("list[Node]", node.value):
            _refuse_repeats(item, seen)


def _load_yaml(text: str) -> object:
    """The value of the YAML ``text``; :class:`_YamlProblem` when it is not valid YAML or repeats a key."""
    loader = cast("_Loader", _LOADER(text))
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _refuse_repeats(node, set())
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = (
            f"{exc.context}: {exc.problem}" if exc.context and exc.problem else exc.problem or exc.context
        )
        raise _YamlProblem(problem or "unreadable", mark.line if mark is not None else None) from None
    except yaml.YAMLError as exc:
        raise _YamlProblem(str(exc), None) from None
    finally:
        loader.dispose()


def _split(text: str) -> tuple[str, str] | str:
    """The frontmatter's YAML (from the file's second line) and the body; or the problem as text."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if not lines or lines[0].rstrip() != _FENCE:
        return "SKILL.md does not start with a '---' line opening its frontmatter"
    for index in range(1, len(lines)):
        if lines[index].rstrip() == _FENCE:
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]).strip("\n").rstrip()
    return "SKILL.md has no closing '---' line after its frontmatter"


def _length(value: object, key: str, low: int, high: int, problems: list[str]) -> str | None:
    if not isinstance(value, str):
        problems.append(f"'{key}' must be text, not {_kind(value)}")
        return None
    count = len(value) if value.strip() else 0
    if not low <= count <= high:
        problems.append(f"'{key}' must be {low} to {high:,} characters long (it has {count:,})")
        return None
    return value


def _kind(value: object) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _name(value: object, directory: str, problems: list[str]) -> str | None:
    name = _length(value, "name", 1, MAX_NAME_LENGTH, problems)
    if name is None:
        return None
    if not NAME_PATTERN.fullmatch(name):
        problems.append(
            f"'name' {name!r} may hold only lower-case letters, digits and single hyphens between them"
        )
        return None
    if unicodedata.normalize("NFKC", name) != unicodedata.normalize("NFKC", directory):
        problems.append(f"'name' {name!r} differs from the skill's directory name {directory!r}")
        return None
    return name


def _metadata(value: object, problems: list[str]) -> dict[str, str]:
    if not isinstance(value, dict):
        problems.append(f"'metadata' must be a mapping of text to text, not {_kind(value)}")
        return {}
    found: dict[str, str] = {}
    for key, item in cast("dict[object, object]", value).items():
        if not isinstance(key, str) or not isinstance(item, str):
            problems.append(f"'metadata' must map text to text; {key!r} holds {_kind(item)}")
            continue
        found[key] = item
    return found


def _allowed_tools(given: object, problems: list[str]) -> tuple[str, ...]:
    value: object = given
    if isinstance(value, str):
        return tuple(value.split())
    items = cast("list[object]", value) if isinstance(value, list) else None
    if items is not None and all(isinstance(item, str) for item in items):
        return tuple(name for item in cast("list[str]", items) for name in item.split())
    problems.append(f"'allowed-tools' must be tool names separated by spaces, not {_kind(given)}")
    return ()


def parse_skill_file(text: str, directory: str, *, accept_unknown_fields: bool = False) -> ParsedSkill:
    """Check the SKILL.md ``text`` of the skill in the directory named ``directory``; never raises."""
    split = _split(text)
    if isinstance(split, str):
        return ParsedSkill(None, "", (split,))
    yaml_text, body = split
    try:
        value = _load_yaml(yaml_text)
    except _YamlProblem as exc:
        # The YAML starts on the file's second line.
        line = f" (line {exc.line + 2} of SKILL.md)" if exc.line is not None else ""
        return ParsedSkill(None, body, (f"the frontmatter is not valid YAML{line}: {exc.problem}",))
    if not isinstance(value, dict):
        return ParsedSkill(None, body, (f"the frontmatter must be a mapping of keys, not {_kind(value)}",))
    values = cast("dict[object, object]", value)
    problems: list[str] = []
    warnings: list[str] = []
    unknown = [str(key) for key in values if key not in ALLOWED_KEYS]
    if unknown:
        listed = ", ".join(repr(key) for key in unknown)
        if accept_unknown_fields:
            warnings.append(f"unknown frontmatter keys dropped: {listed}")
        else:
            problems.append(
                f"unknown frontmatter keys {listed} (allowed: {', '.join(ALLOWED_KEYS)}; "
                "skills.acceptUnknownFields: true drops them instead)"
            )
    for required in ("name", "description"):
        if required not in values:
            problems.append(f"the frontmatter has no '{required}'")
    name = _name(values["name"], directory, problems) if "name" in values else None
    description = (
        _length(values["description"], "description", 1, MAX_DESCRIPTION_LENGTH, problems)
        if "description" in values
        else None
    )
    license_text = values.get("license")
    if license_text is not None and not isinstance(license_text, str):
        problems.append(f"'license' must be text, not {_kind(license_text)}")
    compatibility = (
        _length(values["compatibility"], "compatibility", 1, MAX_COMPATIBILITY_LENGTH, problems)
        if "compatibility" in values
        else None
    )
    metadata = _metadata(values["metadata"], problems) if "metadata" in values else {}
    tools = _allowed_tools(values["allowed-tools"], problems) if "allowed-tools" in values else ()
    if problems or name is None or description is None:
        return ParsedSkill(None, body, tuple(problems), tuple(warnings))
    return ParsedSkill(
        SkillMetadata(
            name=name,
            description=description,
            license=license_text if isinstance(license_text, str) else None,
            compatibility=compatibility,
            metadata=metadata,
            allowed_tools=tools,
        ),
        body,
        (),
        tuple(warnings),
    )
