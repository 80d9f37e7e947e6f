"""What a runner under test is given: a fresh project directory, a fresh home, and its environment.

The fixture MCP server is given twice over: as a standard ``mcpServers`` file (its path in
``HIVE_CONFORMANCE_MCP_SERVERS``, for any runner) and as hive's own user settings in the fresh hive home
(``plugins.json``, and ``config.yaml`` with the ``permissions`` rules and the approval timeout). They are the
user's settings, not the project's, because hive ignores a project's own plugins and allow rules until the user
trusts that project. ``conformance.json`` in the project states the scenario's settings for runners that read
neither.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from collections.abc import Sequence
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
    "SETTINGS_FILE_NAME",
    "ScenarioSettings",
    "Workspace",
    "prepare_workspace",
    "write_hive_home",
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


SETTINGS_FILE_NAME: Final = "conformance.json"
"""The project file stating the scenario's settings (:class:`ScenarioSettings`) for any runner."""


class ScenarioSettings(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A scenario's settings, as ``conformance.json`` (and the HTTP binding's ``settings``) state them."""

    mcp_server: str
    """The fixture MCP server's name (``conformance``)."""
    mcp_url: str
    """The fixture MCP server's streamable-HTTP address."""
    ask_tools: list[str]
    """The fixture tools (their full names) a runner must ask approval for; the server's others are allowed."""
    tool_timeout_ms: int | None = None
    """How long a tool call may run, when the scenario sets it."""
    approval_timeout_seconds: float | None = None
    """How long an approval may wait for its answer, when the scenario sets it."""
    max_session_tokens: int | None = None
    """The session's token budget, when the scenario sets one."""


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
    hive_home = home / ".hive"
    project.mkdir(parents=True)
    servers = project.parent / "mcp-servers.json"
    _write(servers, {"mcpServers": {server_name: {"type": "http", "url": tools_url}}})
    settings = ScenarioSettings(
        mcp_server=server_name,
        mcp_url=tools_url,
        ask_tools=[f"mcp__{server_name}__{name}" for name in ASK_TOOLS],
        tool_timeout_ms=meta.tool_timeout_ms,
        approval_timeout_seconds=meta.approval_timeout_seconds,
        max_session_tokens=meta.max_session_tokens,
    )
    write_hive_home(hive_home, settings)
    (project / SETTINGS_FILE_NAME).write_bytes(msgspec.json.format(msgspec.json.encode(settings)) + b"\n")
    source = os.environ if environment is None else environment
    env = {name: source[name] for name in passed if name in source}
    env.update(
        {
            "HOME": str(home),
            "HIVE_HOME": str(hive_home),
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


def write_hive_home(hive_home: Path, settings: ScenarioSettings) -> None:
    """Create ``hive_home`` holding a hive user's settings for a scenario: the fixture MCP server in
    ``plugins.json``; in ``config.yaml``, the ``permissions`` rules (ask for ``settings.ask_tools``, allow the
    server's other tools), the approval timeout and the session's token budget when set."""
    hive_home.mkdir(parents=True, exist_ok=True)
    plugin: dict[str, object] = {"name": settings.mcp_server, "transport": "http", "url": settings.mcp_url}
    if settings.tool_timeout_ms is not None:
        plugin["timeoutMs"] = settings.tool_timeout_ms
    _write(hive_home / "plugins.json", {"plugins": [plugin]})
    config: dict[str, object] = {
        "permissions": {
            "mcpTools": [
                *({"pattern": name, "action": "ask", "priority": 100} for name in settings.ask_tools),
                {"pattern": f"mcp__{settings.mcp_server}__*", "action": "allow"},
            ]
        }
    }
    if settings.approval_timeout_seconds is not None:
        config["approval"] = {"timeoutSeconds": settings.approval_timeout_seconds}
    if settings.max_session_tokens is not None:
        config["budget"] = {"maxSessionTokens": settings.max_session_tokens}
    # JSON is YAML: hive's config.yaml reads it as is.
    _write(hive_home / "config.yaml", config)


def _write(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
