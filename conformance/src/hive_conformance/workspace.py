"""What a runner under test is given: a fresh project directory, a fresh home, and its environment.

The project directory holds the fixture MCP server twice over: as a standard ``mcpServers`` file (its path in
``HIVE_CONFORMANCE_MCP_SERVERS``, for any runner) and as hive's own project files (``.hive/plugins.json``,
``.hive/permissions.json``, ``.hive/config.yaml``). ``conformance.json`` states the scenario's settings for
runners that read neither.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import msgspec

from hive_conformance.fixtures import Meta

__all__ = [
    "API_KEY",
    "ASK_TOOLS",
    "MCP_SERVERS_VARIABLE",
    "MODEL",
    "PASSED_VARIABLES",
    "SESSION_ID",
    "Workspace",
    "prepare_workspace",
]

MODEL: Final = "scripted-model"
"""``OPENAI_MODEL``: the scripted model's name."""

API_KEY: Final = "conformance-key"
"""``OPENAI_API_KEY``: a dummy the scripted model server accepts."""

SESSION_ID: Final = "conformance"
"""``HIVE_SESSION_ID``: the session id a hive runner announces in ``session_started``."""

MCP_SERVERS_VARIABLE: Final = "HIVE_CONFORMANCE_MCP_SERVERS"
"""The variable holding the path of the ``{"mcpServers": …}`` file."""

ASK_TOOLS: Final = ("set_value",)
"""Fixture tools a runner must ask approval for; every other fixture tool is allowed."""

PASSED_VARIABLES: Final = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "PYTHONPATH",
    "VIRTUAL_ENV",
)
"""The caller's variables a runner inherits; nothing else leaks in (no provider keys, no ``HIVE_*``)."""


class Workspace(msgspec.Struct, frozen=True, kw_only=True):
    """One scenario's directories and environment."""

    project: Path
    """The runner's working directory."""
    home: Path
    """``HOME`` (and ``HIVE_HOME`` under it)."""
    environment: dict[str, str]
    """The runner's whole environment."""


def prepare_workspace(
    root: Path,
    meta: Meta,
    *,
    model_url: str,
    tools_url: str,
    server_name: str,
    environment: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    passed: Sequence[str] = PASSED_VARIABLES,
) -> Workspace:
    """Create ``root/project`` and ``root/home`` for a scenario and return them with the runner's environment.

    ``environment`` is where passed variables come from (default: this process's); ``extra`` is added last.
    """
    project, home = root / "project", root / "home"
    (project / ".hive").mkdir(parents=True)
    (home / ".hive").mkdir(parents=True)
    servers = project.parent / "mcp-servers.json"
    _write(servers, {"mcpServers": {server_name: {"type": "http", "url": tools_url}}})
    plugin: dict[str, object] = {"name": server_name, "transport": "http", "url": tools_url}
    if meta.tool_timeout_ms is not None:
        plugin["timeoutMs"] = meta.tool_timeout_ms
    _write(project / ".hive" / "plugins.json", {"plugins": [plugin]})
    prefix = f"mcp__{server_name}__"
    _write(
        project / ".hive" / "permissions.json",
        {
            "permissions": {
                "mcp_tools": [
                    *({"pattern": prefix + name, "action": "ask", "priority": 100} for name in ASK_TOOLS),
                    {"pattern": prefix + "*", "action": "allow"},
                ]
            }
        },
    )
    if meta.approval_timeout_seconds is not None:
        # JSON is YAML: hive's config.yaml reads it as is.
        _write(
            project / ".hive" / "config.yaml", {"approval": {"timeoutSeconds": meta.approval_timeout_seconds}}
        )
    settings = {
        "mcp_server": server_name,
        "ask_tools": [prefix + name for name in ASK_TOOLS],
        "tool_timeout_ms": meta.tool_timeout_ms,
        "approval_timeout_seconds": meta.approval_timeout_seconds,
    }
    _write(project / "conformance.json", {key: value for key, value in settings.items() if value is not None})
    source = os.environ if environment is None else environment
    env = {name: source[name] for name in passed if name in source}
    env.update(
        {
            "HOME": str(home),
            "HIVE_HOME": str(home / ".hive"),
            "OPENAI_ENDPOINT": model_url.rstrip("/") + "/v1",
            # The kit's expected streams were recorded over the Responses API; another endpoint defaults to Chat.
            "OPENAI_API": "responses",
            "OPENAI_API_KEY": API_KEY,
            "OPENAI_MODEL": MODEL,
            "HIVE_SESSION_ID": SESSION_ID,
            MCP_SERVERS_VARIABLE: str(servers),
            "NO_COLOR": "1",
        }
    )
    env.update(extra or {})
    return Workspace(project=project, home=home, environment=env)


def _write(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
