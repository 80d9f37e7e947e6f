"""The plugins files: which MCP servers to run, and how.

``<home>/plugins.yaml`` (the hive home, ``~/.hive`` unless ``HIVE_HOME`` moves it) and the project's
``.hive/plugins.yaml`` (``.yml`` and ``.json`` too; in each directory the first that exists is read)::

    autoConnect: true            # default true
    defaultTimeoutMs: 30000      # default 30000
    plugins:
      - name: notes              # letters, digits, - and _
        transport: stdio         # stdio (default) or http
        command: python
        arguments: [server.py]
        environment: {NOTES_DIR: ./notes}
        workingDirectory: .      # default: the project directory
        timeoutMs: 10000         # default: defaultTimeoutMs
        autoReconnect: true      # default true
      - name: remote
        transport: http
        url: http://127.0.0.1:8765/mcp
        headers: {Authorization: Bearer token}

The project file wins: its ``autoConnect`` and ``defaultTimeoutMs`` replace the global ones, and a project
plugin replaces the global plugin of the same name whole. Anything malformed is a :class:`PluginConfigError`
naming the file, the place in it and the problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, cast

import msgspec
import yaml

from hive_core.config.paths import hive_home

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "PLUGINS_FILE_NAMES",
    "PLUGIN_NAME_MAX_LENGTH",
    "PluginConfig",
    "PluginConfigError",
    "PluginTransport",
    "PluginsConfig",
    "load_plugins_config",
    "parse_plugins_document",
]

PLUGINS_FILE_NAMES: Final = ("plugins.yaml", "plugins.yml", "plugins.json")
"""Plugins file names looked for in the hive home and in ``<project>/.hive/``, in order; the first found is read."""

DEFAULT_TIMEOUT_MS: Final = 30_000
"""Milliseconds a tool call may run when neither the plugin nor the file sets a timeout."""

PLUGIN_NAME_MAX_LENGTH: Final = 40
"""Longest plugin name: ``mcp__<plugin>__`` must leave room for the tool's own name within 64 characters."""

PluginTransport = Literal["stdio", "http"]
"""How hive talks to a server: a child process over stdin/stdout, or streamable HTTP."""

_PLUGIN_NAME: Final = re.compile(r"[A-Za-z0-9_-]+")
_TOP_KEYS: Final = ("autoConnect", "defaultTimeoutMs", "plugins")
_PLUGIN_KEYS: Final = (
    "name",
    "transport",
    "command",
    "arguments",
    "environment",
    "workingDirectory",
    "url",
    "headers",
    "timeoutMs",
    "autoReconnect",
)
_STDIO_ONLY: Final = ("command", "arguments", "environment", "workingDirectory")
_HTTP_ONLY: Final = ("url", "headers")


class PluginConfigError(ValueError):
    """A plugins file could not be used: the message names the file, where in it, and what is wrong."""

    source: str
    """The file (or other source) the configuration came from."""
    problem: str
    """What is wrong, in words, starting with where."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"invalid MCP plugins file {source}: {problem}")


class PluginConfig(msgspec.Struct, frozen=True, kw_only=True):
    """One MCP server, as configured."""

    name: str
    """The plugin's name: its tools are offered as ``mcp__<name>__<tool>``."""
    transport: PluginTransport = "stdio"
    """``stdio`` runs ``command`` as a child process; ``http`` connects to ``url`` (streamable HTTP)."""
    command: str | None = None
    """The program to run (stdio): a name looked up on ``PATH`` or a path."""
    arguments: tuple[str, ...] = ()
    """Its command-line arguments (stdio)."""
    environment: dict[str, str] = msgspec.field(default_factory=dict[str, str])
    """Variables set for it on top of a minimal inherited environment (stdio)."""
    working_directory: Path | None = None
    """Where it runs (stdio), absolute; ``None`` runs it in the host's current directory. A plugins file always
    sets it: the ``workingDirectory`` given, resolved against the project directory, else the project directory."""
    url: str | None = None
    """The server's endpoint (http)."""
    headers: dict[str, str] = msgspec.field(default_factory=dict[str, str])
    """Headers sent with every request (http), ``Authorization`` for example."""
    timeout: float = DEFAULT_TIMEOUT_MS / 1000
    """Seconds one tool call may run before it is stopped."""
    auto_reconnect: bool = True
    """Restart (stdio) or reconnect (http) the server when it crashes, hangs or drops the connection."""
    source: str | None = None
    """The file this entry came from."""


class PluginsConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The plugins of a project: the global file and the project's file merged."""

    auto_connect: bool = True
    """Start every server when the plugins are opened (otherwise each waits for an explicit connect)."""
    default_timeout: float = DEFAULT_TIMEOUT_MS / 1000
    """Seconds a tool call may run when its plugin sets no ``timeoutMs``."""
    plugins: tuple[PluginConfig, ...] = ()
    """The servers: the global file's (those the project does not redefine) and then the project's."""
    sources: tuple[str, ...] = ()
    """The files read, global first."""


def load_plugins_config(project_dir: Path, *, home: Path | None = None) -> PluginsConfig:
    """Read and merge ``<home>/plugins.*`` and ``<project_dir>/.hive/plugins.*``.

    ``home`` defaults to ``$HIVE_HOME`` when set, else ``~/.hive``. Relative working directories resolve
    against ``project_dir``, which is also where a stdio server runs when it names none. Missing files are
    no plugins; a malformed one raises :class:`PluginConfigError`.
    """
    project_dir = Path(project_dir).absolute()
    home_dir = Path(home) if home is not None else hive_home()
    layers: list[_FileLayer] = []
    for directory in (home_dir, project_dir / ".hive"):
        path = _first_existing(directory)
        if path is not None:
            layers.append(_read_layer(_load_document(path), str(path), project_dir))
    return _merge(layers)


def parse_plugins_document(document: object, *, source: str, base_dir: Path) -> PluginsConfig:
    """Validate one already-parsed plugins document (a mapping, as YAML or JSON gives it).

    ``source`` names it in errors; relative working directories resolve against ``base_dir``, which is also
    where a stdio server runs when it names none.
    """
    return _merge([_read_layer(document, source, Path(base_dir).absolute())])


def _first_existing(directory: Path) -> Path | None:
    for name in PLUGINS_FILE_NAMES:
        path = directory / name
        try:
            if path.exists() or path.is_symlink():
                return path
        except OSError as error:
            raise PluginConfigError(str(path), f"cannot check for the file ({error.strerror})") from error
    return None


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping (plain YAML keeps the last silently)."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[str] = set()
    pairs: list[tuple[yaml.Node, yaml.Node]] = node.value
    for key_node, _ in pairs:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        key = str(key_node.value)
        if key in seen and key != "<<":
            raise yaml.constructor.ConstructorError(
                None, None, f"the key {key!r} appears twice in one mapping", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(  # pyright: ignore[reportUnknownMemberType]
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping
)


def _load_document(path: Path) -> object:
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise PluginConfigError(source, f"the file is not UTF-8 text ({error.reason})") from error
    except OSError as error:
        raise PluginConfigError(source, f"cannot read the file ({error.strerror or error})") from error
    if path.suffix == ".json":
        try:
            return json.loads(text, object_pairs_hook=_unique_json_object)
        except json.JSONDecodeError as error:
            raise PluginConfigError(source, f"line {error.lineno}: not valid JSON: {error.msg}") from error
        except _DuplicateKey as error:
            raise PluginConfigError(source, f"the key {error.key!r} appears twice in one object") from error
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise PluginConfigError(source, f"{where}not valid YAML: {error.problem or error.context}") from error
    except yaml.YAMLError as error:
        raise PluginConfigError(source, f"not valid YAML: {error}") from error


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


class _RawPlugin(msgspec.Struct, frozen=True):
    config: PluginConfig
    timeout_ms: int | None


class _FileLayer(msgspec.Struct, frozen=True):
    source: str
    auto_connect: bool | None
    default_timeout_ms: int | None
    plugins: tuple[_RawPlugin, ...]


def _merge(layers: Sequence[_FileLayer]) -> PluginsConfig:
    auto_connect = True
    default_ms = DEFAULT_TIMEOUT_MS
    by_name: dict[str, _RawPlugin] = {}
    for layer in layers:
        if layer.auto_connect is not None:
            auto_connect = layer.auto_connect
        if layer.default_timeout_ms is not None:
            default_ms = layer.default_timeout_ms
        for plugin in layer.plugins:
            by_name.pop(plugin.config.name, None)  # a redefinition moves to the later file's place
            by_name[plugin.config.name] = plugin
    plugins = tuple(
        msgspec.structs.replace(raw.config, timeout=(raw.timeout_ms or default_ms) / 1000)
        for raw in by_name.values()
    )
    return PluginsConfig(
        auto_connect=auto_connect,
        default_timeout=default_ms / 1000,
        plugins=plugins,
        sources=tuple(layer.source for layer in layers),
    )


def _read_layer(document: object, source: str, base_dir: Path) -> _FileLayer:
    if document is None:
        return _FileLayer(source, None, None, ())
    top = _mapping(document, "the top level", source)
    _known_keys(top, _TOP_KEYS, "the top level", source)
    auto_connect = _optional_bool(top, "autoConnect", "autoConnect", source)
    default_ms = _optional_timeout(top, "defaultTimeoutMs", "defaultTimeoutMs", source)
    raw_plugins = top.get("plugins")
    if raw_plugins is None:
        return _FileLayer(source, auto_connect, default_ms, ())
    if not isinstance(raw_plugins, list):
        raise PluginConfigError(source, f"plugins: must be a list of plugins, not {_kind(raw_plugins)}")
    plugins: list[_RawPlugin] = []
    seen: set[str] = set()
    for index, item in enumerate(cast("list[object]", raw_plugins)):
        plugin = _read_plugin(item, index, source, base_dir)
        if plugin.config.name in seen:
            raise PluginConfigError(
                source, f"plugins[{index}]: the name {plugin.config.name!r} is used by an earlier plugin"
            )
        seen.add(plugin.config.name)
        plugins.append(plugin)
    return _FileLayer(source, auto_connect, default_ms, tuple(plugins))


def _read_plugin(item: object, index: int, source: str, base_dir: Path) -> _RawPlugin:
    where = f"plugins[{index}]"
    entry = _mapping(item, where, source)
    name = entry.get("name")
    if name is None:
        raise PluginConfigError(source, f"{where}: a plugin needs a 'name'")
    if not isinstance(name, str) or not _PLUGIN_NAME.fullmatch(name):
        raise PluginConfigError(
            source, f"{where}.name: {name!r} is not a plugin name (use letters, digits, '-' and '_')"
        )
    if len(name) > PLUGIN_NAME_MAX_LENGTH:
        raise PluginConfigError(
            source, f"{where}.name: {name!r} is longer than {PLUGIN_NAME_MAX_LENGTH} characters"
        )
    where = f"plugins[{index}] ({name})"
    _known_keys(entry, _PLUGIN_KEYS, where, source)
    transport = entry.get("transport", "stdio")
    if transport not in ("stdio", "http"):
        raise PluginConfigError(
            source, f"{where}.transport: {transport!r} is not a transport (stdio or http)"
        )
    other = _HTTP_ONLY if transport == "stdio" else _STDIO_ONLY
    for key in other:
        if key in entry:
            raise PluginConfigError(
                source, f"{where}.{key}: only a {'http' if transport == 'stdio' else 'stdio'} plugin takes it"
            )
    timeout_ms = _optional_timeout(entry, "timeoutMs", f"{where}.timeoutMs", source)
    auto_reconnect = _optional_bool(entry, "autoReconnect", f"{where}.autoReconnect", source)
    common: dict[str, Any] = {
        "name": name,
        "transport": transport,
        "auto_reconnect": True if auto_reconnect is None else auto_reconnect,
        "source": source,
    }
    if transport == "stdio":
        command = entry.get("command")
        if command is None:
            raise PluginConfigError(source, f"{where}: a stdio plugin needs a 'command'")
        if not isinstance(command, str) or not command.strip():
            raise PluginConfigError(source, f"{where}.command: must be a non-empty string")
        arguments = entry.get("arguments", [])
        if not isinstance(arguments, list):
            raise PluginConfigError(source, f"{where}.arguments: must be a list, not {_kind(arguments)}")
        directory = entry.get("workingDirectory")
        if directory is not None and (not isinstance(directory, str) or not directory.strip()):
            raise PluginConfigError(source, f"{where}.workingDirectory: must be a non-empty string")
        config = PluginConfig(
            command=command,
            arguments=tuple(
                _scalar_text(value, f"{where}.arguments[{position}]", source)
                for position, value in enumerate(cast("list[object]", arguments))
            ),
            environment=_text_map(entry.get("environment"), f"{where}.environment", source),
            working_directory=(base_dir / Path(directory).expanduser()) if directory else base_dir,
            **common,
        )
    else:
        url = entry.get("url")
        if url is None:
            raise PluginConfigError(source, f"{where}: an http plugin needs a 'url'")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise PluginConfigError(source, f"{where}.url: {url!r} is not an http:// or https:// URL")
        config = PluginConfig(
            url=url, headers=_text_map(entry.get("headers"), f"{where}.headers", source), **common
        )
    return _RawPlugin(config, timeout_ms)


def _mapping(value: object, where: str, source: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise PluginConfigError(source, f"{where}: must be a mapping, not {_kind(value)}")
    mapping = cast("dict[object, object]", value)
    for key in mapping:
        if not isinstance(key, str):
            raise PluginConfigError(source, f"{where}: the key {key!r} is not a string")
    return cast("Mapping[str, object]", mapping)


def _known_keys(mapping: Mapping[str, object], known: Sequence[str], where: str, source: str) -> None:
    for key in mapping:
        if key not in known:
            raise PluginConfigError(source, f"{where}: unknown key {key!r} (known keys: {', '.join(known)})")


def _optional_bool(mapping: Mapping[str, object], key: str, where: str, source: str) -> bool | None:
    value = mapping.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise PluginConfigError(source, f"{where}: must be true or false, not {value!r}")


def _optional_timeout(mapping: Mapping[str, object], key: str, where: str, source: str) -> int | None:
    value = mapping.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PluginConfigError(
            source, f"{where}: must be a positive whole number of milliseconds, not {value!r}"
        )
    return value


def _scalar_text(value: object, where: str, source: str) -> str:
    # YAML reads `8080` and `1.5` as numbers; as arguments and variables they can only mean their text.
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise PluginConfigError(source, f"{where}: must be a string, not {_kind(value)}")


def _text_map(value: object, where: str, source: str) -> dict[str, str]:
    if value is None:
        return {}
    mapping = _mapping(value, where, source)
    return {key: _scalar_text(item, f"{where}.{key}", source) for key, item in mapping.items()}


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, str):
        return f"the string {value!r}"
    return f"{type(value).__name__} {value!r}"
