"""Putting a host together from configuration: provider, model client, tools, rules and the agent.

This is the one place the CLI wires the SDK: the same assembly serves the interactive mode, ``-p``, ``run`` and
``run --server``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from hive_core import Agent, ApprovalService, ChatClient, TokenBudgetChatClient, Tool
from hive_core.builtin_tools import BUILTIN_TOOLS
from hive_core.config import LoadedConfig, find_project_root, load_config
from hive_core.mcp import McpPlugins
from hive_core.permissions import PermissionPolicy, load_permission_rules
from hive_providers import ProviderSettings

__all__ = ["Host", "HostOptions", "build_host", "instructions_for"]


@dataclass
class HostOptions:
    """What the command line says about the host."""

    cwd: Path = field(default_factory=Path.cwd)
    model: str | None = None
    provider: str | None = None
    planning: bool = False
    max_iterations: int | None = None
    max_output_tokens: int | None = None
    reasoning_effort: str | None = None
    tool_timeout: float | None = None


@dataclass
class Host:
    """A configured agent and what it was made from."""

    project_root: Path
    config: LoadedConfig
    settings: ProviderSettings
    client: ChatClient
    agent: Agent
    plugins: McpPlugins

    @property
    def model_label(self) -> str:
        """``provider/model`` for humans and session records."""
        return f"{self.settings.provider}/{self.settings.model or 'default'}"


def instructions_for(root: Path, *, planning: bool) -> str:
    """The system instructions of hive's agent."""
    text = (
        "You are hive, a careful coding agent working in the project at "
        f"{root}. Use the tools to read, search, edit files and run commands; paths are relative to the "
        "project. Make the smallest change that does the job, check your work, and say plainly what you did."
    )
    if planning:
        text += " You are in planning mode: only read-only tools run. Investigate and propose a plan; change nothing."
    return text


def build_host(
    options: HostOptions,
    *,
    approvals: ApprovalService | None,
    extra_tools: tuple[Tool, ...] = (),
    warn: bool = True,
) -> Host:
    """Load the configuration for the project around ``options.cwd`` and build its agent.

    Raises ``ConfigError``, ``PermissionConfigError``, ``PluginConfigError`` or ``ProviderSelectionError`` with a
    message fit for the user. The MCP servers are only described here; :func:`plugins_for` starts them.
    """
    from hive_providers.registry import create_client, select_provider

    root = find_project_root(options.cwd)
    loaded = load_config(root)
    if warn:
        for warning in loaded.warnings:
            sys.stderr.write(f"hive: warning: {warning}\n")
    # The merged configuration already holds the environment and .env layers, in the seed's precedence.
    settings = select_provider(options.provider or loaded.default_provider, config=loaded.data, env={})
    if options.model:
        settings = msgspec.structs.replace(settings, model=options.model)
    client: ChatClient = TokenBudgetChatClient(create_client(settings))
    rules = load_permission_rules(root, loaded.permissions)
    policy = PermissionPolicy(rules, root)
    behavior = loaded.chat_behavior
    agent = Agent(
        client,
        tools=(*BUILTIN_TOOLS, *extra_tools),
        instructions=instructions_for(root, planning=options.planning),
        policy=policy,
        approvals=approvals,
        max_iterations=options.max_iterations or behavior.maximum_iterations_per_request,
        max_output_tokens=options.max_output_tokens or behavior.max_output_tokens,
        reasoning_effort=options.reasoning_effort or behavior.reasoning_effort,
        tool_timeout=options.tool_timeout or behavior.tool_call_timeout_seconds,
        working_dir=root,
        planning=options.planning,
    )
    return Host(root, loaded, settings, client, agent, McpPlugins.load(root))


@asynccontextmanager
async def plugins_for(host: Host) -> AsyncGenerator[None]:
    """Start the project's MCP servers (``.hive/plugins.yaml`` and the global file) and offer their tools.

    Without a plugins file nothing is started and the ``mcp`` SDK is not even imported.
    """
    plugins = host.plugins
    if not plugins.config.plugins:
        yield
        return
    async with plugins:
        plugins.sync_tools(host.agent.tools)
        yield
