"""Putting a host together from configuration: provider, model client, tools, rules and the agent.

This is the one place the CLI wires the SDK: the same assembly serves the interactive mode, ``-p``, ``run`` and
``run --server``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from hive_core import Agent
from hive_core import ApprovalService
from hive_core import ChatClient
from hive_core import FallbackChatClient
from hive_core import LazyChatClient
from hive_core import TokenBudgetChatClient
from hive_core import Tool
from hive_core.config import LoadedConfig
from hive_core.config import find_project_root
from hive_core.config.unused import unused_setting_warnings
from hive_core.context import CompactionSettings
from hive_core.context import ContextManager
from hive_core.spending import SpendingLimits
from hive_core.tool_retrieval import ToolRetrieval
from hive_core.tool_retrieval import tool_retrieval_from_config
from hive_protocol import ReasoningEffort
from hive_providers import CONFIG_SCHEMA
from hive_providers import ProviderSettings

from .advisor import advisor_tools
from .delegation import delegation_tools
from .project_trust import check_project_root
from .project_trust import load_trusted_config
from .telemetry import start_tracing
from .telemetry import traced_client
from .web_host import web_tools_for

if TYPE_CHECKING:
    from hive_core.mcp import McpPlugins
    from hive_core.mcp import PluginConfig
    from hive_core.permissions import PermissionPolicy
    from hive_core.permissions import PermissionRules
    from hive_core.sessions.checkpoint_keeper import CheckpointKeeper

__all__ = [
    "AGENT_PROVIDER",
    "SMALL_MODEL_PROVIDERS",
    "Host",
    "HostOptions",
    "SessionLayer",
    "build_host",
    "instructions_for",
]


@dataclass(frozen=True)
class SessionLayer:
    """Settings one session sets over the user's and the project's configuration (``hive serve``'s
    per-session ``settings``, decoded at its edge); what is not set here comes from the configuration."""

    plugins: tuple[PluginConfig, ...] = ()
    """MCP servers added for the session; one of the same name as a configured server replaces it."""
    rules: PermissionRules | None = None
    """Permission rules put first over the configured ones, as ``--allow``'s are (the guards above them stay)."""
    approval_timeout: float | None = None
    """Seconds an approval waits for its answer, replacing ``approval.timeoutSeconds``."""
    max_session_tokens: int | None = None
    """The session's token budget, replacing ``budget.maxSessionTokens``."""


@dataclass
class HostOptions:
    """What the command line says about the host."""

    cwd: Path = field(default_factory=Path.cwd)
    """Where the project is looked for: the root of the repository it is in, else this directory."""
    model: str | None = None
    """The model (``-m``), replacing the provider's configured one."""
    provider: str | None = None
    """The provider (``--provider``), replacing ``defaultProvider``."""
    planning: bool = False
    """Planning mode (``--plan``, ``--dry-run``): only read-only tools run."""
    max_iterations: int | None = None
    """Tool rounds per request at most; ``None`` for ``chatBehavior.maximumIterationsPerRequest``."""
    max_output_tokens: int | None = None
    """Output tokens per model response at most; ``None`` for ``chatBehavior.maxOutputTokens``."""
    reasoning_effort: ReasoningEffort | None = None
    """How hard a reasoning model thinks; ``None`` for ``chatBehavior.reasoningEffort``."""
    tool_timeout: float | None = None
    """Seconds a tool call may run; ``None`` for ``chatBehavior.toolCallTimeoutSeconds``."""
    agent: str | None = None
    """The backend that runs the turns (``--agent``): a coding-agent CLI's name or alias, ``hive`` for the built-in
    loop; ``None`` for the backend a resumed session was recorded with (else the built-in loop)."""
    agent_mode: str | None = None
    """The CLI's session mode (``--agent-mode``) instead of the one in which it asks before acting."""
    model_endpoint: str | None = None
    """An OpenAI-compatible base URL the CLI is pointed at (``--model-endpoint``), ``model`` naming the model."""
    allow: tuple[str, ...] = ()
    """``--allow TOOL[:PATTERN]`` flags: calls pre-approved for this run, over the project's rules."""
    preload_model: bool = False
    """Start loading a local model as soon as it is chosen, while the rest of the host and the session are
    built: for a one-shot run, whose turn comes next."""
    layer: SessionLayer | None = None
    """The session's own settings over the configuration (``hive serve``); ``None`` for none."""


@dataclass
class Host:
    """A configured agent and what it was made from."""

    project_root: Path
    """The project the agent works in."""
    config: LoadedConfig
    """The merged configuration it was built from."""
    settings: ProviderSettings
    """The provider and model chosen."""
    policy: PermissionPolicy
    """The project's permission rules, which judge every call whatever runs the turns."""
    client: ChatClient | None
    """The model client (token budget applied); ``None`` when a coding-agent CLI runs the turns."""
    agent: Agent | None
    """hive's own agent: tools, rules, approvals and limits; ``None`` when a coding-agent CLI runs the turns."""
    plugins: McpPlugins
    """The project's MCP servers, described; :func:`plugins_for` starts them."""
    checkpoints: CheckpointKeeper | None = None
    """Keeps each file's state before a turn's file tools change it, once bound to the session (``/undo``);
    ``None`` when a coding-agent CLI runs the turns (it changes files itself)."""
    knowledge: str = ""
    """What follows :func:`instructions_for`'s text in the agent's instructions: the project's AGENTS.md and
    skills sections (``""`` for none)."""

    @property
    def model_label(self) -> str:
        """``provider/model`` for humans and session records."""
        return f"{self.settings.provider}/{self.settings.model or 'default'}"


AGENT_PROVIDER = "agent"
"""The provider a host built for a coding-agent CLI names (it has no model of its own)."""


SMALL_MODEL_PROVIDERS = frozenset({"local"})
"""Providers whose models get the small-model profile: in-process llama.cpp runs models of a few hundred million
to a few billion parameters on a CPU, where every prompt token costs time and long instructions cost sense."""


def instructions_for(root: Path, *, planning: bool, small: bool = False) -> str:
    """The system instructions of hive's agent; ``small`` gives the short ones of the small-model profile."""
    if small:
        # Chosen by trying variants through hive on SmolLM2-135M: this one greets, lists, sums and rhymes; longer
        # ones, or naming the project, tools or paths (the tools bring their own text when a message needs them),
        # made it drift or repeat itself.
        text = "You are hive, a helpful assistant. Keep answers short."
    else:
        text = (
            "You are hive, a careful coding agent working in the project at "
            f"{root}. Use the tools to read, search, edit files and run commands; paths are relative to the "
            "project. Make the smallest change that does the job, check your work, and say plainly what you did."
        )
    if planning:
        text += " You are in planning mode: only read-only tools run. Investigate and propose a plan; change nothing."
    return text


_SAID: set[str] = set()
"""The warnings and notices already written in this process."""


def _say_once(line: str) -> None:
    """Write ``line`` to stderr unless this process already did: a session opened again (``/clear``,
    ``/model``, ``/resume``) reads the same configuration, and the user has seen what is wrong with it."""
    if line not in _SAID:
        _SAID.add(line)
        sys.stderr.write(line + "\n")


def _silent(line: str) -> None:
    """Say nothing: a caller that built the same host before has shown its warnings."""


def build_host(
    options: HostOptions,
    *,
    approvals: ApprovalService | None,
    extra_tools: tuple[Tool, ...] = (),
    warn: bool = True,
    model_free: bool = False,
    ask: bool = False,
) -> Host:
    """Load the configuration for the project around ``options.cwd`` and build its agent.

    With ``model_free`` (a coding-agent CLI runs the turns) no provider is chosen and neither model client nor
    agent built: the host holds the project's configuration, rules and sandbox for the CLI, and needs no provider
    configured.

    The project root may not be the home folder or ``/``, and the project's settings that lower protection
    apply only to a trusted project (:mod:`hive_cli.project_trust`); with ``ask`` (a person at a terminal) the
    user is asked, else they are refused or ignored with one line on stderr.

    Raises ``ConfigError``, ``PermissionConfigError``, ``PluginConfigError`` or ``ProviderSelectionError`` with a
    message fit for the user. The MCP servers are only described here; :func:`plugins_for` starts them.
    """
    from hive_providers.pricing import PriceTable
    from hive_providers.registry import choose_provider
    from hive_providers.registry import create_client
    from hive_providers.registry import fallback_providers

    start_tracing()
    root = find_project_root(options.cwd)
    check_project_root(root, ask=ask)
    loaded = load_trusted_config(root, CONFIG_SCHEMA, ask=ask, say=_say_once if warn else _silent)
    if warn:
        for warning in loaded.warnings:
            _say_once(f"hive: warning: {warning}")
        for notice in loaded.notices:
            _say_once(f"hive: {notice}")
        for unused in unused_setting_warnings(loaded):
            _say_once(f"hive: warning: {unused}")
    compaction = CompactionSettings.from_config(loaded)
    client: ChatClient | None = None
    if model_free:
        settings = ProviderSettings(provider=AGENT_PROVIDER, model=options.model)
    else:
        choice = choose_provider(loaded, options.provider, options.model)
        settings = choice.settings
        if warn:
            for notice in choice.notices:
                _say_once(f"hive: {notice}")
        model_client = create_client(settings)
        if options.preload_model and settings.provider == "local":
            from hive_providers.local import LocalChatClient

            if isinstance(model_client, LocalChatClient):
                model_client.preload()
        model_client = _with_fallback(traced_client(model_client, settings), fallback_providers(loaded))
        # The backstop measures against the very window compaction prepares for.
        client = TokenBudgetChatClient(
            model_client,
            configured_window=compaction.max_context_tokens,
            refuse_on_default=not compaction.compact_on_overflow,
        )
    # Imported only now, so that a local model preloaded above loads while they are.
    from hive_core.builtin_tools import builtin_tools
    from hive_core.mcp import McpPlugins
    from hive_core.mcp.config import load_plugins_config
    from hive_core.permissions import PermissionPolicy
    from hive_core.permissions import extend_rules
    from hive_core.permissions import load_permission_rules
    from hive_core.permissions import with_allowed
    from hive_core.pipeline import default_middlewares
    from hive_core.sandbox import SandboxSettings
    from hive_core.sessions.checkpoint_keeper import CheckpointKeeper

    from .knowledge import project_knowledge

    rules = with_allowed(
        load_permission_rules(
            root,
            loaded.permissions,
            trusted=loaded.trusted,
            project_section=loaded.project_permissions,
            project_origin=loaded.project_permissions_source,
        ),
        options.allow,
    )
    plugins_config = load_plugins_config(root, trusted=loaded.trusted)
    layer = options.layer
    if layer is not None:
        if layer.rules is not None:
            rules = extend_rules(rules, layer.rules, frozenset())
        if layer.plugins:
            added = {plugin.name for plugin in layer.plugins}
            kept = tuple(plugin for plugin in plugins_config.plugins if plugin.name not in added)
            plugins_config = msgspec.structs.replace(plugins_config, plugins=(*kept, *layer.plugins))
    policy = PermissionPolicy(rules, root)
    plugins = McpPlugins(plugins_config)
    if client is None:
        return Host(root, loaded, settings, policy, None, None, plugins)
    behavior = loaded.chat_behavior
    spending = SpendingLimits.from_config(loaded)
    if layer is not None and layer.max_session_tokens is not None:
        spending = msgspec.structs.replace(spending, max_session_tokens=layer.max_session_tokens)
    # The small-model profile: short instructions, and only the tools a message points at (none for a question).
    small = settings.provider in SMALL_MODEL_PROVIDERS
    # Innermost, after the approval gate: only a call about to run keeps the files it names.
    checkpoints = CheckpointKeeper()
    knowledge = project_knowledge(loaded, root, options.cwd)
    for line in knowledge.warnings if warn else ():
        _say_once(f"hive: {line}")
    max_iterations = options.max_iterations or behavior.maximum_iterations_per_request
    max_output_tokens = options.max_output_tokens or behavior.max_output_tokens
    tool_timeout = options.tool_timeout or behavior.tool_call_timeout_seconds
    tools = (
        *builtin_tools(sandbox=SandboxSettings.from_config(loaded)),
        *knowledge.tools,
        *advisor_tools(loaded, settings, max_output_tokens=max_output_tokens),
        *web_tools_for(loaded, settings, client),
        *extra_tools,
    )
    agent = Agent(
        client,
        tools=(
            *tools,
            *delegation_tools(
                loaded,
                settings,
                {item.name: item for item in tools},
                policy=policy,
                approvals=approvals,
                max_iterations=max_iterations,
                max_output_tokens=max_output_tokens,
                tool_timeout=tool_timeout,
                compaction=compaction,
                # The MCP servers' tools join the agent's when plugins_for starts them: read at a launch.
                mcp_tools=(lambda: agent.tools) if plugins_config.plugins else None,
            ),
        ),
        instructions=instructions_for(root, planning=options.planning, small=small) + knowledge.instructions,
        # The toolRetrieval section, when enabled, replaces the small-model profile's selection.
        tool_selector=tool_retrieval_from_config(loaded) or (ToolRetrieval() if small else None),
        policy=policy,
        approvals=approvals,
        middlewares=[*default_middlewares(policy, approvals), checkpoints],
        max_iterations=max_iterations,
        max_consecutive_errors=behavior.maximum_consecutive_errors_per_request,
        max_output_tokens=max_output_tokens,
        reasoning_effort=options.reasoning_effort or behavior.reasoning_effort,
        tool_timeout=tool_timeout,
        working_dir=root,
        planning=options.planning,
        context=ContextManager(compaction),
        spending=spending,
        pricing=PriceTable(settings),
    )
    return Host(root, loaded, settings, policy, client, agent, plugins, checkpoints, knowledge.instructions)


def _with_fallback(primary: ChatClient, chain: tuple[ProviderSettings, ...]) -> ChatClient:
    """``primary``, followed by the ``fallback`` list's providers, each client built only when first needed."""
    if not chain:
        return primary
    from hive_providers.registry import create_client

    def later(settings: ProviderSettings) -> LazyChatClient:
        return LazyChatClient(lambda: traced_client(create_client(settings), settings))

    # One attempt per provider: each adapter already retried its failed request (its SDK's retries with
    # backoff), so a provider still failing after them is dead and the next one is asked.
    return FallbackChatClient([primary, *(later(settings) for settings in chain)], max_attempts=1)


@asynccontextmanager
async def plugins_for(host: Host) -> AsyncGenerator[None]:
    """Start the project's MCP servers (``.hive/plugins.yaml`` and the global file) and offer their tools.

    Without a plugins file nothing is started and the ``mcp`` SDK is not even imported.
    """
    plugins = host.plugins
    if not plugins.config.plugins or host.agent is None:
        yield
        return
    async with plugins:
        plugins.sync_tools(host.agent.tools)
        yield
