"""Agent definitions for delegation: ``.hive/<agentsDirectory>/<name>/agent.yaml`` and ``delegation.agents``.

An ``agent.yaml`` holds ``description``, ``instructions`` (else the directory's ``system-prompt.md`` is read),
``provider`` and ``model`` (a model, run by hive's own loop) or ``backend`` (a coding-agent CLI, with an optional
``model`` and ``endpoint``), ``tools`` (the names of the tools it may use) and ``rules`` (permission rules that
ask or deny, in the shape of the ``permissions`` section, applied on top of the project's). A key that is not one of these, or
a value of the wrong type, is a :class:`AgentDefinitionError` naming the file and line; so is a provider or backend
the host does not know (the host checks those names, with :meth:`AgentDefinition.error`). Inline agents are the
same mappings with a ``name``, under ``delegation.agents`` in ``config.yaml``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from typing import Final
from typing import cast

import msgspec

from .errors import ConfigError
from .loaded import LoadedConfig
from .paths import AGENT_FILE_NAME
from .paths import HIVE_DIR_NAME
from .structured import Document
from .structured import KeyPath
from .structured import Mark
from .structured import read_document
from .structured import read_text

if TYPE_CHECKING:
    # Imported by a parse only: a local one-shot loads its model while the permission engine is imported.
    from hive_core.permissions.rules import PermissionRules

__all__ = ["AGENT_FILE_NAME", "AgentDefinition", "AgentDefinitionError", "agent_definitions"]

_PROMPT_FILE_NAME: Final = "system-prompt.md"
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_TEXT_KEYS: Final = ("description", "instructions", "provider", "model", "backend", "endpoint")
_KEYS: Final = frozenset({"name", *_TEXT_KEYS, "tools", "rules"})


class AgentDefinitionError(ConfigError):
    """An agent definition that cannot be used; the message names its file and line."""


class AgentDefinition(msgspec.Struct, frozen=True, kw_only=True):
    """One subagent as its definition describes it."""

    name: str
    """The name the model delegates to (the directory's name, or the inline ``name``)."""
    description: str = ""
    """What it is for, shown to the model that delegates."""
    instructions: str | None = None
    """Its system prompt."""
    provider: str | None = None
    """The model provider it runs on (``None``: the session's), when it is a model."""
    model: str | None = None
    """The model (``None``: the provider's configured one), or the CLI's model for a backend."""
    backend: str | None = None
    """The coding-agent CLI that runs it (``claude-code``, ``codex``, ``pi``...), instead of a model."""
    endpoint: str | None = None
    """For a backend: an OpenAI-compatible base URL the CLI is pointed at, as ``--model-endpoint`` does."""
    tools: tuple[str, ...] = ()
    """The tools it may use, by name; ``delegate`` lets it delegate further, within ``maxDepth``."""
    rules: PermissionRules | None = None
    """Rules that ask or deny (never allow), judged beside the project's on its tool calls: the stricter verdict
    wins."""
    source: str
    """The file it was defined in."""
    lines: dict[str, int] = msgspec.field(default_factory=dict[str, int])
    """The line of each key it set, for messages."""

    def error(self, key: str, problem: str) -> AgentDefinitionError:
        """``problem`` about the key ``key``, at its line (else the definition's)."""
        return AgentDefinitionError(
            f"agent {self.name!r}: {problem}",
            source=self.source,
            line=self.lines.get(key, self.lines.get("")),
        )


def _definition(
    value: object, *, name: str | None, document: Document, at: KeyPath, prompt: str | None = None
) -> AgentDefinition:
    def fail(path: KeyPath, problem: str) -> AgentDefinitionError:
        return AgentDefinitionError(problem, source=document.source, line=document.key_mark(path).line)

    if not isinstance(value, dict):
        raise fail(
            at, "an agent definition must be a mapping of description, instructions, provider, model..."
        )
    fields = cast("dict[object, object]", value)
    for key in fields:
        if key not in _KEYS:
            known = ", ".join(sorted(_KEYS - {"name"}))
            raise fail((*at, str(key)), f"unknown key {key!r} in an agent definition (known: {known})")
    given = fields.get("name")
    if name is None:
        if not isinstance(given, str) or not given.strip():
            raise fail(at, "an inline agent needs a 'name'")
        name = given.strip()
    elif given is not None and given != name:
        raise fail((*at, "name"), f"'name' is {given!r} but the directory names the agent {name!r}")
    if not _NAME.fullmatch(name):
        raise fail((*at, "name"), f"{name!r} is not an agent name (letters, digits, '_', '-', '.')")
    texts: dict[str, str | None] = {}
    for key in _TEXT_KEYS:
        item = fields.get(key)
        if item is not None and not isinstance(item, str):
            raise fail((*at, key), f"'{key}' must be text")
        texts[key] = item.strip() or None if isinstance(item, str) else None
    if texts["backend"] is not None and texts["provider"] is not None:
        raise fail((*at, "backend"), "set 'provider' (a model) or 'backend' (a coding-agent CLI), not both")
    if texts["endpoint"] is not None:
        if texts["backend"] is None:
            raise fail(
                (*at, "endpoint"), "'endpoint' points a coding-agent CLI at a model server: set 'backend'"
            )
        if not re.match(r"https?://[^/\s]+", texts["endpoint"]):
            raise fail((*at, "endpoint"), f"'endpoint' must be an http(s) URL, not {texts['endpoint']!r}")
    tools = fields.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in cast("list[object]", tools)):
        raise fail((*at, "tools"), "'tools' must be a list of tool names")
    rules = None
    if "rules" in fields:
        from hive_core.permissions.loading import PermissionConfigError
        from hive_core.permissions.loading import parse_tightening_rules

        try:
            # Inline agents live in config.yaml, so their rules are spelled as its permissions section is.
            rules = parse_tightening_rules(document, fields["rules"], (*at, "rules"), camel_case=at != ())
        except PermissionConfigError as exc:
            raise AgentDefinitionError(
                f"agent {name!r}: {exc.problem}", source=exc.source, line=exc.line, column=exc.column
            ) from None
    lines = {"": document.key_mark(at).line or 0} | {
        str(key): document.key_mark((*at, str(key))).line or 0 for key in fields
    }
    return AgentDefinition(
        name=name,
        description=texts["description"] or "",
        instructions=texts["instructions"] or prompt,
        provider=texts["provider"],
        model=texts["model"],
        backend=texts["backend"],
        endpoint=texts["endpoint"],
        tools=tuple(dict.fromkeys(cast("list[str]", tools))),
        rules=rules,
        source=document.source,
        lines={key: line for key, line in lines.items() if line},
    )


def _agents_directory(loaded: LoadedConfig, value: object) -> str:
    """``delegation.agentsDirectory``: one folder's name, so that its definitions lie where the project's trust
    hash looks (:func:`~hive_core.config.trust.content_hash` covers every ``.hive/*/*/agent.yaml``)."""
    name = cast("str", value or "agents")
    if name in (".", "..") or "/" in name or "\\" in name:
        origin = loaded.origin("delegation.agentsDirectory")
        raise AgentDefinitionError(
            f"delegation.agentsDirectory: {name!r} must be the name of one folder inside .hive/",
            source=origin.source if origin is not None else None,
            line=origin.line if origin is not None else None,
        )
    return name


def agent_definitions(loaded: LoadedConfig) -> tuple[AgentDefinition, ...]:
    """The agents ``delegation`` defines: every ``<agentsDirectory>/<name>/agent.yaml`` under the project's
    ``.hive/`` (by name), then the inline ``delegation.agents``; empty unless ``delegation.enabled``.

    Raises :class:`AgentDefinitionError` (file and line) for a definition that cannot be used or a name defined
    twice.
    """
    section = loaded.section("delegation")
    if section.get("enabled") is not True:
        return ()
    found: list[AgentDefinition] = []
    directory = (
        loaded.project_root / HIVE_DIR_NAME / _agents_directory(loaded, section.get("agentsDirectory"))
    )
    if directory.is_dir():
        for folder in sorted(path for path in directory.iterdir() if path.is_dir()):
            path = folder / AGENT_FILE_NAME
            document = read_document(path, error=AgentDefinitionError)
            if document is None:
                continue
            prompt = read_text(folder / _PROMPT_FILE_NAME, error=AgentDefinitionError)
            found.append(
                _definition(
                    document.value,
                    name=folder.name,
                    document=document,
                    at=(),
                    prompt=prompt.strip() or None if prompt is not None else None,
                )
            )
    inline = section.get("agents")
    if isinstance(inline, list):
        inline = cast("list[object]", inline)
        # The merged value keeps no positions of its own: messages point at the line of the key.
        origin = loaded.origin("delegation.agents")
        source = origin.source if origin is not None and origin.source else "delegation.agents"
        document = Document(source=source, value=inline)
        if origin is not None and origin.line is not None:
            document.keys[()] = Mark(origin.line, None)
        for index, item in enumerate(inline):
            found.append(_definition(item, name=None, document=document, at=(index,)))
    seen: dict[str, AgentDefinition] = {}
    for definition in found:
        if definition.name in seen:
            first = seen[definition.name]
            raise definition.error("name", f"defined twice (first in {first.source})")
        seen[definition.name] = definition
    return tuple(found)
