"""The plugins files: their shape, their validation errors, and how the global and project files merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hive_core.mcp import PluginConfig
from hive_core.mcp import PluginConfigError
from hive_core.mcp import load_plugins_config
from hive_core.mcp import parse_plugins_document


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


EXAMPLE = """\
autoConnect: true
defaultTimeoutMs: 30000
plugins:
  - name: notes
    transport: stdio
    command: python
    arguments: [server.py, --port, 8080]
    environment: {NOTES_DIR: ./notes}
    workingDirectory: tools
    timeoutMs: 10000
    autoReconnect: true
  - name: remote
    transport: http
    url: http://127.0.0.1:8765/mcp
    headers: {Authorization: Bearer token}
"""


def test_the_documented_example_is_read(project: Path, home: Path) -> None:
    path = write(project / ".hive" / "plugins.yaml", EXAMPLE)
    config = load_plugins_config(project, home=home, trusted=True)
    assert config.auto_connect is True
    assert config.default_timeout == 30.0
    assert config.sources == (str(path),)
    notes, remote = config.plugins
    assert notes == PluginConfig(
        name="notes",
        command="python",
        arguments=("server.py", "--port", "8080"),
        environment={"NOTES_DIR": "./notes"},
        working_directory=project.absolute() / "tools",
        timeout=10.0,
        auto_reconnect=True,
        source=str(path),
    )
    assert remote.transport == "http"
    assert remote.url == "http://127.0.0.1:8765/mcp"
    assert remote.headers == {"Authorization": "Bearer token"}
    assert remote.timeout == 30.0  # defaultTimeoutMs
    assert remote.auto_reconnect is True  # the default


def test_no_files_no_plugins(project: Path, home: Path) -> None:
    config = load_plugins_config(project, home=home, trusted=True)
    assert config.plugins == ()
    assert config.auto_connect is True
    assert config.default_timeout == 30.0
    assert config.sources == ()


def test_a_stdio_plugin_runs_in_the_project_by_default(project: Path, home: Path) -> None:
    write(project / ".hive" / "plugins.yml", "plugins:\n  - name: a\n    command: srv\n")
    (plugin,) = load_plugins_config(project, home=home, trusted=True).plugins
    assert plugin.working_directory == project.absolute()
    assert plugin.transport == "stdio"


def test_json_is_read_too(project: Path, home: Path) -> None:
    document = {"defaultTimeoutMs": 1500, "plugins": [{"name": "j", "command": "srv", "arguments": ["-v"]}]}
    write(project / ".hive" / "plugins.json", json.dumps(document))
    config = load_plugins_config(project, home=home, trusted=True)
    assert config.plugins[0].arguments == ("-v",)
    assert config.plugins[0].timeout == 1.5


def test_yaml_is_preferred_to_yml_and_json(project: Path, home: Path) -> None:
    write(project / ".hive" / "plugins.yaml", "plugins:\n  - {name: from_yaml, command: a}\n")
    write(project / ".hive" / "plugins.yml", "plugins:\n  - {name: from_yml, command: a}\n")
    write(project / ".hive" / "plugins.json", '{"plugins": [{"name": "from_json", "command": "a"}]}')
    assert [p.name for p in load_plugins_config(project, home=home, trusted=True).plugins] == ["from_yaml"]


def test_the_project_file_wins_over_the_global_one(project: Path, home: Path) -> None:
    write(
        home / "plugins.yaml",
        "autoConnect: false\ndefaultTimeoutMs: 5000\nplugins:\n"
        "  - {name: shared, command: global-server}\n"
        "  - {name: only_global, command: g}\n",
    )
    write(
        project / ".hive" / "plugins.yaml",
        "defaultTimeoutMs: 2000\nplugins:\n  - {name: own, command: p}\n  - {name: shared, command: project-server}\n",
    )
    config = load_plugins_config(project, home=home, trusted=True)
    assert config.auto_connect is False  # the project does not set it, so the global value stands
    assert config.default_timeout == 2.0
    assert [(p.name, p.command) for p in config.plugins] == [
        ("only_global", "g"),
        ("own", "p"),
        ("shared", "project-server"),
    ]
    assert all(p.timeout == 2.0 for p in config.plugins)
    assert config.sources == (str(home / "plugins.yaml"), str(project / ".hive" / "plugins.yaml"))


def test_the_hive_home_comes_from_the_environment(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(home / "plugins.yaml", "plugins:\n  - {name: g, command: x}\n")
    monkeypatch.setenv("HIVE_HOME", str(home))
    assert [p.name for p in load_plugins_config(project).plugins] == ["g"]


def test_an_empty_file_is_no_plugins(project: Path, home: Path) -> None:
    write(project / ".hive" / "plugins.yaml", "# nothing yet\n")
    assert load_plugins_config(project, home=home, trusted=True).plugins == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("plugin: []\n", "the top level: unknown key 'plugin'"),
        ("- name: a\n", "the top level: must be a mapping, not a list"),
        ("plugins: {name: a}\n", "plugins: must be a list of plugins, not a mapping"),
        ("plugins:\n  - command: srv\n", "plugins[0]: a plugin needs a 'name'"),
        (
            "plugins:\n  - {name: 'bad name', command: srv}\n",
            "plugins[0].name: 'bad name' is not a plugin name",
        ),
        ("plugins:\n  - {name: 'a.b', command: srv}\n", "plugins[0].name: 'a.b' is not a plugin name"),
        (f"plugins:\n  - {{name: {'x' * 41}, command: srv}}\n", "is longer than 40 characters"),
        ("plugins:\n  - {name: a, comand: srv}\n", "plugins[0] (a): unknown key 'comand'"),
        ("plugins:\n  - {name: a}\n", "plugins[0] (a): a stdio plugin needs a 'command'"),
        ("plugins:\n  - {name: a, command: ''}\n", "plugins[0] (a).command: must be a non-empty string"),
        ("plugins:\n  - {name: a, transport: http}\n", "plugins[0] (a): an http plugin needs a 'url'"),
        (
            "plugins:\n  - {name: a, transport: http, url: ftp://x}\n",
            "'ftp://x' is not an http:// or https:// URL",
        ),
        (
            "plugins:\n  - {name: a, transport: sse, url: http://x}\n",
            "'sse' is not a transport (stdio or http)",
        ),
        (
            "plugins:\n  - {name: a, command: s, url: http://x}\n",
            "plugins[0] (a).url: only a http plugin takes it",
        ),
        (
            "plugins:\n  - {name: a, transport: http, url: 'http://x', command: s}\n",
            "plugins[0] (a).command: only a stdio plugin takes it",
        ),
        (
            "plugins:\n  - {name: a, command: s, arguments: s}\n",
            "arguments: must be a list, not the string 's'",
        ),
        (
            "plugins:\n  - {name: a, command: s, arguments: [[1]]}\n",
            "arguments[0]: must be a string, not a list",
        ),
        (
            "plugins:\n  - {name: a, command: s, environment: [X]}\n",
            "environment: must be a mapping, not a list",
        ),
        ("plugins:\n  - {name: a, command: s, timeoutMs: 0}\n", "timeoutMs: must be a positive whole number"),
        (
            "plugins:\n  - {name: a, command: s, timeoutMs: '5'}\n",
            "timeoutMs: must be a positive whole number",
        ),
        (
            "plugins:\n  - {name: a, command: s, autoReconnect: yes please}\n",
            "autoReconnect: must be true or false",
        ),
        ("defaultTimeoutMs: -1\n", "defaultTimeoutMs: must be a positive whole number"),
        ("autoConnect: 1\n", "autoConnect: must be true or false"),
        (
            "plugins:\n  - {name: a, command: s}\n  - {name: a, command: t}\n",
            "plugins[1]: the name 'a' is used by",
        ),
        (
            "plugins:\n  - name: a\n    name: b\n    command: s\n",
            "line 3: not valid YAML: the key 'name' appears twice",
        ),
        ("plugins: [\n", "not valid YAML"),
    ],
)
def test_a_malformed_file_is_an_error_naming_the_file_and_the_problem(
    project: Path, home: Path, text: str, problem: str
) -> None:
    path = write(project / ".hive" / "plugins.yaml", text)
    with pytest.raises(PluginConfigError) as caught:
        load_plugins_config(project, home=home, trusted=True)
    assert caught.value.source == str(path)
    assert problem in caught.value.problem
    assert str(caught.value).startswith(f"invalid MCP plugins file {path}: ")


def test_a_malformed_global_file_is_named_too(project: Path, home: Path) -> None:
    path = write(home / "plugins.json", '{"plugins": [{"name": "a", "command": "s"}], "plugins": []}')
    with pytest.raises(PluginConfigError) as caught:
        load_plugins_config(project, home=home, trusted=True)
    assert caught.value.source == str(path)
    assert "the key 'plugins' appears twice" in caught.value.problem


def test_invalid_json_names_the_line(project: Path, home: Path) -> None:
    write(project / ".hive" / "plugins.json", '{\n  "plugins": [,]\n}')
    with pytest.raises(PluginConfigError, match=r"line 2: not valid JSON"):
        load_plugins_config(project, home=home, trusted=True)


def test_a_document_can_be_checked_without_a_file(tmp_path: Path) -> None:
    config = parse_plugins_document(
        {"plugins": [{"name": "n", "command": "s", "workingDirectory": "sub"}]},
        source="inline",
        base_dir=tmp_path,
    )
    assert config.plugins[0].working_directory == tmp_path / "sub"
    with pytest.raises(PluginConfigError, match="invalid MCP plugins file inline: "):
        parse_plugins_document({"plugins": [{"name": "n"}]}, source="inline", base_dir=tmp_path)


@pytest.mark.parametrize(
    ("name", "text", "line", "column"),
    [
        ("plugins.yaml", "plugins:\n  - name: a\n    command: s\n    timeoutMs: 0\n", 4, 5),
        ("plugins.yaml", "autoConnect: true\nplugins:\n  - {name: a, comand: s}\n", 3, 15),
        ("plugins.json", '{\n  "plugins": [\n    {"name": "a", "transport": "http"}\n  ]\n}', 3, 5),
    ],
)
def test_a_fault_in_an_entry_names_its_line_and_column(
    project: Path, home: Path, name: str, text: str, line: int, column: int
) -> None:
    path = write(project / ".hive" / name, text)
    with pytest.raises(PluginConfigError) as caught:
        load_plugins_config(project, home=home, trusted=True)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert str(caught.value).startswith(f"invalid MCP plugins file {path}: line {line}: plugins[0]")
