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

import re
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import Final
from typing import Literal
from typing import cast

import msgspec

from hive_core.config.paths import hive_home
from hive_core.config.structured import Document
from hive_core.config.structured import KeyPath
from hive_core.config.structured import read_document
from hive_core.config.trust import IgnoredSetting
from hive_core.config.trust import TrustStore
from hive_core.errors import UserError

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
    "project_plugin_settings",
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


class PluginConfigError(UserError, ValueError):
    """A plugins file cannot be used: the message names the file, where in it, and what is wrong.

    Its :attr:`problem` starts with where: ``line <n>: `` when the line is known, then the entry
    (``plugins[0] (notes).command: ``).
    """

    def __init__(
        self, problem: str, *, source: str, line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(
            problem if line is None else f"line {line}: {problem}", source=source, line=line, column=column
        )

    def __str__(self) -> str:
        return f"invalid MCP plugins file {self.source}: {self.problem}"


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


def load_plugins_config(
    project_dir: Path, *, home: Path | None = None, trusted: bool | None = None
) -> PluginsConfig:
    """Read and merge ``<home>/plugins.*`` and, for a ``trusted`` project, ``<project_dir>/.hive/plugins.*``.

    ``home`` defaults to ``$HIVE_HOME`` when set, else ``~/.hive``. A project's plugins run programs, so its file
    is read only when the project is ``trusted`` (``None``: as the trust store in the home says). Relative working
    directories resolve against ``project_dir``, which is also where a stdio server runs when it names none.
    Missing files are no plugins; a malformed one raises :class:`PluginConfigError`.
    """
    project_dir = Path(project_dir).absolute()
    home_dir = Path(home) if home is not None else hive_home()
    if trusted is None:
        trusted = TrustStore(home_dir).is_trusted(project_dir)
    layers: list[_FileLayer] = []
    for directory in (home_dir, project_dir / ".hive") if trusted else (home_dir,):
        path = _first_existing(directory)
        if path is None:
            continue
        document = read_document(path, error=PluginConfigError)
        if document is None:  # a dangling link
            raise PluginConfigError("cannot read the file (it is a link to nothing)", source=str(path))
        layers.append(_Reader(document, project_dir).layer())
    return _merge(layers)


def project_plugin_settings(project_dir: Path) -> list[IgnoredSetting]:
    """The MCP servers the project's own plugins file declares, each with its file and line: they run only for
    a trusted project. A malformed file raises :class:`PluginConfigError`."""
    path = _first_existing(Path(project_dir).absolute() / ".hive")
    if path is None:
        return []
    document = read_document(path, error=PluginConfigError)
    if document is None:
        raise PluginConfigError("cannot read the file (it is a link to nothing)", source=str(path))
    layer = _Reader(document, Path(project_dir).absolute()).layer()
    found: list[IgnoredSetting] = []
    for index, raw in enumerate(layer.plugins):
        plugin = raw.config
        what = " ".join((plugin.command or "", *plugin.arguments)).strip() or plugin.url or ""
        line = document.key_mark(("plugins", index)).line
        found.append(
            IgnoredSetting(setting=f"MCP plugin {plugin.name} ({what})", source=str(path), line=line)
        )
    return found


def parse_plugins_document(document: object, *, source: str, base_dir: Path) -> PluginsConfig:
    """Validate one already-parsed plugins document (a mapping, as YAML or JSON gives it).

    ``source`` names it in errors; relative working directories resolve against ``base_dir``, which is also
    where a stdio server runs when it names none.
    """
    return _merge([_Reader(Document(source=source, value=document), Path(base_dir).absolute()).layer()])


def _first_existing(directory: Path) -> Path | None:
    for name in PLUGINS_FILE_NAMES:
        path = directory / name
        try:
            if path.exists() or path.is_symlink():
                return path
        except OSError as error:
            raise PluginConfigError(
                f"cannot check for the file ({error.strerror})", source=str(path)
            ) from error
    return None


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


class _Reader:
    """Validates one plugins document, pointing each fault at the key it concerns."""

    def __init__(self, document: Document, base_dir: Path) -> None:
        self.document = document
        self.base_dir = base_dir

    def error(self, at: KeyPath, problem: str) -> PluginConfigError:
        mark = self.document.key_mark(at)
        return PluginConfigError(problem, source=self.document.source, line=mark.line, column=mark.column)

    def layer(self) -> _FileLayer:
        source = self.document.source
        if self.document.value is None:
            return _FileLayer(source, None, None, ())
        top = self.mapping(self.document.value, (), "the top level")
        self.known_keys(top, (), _TOP_KEYS, "the top level")
        auto_connect = self.optional_bool(top, (), "autoConnect", "autoConnect")
        default_ms = self.optional_timeout(top, (), "defaultTimeoutMs", "defaultTimeoutMs")
        raw_plugins = top.get("plugins")
        if raw_plugins is None:
            return _FileLayer(source, auto_connect, default_ms, ())
        if not isinstance(raw_plugins, list):
            raise self.error(("plugins",), f"plugins: must be a list of plugins, not {_kind(raw_plugins)}")
        plugins: list[_RawPlugin] = []
        seen: set[str] = set()
        for index, item in enumerate(cast("list[object]", raw_plugins)):
            plugin = self.plugin(item, index)
            if plugin.config.name in seen:
                raise self.error(
                    ("plugins", index, "name"),
                    f"plugins[{index}]: the name {plugin.config.name!r} is used by an earlier plugin",
                )
            seen.add(plugin.config.name)
            plugins.append(plugin)
        return _FileLayer(source, auto_connect, default_ms, tuple(plugins))

    def plugin(self, item: object, index: int) -> _RawPlugin:
        at: KeyPath = ("plugins", index)
        where = f"plugins[{index}]"
        entry = self.mapping(item, at, where)
        name = entry.get("name")
        if name is None:
            raise self.error(at, f"{where}: a plugin needs a 'name'")
        if not isinstance(name, str) or not _PLUGIN_NAME.fullmatch(name):
            raise self.error(
                (*at, "name"),
                f"{where}.name: {name!r} is not a plugin name (use letters, digits, '-' and '_')",
            )
        if len(name) > PLUGIN_NAME_MAX_LENGTH:
            raise self.error(
                (*at, "name"), f"{where}.name: {name!r} is longer than {PLUGIN_NAME_MAX_LENGTH} characters"
            )
        where = f"plugins[{index}] ({name})"
        self.known_keys(entry, at, _PLUGIN_KEYS, where)
        transport = entry.get("transport", "stdio")
        if transport not in ("stdio", "http"):
            raise self.error(
                (*at, "transport"), f"{where}.transport: {transport!r} is not a transport (stdio or http)"
            )
        other = _HTTP_ONLY if transport == "stdio" else _STDIO_ONLY
        for key in other:
            if key in entry:
                raise self.error(
                    (*at, key),
                    f"{where}.{key}: only a {'http' if transport == 'stdio' else 'stdio'} plugin takes it",
                )
        timeout_ms = self.optional_timeout(entry, at, "timeoutMs", f"{where}.timeoutMs")
        auto_reconnect = self.optional_bool(entry, at, "autoReconnect", f"{where}.autoReconnect")
        common: dict[str, Any] = {
            "name": name,
            "transport": transport,
            "auto_reconnect": True if auto_reconnect is None else auto_reconnect,
            "source": self.document.source,
        }
        if transport == "stdio":
            command = entry.get("command")
            if command is None:
                raise self.error(at, f"{where}: a stdio plugin needs a 'command'")
            if not isinstance(command, str) or not command.strip():
                raise self.error((*at, "command"), f"{where}.command: must be a non-empty string")
            arguments = entry.get("arguments", [])
            if not isinstance(arguments, list):
                raise self.error(
                    (*at, "arguments"), f"{where}.arguments: must be a list, not {_kind(arguments)}"
                )
            directory = entry.get("workingDirectory")
            if directory is not None and (not isinstance(directory, str) or not directory.strip()):
                raise self.error(
                    (*at, "workingDirectory"), f"{where}.workingDirectory: must be a non-empty string"
                )
            config = PluginConfig(
                command=command,
                arguments=tuple(
                    self.scalar_text(value, (*at, "arguments", position), f"{where}.arguments[{position}]")
                    for position, value in enumerate(cast("list[object]", arguments))
                ),
                environment=self.text_map(
                    entry.get("environment"), (*at, "environment"), f"{where}.environment"
                ),
                working_directory=(self.base_dir / Path(directory).expanduser())
                if directory
                else self.base_dir,
                **common,
            )
        else:
            url = entry.get("url")
            if url is None:
                raise self.error(at, f"{where}: an http plugin needs a 'url'")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise self.error((*at, "url"), f"{where}.url: {url!r} is not an http:// or https:// URL")
            config = PluginConfig(
                url=url,
                headers=self.text_map(entry.get("headers"), (*at, "headers"), f"{where}.headers"),
                **common,
            )
        return _RawPlugin(config, timeout_ms)

    def mapping(self, value: object, at: KeyPath, where: str) -> Mapping[str, object]:
        if not isinstance(value, dict):
            raise self.error(at, f"{where}: must be a mapping, not {_kind(value)}")
        mapping = cast("dict[object, object]", value)
        for key in mapping:
            if not isinstance(key, str):
                raise self.error((*at, str(key)), f"{where}: the key {key!r} is not a string")
        return cast("Mapping[str, object]", mapping)

    def known_keys(
        self, mapping: Mapping[str, object], at: KeyPath, known: Sequence[str], where: str
    ) -> None:
        for key in mapping:
            if key not in known:
                raise self.error((*at, key), f"{where}: unknown key {key!r} (known keys: {', '.join(known)})")

    def optional_bool(self, mapping: Mapping[str, object], at: KeyPath, key: str, where: str) -> bool | None:
        value = mapping.get(key)
        if value is None or isinstance(value, bool):
            return value
        raise self.error((*at, key), f"{where}: must be true or false, not {value!r}")

    def optional_timeout(
        self, mapping: Mapping[str, object], at: KeyPath, key: str, where: str
    ) -> int | None:
        value = mapping.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.error(
                (*at, key), f"{where}: must be a positive whole number of milliseconds, not {value!r}"
            )
        return value

    def scalar_text(self, value: object, at: KeyPath, where: str) -> str:
        # YAML reads `8080` and `1.5` as numbers; as arguments and variables they can only mean their text.
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        raise self.error(at, f"{where}: must be a string, not {_kind(value)}")

    def text_map(self, value: object, at: KeyPath, where: str) -> dict[str, str]:
        if value is None:
            return {}
        mapping = self.mapping(value, at, where)
        return {key: self.scalar_text(item, (*at, key), f"{where}.{key}") for key, item in mapping.items()}


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
