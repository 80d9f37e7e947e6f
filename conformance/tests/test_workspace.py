"""What a runner under test is given: its project files, its home and an environment that leaks nothing."""

from __future__ import annotations

import json
from pathlib import Path

from hive_conformance.fixtures import Meta
from hive_conformance.workspace import MCP_SERVERS_VARIABLE
from hive_conformance.workspace import SESSION_ID
from hive_conformance.workspace import prepare_workspace

CALLER = {
    "PATH": "/usr/bin",
    "LANG": "C.UTF-8",
    "ANTHROPIC_API_KEY": "secret",
    "HIVE_HOME": "/home/me/.hive",
    "OPENAI_BASE_URL": "https://example.invalid",
}


def _prepare(root: Path, meta: Meta) -> tuple[Path, dict[str, str]]:
    workspace = prepare_workspace(
        root,
        meta,
        model_url="http://127.0.0.1:1234/",
        tools_url="http://127.0.0.1:5678/mcp",
        server_name="conformance",
        environment=CALLER,
        extra={"EXTRA": "1"},
    )
    return workspace.project, workspace.environment


def test_the_runner_gets_the_model_the_tools_and_a_fresh_home_and_nothing_else(tmp_path: Path) -> None:
    project, env = _prepare(tmp_path, Meta(description="d", requirements=["HIVE-TEXT-001"]))
    assert project == tmp_path / "project"
    assert env == {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "HOME": str(tmp_path / "home"),
        "HIVE_HOME": str(tmp_path / "home" / ".hive"),
        "OPENAI_ENDPOINT": "http://127.0.0.1:1234/v1",
        "OPENAI_API": "responses",
        "OPENAI_API_KEY": "conformance-key",
        "OPENAI_MODEL": "scripted-model",
        "HIVE_SESSION_ID": SESSION_ID,
        MCP_SERVERS_VARIABLE: str(tmp_path / "mcp-servers.json"),
        "NO_COLOR": "1",
        "EXTRA": "1",
    }
    assert json.loads(Path(env[MCP_SERVERS_VARIABLE]).read_text()) == {
        "mcpServers": {"conformance": {"type": "http", "url": "http://127.0.0.1:5678/mcp"}}
    }
    assert (tmp_path / "home" / ".hive").is_dir()


def test_hive_is_given_its_plugin_permissions_and_config_as_the_users_own(tmp_path: Path) -> None:
    meta = Meta(
        description="d", requirements=["HIVE-TEXT-001"], tool_timeout_ms=1000, approval_timeout_seconds=1.5
    )
    project, _ = _prepare(tmp_path, meta)
    hive = tmp_path / "home" / ".hive"
    assert json.loads((hive / "plugins.json").read_text()) == {
        "plugins": [
            {
                "name": "conformance",
                "transport": "http",
                "url": "http://127.0.0.1:5678/mcp",
                "timeoutMs": 1000,
            }
        ]
    }
    config = json.loads((hive / "config.yaml").read_text())
    assert config["approval"] == {"timeoutSeconds": 1.5}
    assert config["permissions"]["mcpTools"] == [
        {"pattern": "mcp__conformance__set_value", "action": "ask", "priority": 100},
        {"pattern": "mcp__conformance__*", "action": "allow"},
    ]
    # Nothing in the project itself, which hive would ignore until the user trusts it.
    assert not (project / ".hive").exists()
    assert json.loads((project / "conformance.json").read_text()) == {
        "mcp_server": "conformance",
        "mcp_url": "http://127.0.0.1:5678/mcp",
        "ask_tools": ["mcp__conformance__set_value"],
        "tool_timeout_ms": 1000,
        "approval_timeout_seconds": 1.5,
    }


def test_unset_settings_are_left_to_the_runner(tmp_path: Path) -> None:
    project, _ = _prepare(tmp_path, Meta(description="d", requirements=["HIVE-TEXT-001"]))
    hive = tmp_path / "home" / ".hive"
    assert "approval" not in json.loads((hive / "config.yaml").read_text())
    assert "timeoutMs" not in (hive / "plugins.json").read_text()
    assert set(json.loads((project / "conformance.json").read_text())) == {
        "mcp_server",
        "mcp_url",
        "ask_tools",
    }
