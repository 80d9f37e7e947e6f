"""The ``delegation`` section made into the ``delegate`` tool: off until ``delegation.enabled`` and an agent is
defined. A model agent runs on its ``provider`` (unset: the session's) through the provider registry, as the
session's own model does; a ``backend`` agent is a coding-agent CLI run for one turn through the backend registry,
as ``--agent`` runs one, judged by the same rules and asking the same approver.

An agent's ``rules`` are judged beside the project's on each of its tool calls (:class:`_TightenedPolicy`): the
stricter verdict wins, and its rules can only ask or deny, so an agent file never loosens the project's.

Every name is checked now, so a definition that cannot work stops the start with its file and line. An agent
of a project the user has not trusted that sets an ``endpoint`` is left out (:func:`untrusted_agent_endpoints`):
the model could otherwise hand the conversation, as a task, to a server the project chose.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import cast

import anyio
import msgspec

from hive_core import ApprovalService
from hive_core import ChatClient
from hive_core import PathJudge
from hive_core import Tool
from hive_core.approvals import Verdict
from hive_core.approvals import strictest
from hive_core.config import IgnoredSetting
from hive_core.config import LoadedConfig
from hive_core.config.agents import AgentDefinition
from hive_core.config.agents import AgentDefinitionError
from hive_core.config.agents import agent_definitions
from hive_core.tools import EventSink
from hive_protocol import UserMessageRequest
from hive_providers import ProviderSettings

if TYPE_CHECKING:
    from hive_core.approvals import ToolCallPolicy
    from hive_core.builtin_tools.delegate import Processor
    from hive_core.builtin_tools.delegate import Subagent
    from hive_core.builtin_tools.delegate import SubagentLaunch
    from hive_core.context import CompactionSettings
    from hive_core.permissions import PermissionRules

__all__ = ["delegation_tools", "untrusted_agent_endpoints"]


class _TightenedPolicy:
    """The project's policy with one agent's ``rules`` judged beside it: the stricter verdict wins (deny over
    ask over allow), so the agent's rules add asks and denials and take nothing away."""

    def __init__(
        self, base: ToolCallPolicy, definition: AgentDefinition, rules: PermissionRules, root: Path
    ) -> None:
        from hive_core.permissions import PermissionPolicy

        self._base = base
        self._agent = definition.name
        # Where none of the agent's rules matches, its verdict is the weakest, so the project's stands.
        self._own = PermissionPolicy(
            msgspec.structs.replace(rules, default_action="allow", ask_before_delete=False), root
        )

    def _stricter(self, base: Verdict | None, own: Verdict) -> Verdict:
        mine = msgspec.structs.replace(own, reason=f"agent {self._agent!r}'s rules: {own.reason}")
        # Ties keep the first: the project's verdict, unless the agent's is stricter.
        return mine if base is None else strictest([base, mine])

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        """The stricter of the project's verdict and the agent's rules' on the call."""
        return self._stricter(
            self._base.evaluate(tool_name, arguments), self._own.evaluate(tool_name, arguments)
        )

    def is_read_only(self, tool_name: str) -> bool:
        """As the project's policy says (an agent's rules cannot widen what planning mode runs)."""
        return self._base.is_read_only(tool_name)

    def judge_path(self, category: Literal["read", "edit"], path: str) -> Verdict:
        """The stricter of the project's verdict and the agent's rules' on reading or changing ``path``."""
        base = self._base.judge_path(category, path) if isinstance(self._base, PathJudge) else None
        return self._stricter(base, self._own.judge_path(category, path))

    def judge_url(self, url: str, addresses: Sequence[str]) -> Verdict:
        """The stricter of the project's verdict and the agent's rules' on requesting ``url``."""
        from hive_core.permissions.web import UrlJudge

        base = self._base.judge_url(url, addresses) if isinstance(self._base, UrlJudge) else None
        return self._stricter(base, self._own.judge_url(url, addresses))


def _policy_of(definition: AgentDefinition, policy: ToolCallPolicy, root: Path) -> ToolCallPolicy:
    """``policy``, tightened by the agent's ``rules`` when it has some."""
    if definition.rules is None:
        return policy
    return _TightenedPolicy(policy, definition, definition.rules, root)


class _LateTools(Mapping[str, Tool]):
    """An agent's tools with its MCP tools found by name when it launches: the MCP servers start after the host
    is built, so their tools are known only then. A name no server offers is the definition's error."""

    def __init__(
        self,
        definition: AgentDefinition,
        known: Mapping[str, Tool],
        later: Sequence[str],
        mcp_tools: Callable[[], Mapping[str, Tool]],
    ) -> None:
        self._definition = definition
        self._known = known
        self._later = later
        self._mcp_tools = mcp_tools

    def _resolved(self) -> dict[str, Tool]:
        from hive_core.permissions import MCP_TOOL_PREFIX

        offered = self._mcp_tools()
        missing = [name for name in self._later if name not in offered]
        if missing:
            known = ", ".join(sorted(name for name in offered if name.startswith(MCP_TOOL_PREFIX))) or "none"
            raise self._definition.error(
                "tools", f"no MCP server offers {', '.join(map(repr, missing))} (MCP tools: {known})"
            )
        return {**self._known, **{name: offered[name] for name in self._later}}

    def __getitem__(self, name: str) -> Tool:
        return self._resolved()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._known) + len(self._later)


def _model_agent(
    definition: AgentDefinition,
    loaded: LoadedConfig,
    working: ProviderSettings,
    tools: Mapping[str, Tool],
    mcp_tools: Callable[[], Mapping[str, Tool]] | None,
    *,
    policy: ToolCallPolicy,
    max_iterations: int,
    max_output_tokens: int | None,
    tool_timeout: float | None,
    compaction: CompactionSettings,
) -> Subagent:
    from hive_core.builtin_tools.delegate import DELEGATE_TOOL_NAME
    from hive_core.builtin_tools.delegate import model_subagent
    from hive_core.permissions import MCP_TOOL_PREFIX
    from hive_providers.registry import ProviderSelectionError
    from hive_providers.registry import UnknownProviderError
    from hive_providers.registry import choose_provider
    from hive_providers.registry import create_client
    from hive_providers.registry import provider_spec

    if definition.provider is not None:
        try:
            provider_spec(definition.provider)
        except UnknownProviderError as exc:
            raise definition.error("provider", str(exc)) from None
    try:
        settings = choose_provider(
            loaded, definition.provider or working.provider, definition.model or working.model
        ).settings
    except ProviderSelectionError as exc:
        raise definition.error("provider" if definition.provider else "model", str(exc)) from None
    own: dict[str, Tool] = {}
    later: list[str] = []
    for name in definition.tools:
        if name == DELEGATE_TOOL_NAME:
            continue
        found = tools.get(name)
        if found is None and mcp_tools is not None and name.startswith(MCP_TOOL_PREFIX):
            later.append(name)
            continue
        if found is None:
            known = ", ".join(sorted({*tools, DELEGATE_TOOL_NAME}))
            raise definition.error("tools", f"there is no tool named {name!r} (tools: {known})")
        own[name] = found

    def connect() -> ChatClient:
        from .telemetry import traced_client

        return traced_client(create_client(settings), settings)

    return model_subagent(
        definition.name,
        connect,
        description=definition.description,
        instructions=definition.instructions,
        tools=_LateTools(definition, own, later, mcp_tools) if later and mcp_tools is not None else own,
        delegates=DELEGATE_TOOL_NAME in definition.tools,
        policy=policy,
        working_dir=loaded.project_root,
        max_iterations=max_iterations,
        max_output_tokens=max_output_tokens,
        tool_timeout=tool_timeout,
        compaction=compaction,
    )


def _backend_agent(definition: AgentDefinition, loaded: LoadedConfig, *, policy: ToolCallPolicy) -> Subagent:
    from hive_core.builtin_tools.delegate import Subagent
    from hive_core.sandbox import SandboxSettings
    from hive_providers.backends.kit.errors import UnknownBackend
    from hive_providers.backends.kit.specs import ENDPOINT_MODEL
    from hive_providers.backends.kit.specs import BackendOptions
    from hive_providers.backends.kit.specs import ModelEndpoint
    from hive_providers.backends.registry import create_backend
    from hive_providers.backends.registry import resolve_backend

    assert definition.backend is not None
    if definition.tools:
        raise definition.error("tools", "a coding-agent CLI uses its own tools: 'tools' is for a model agent")
    try:
        spec = resolve_backend(definition.backend)
    except UnknownBackend as exc:
        raise definition.error("backend", str(exc)) from None
    endpoint = None
    if definition.endpoint is not None:
        if not spec.offline:
            reason = spec.needs_login or "hive has no offline configuration for it"
            raise definition.error("endpoint", f"{spec.name} cannot run against an endpoint: {reason}")
        endpoint = ModelEndpoint(base_url=definition.endpoint, model=definition.model or ENDPOINT_MODEL)
    sandbox = SandboxSettings.from_config(loaded)
    instructions = definition.instructions

    @asynccontextmanager
    async def launch(given: SubagentLaunch) -> AsyncGenerator[Processor]:
        backend = create_backend(
            spec,
            BackendOptions(
                cwd=loaded.project_root,
                model=None if endpoint is not None else definition.model,
                endpoint=endpoint,
                policy=policy,
                approvals=given.approvals,
                sandbox=sandbox,
            ),
        )

        async def run(request: UserMessageRequest, emit: EventSink) -> None:
            # A CLI has its own system prompt: the agent's instructions lead the task.
            task = f"{instructions}\n\n{request.content}" if instructions else request.content
            await backend(UserMessageRequest(content=task), emit)

        try:
            yield run
        finally:
            with anyio.CancelScope(shield=True):
                await backend.aclose()

    return Subagent(definition.name, definition.description, launch)


def delegation_tools(
    loaded: LoadedConfig,
    working: ProviderSettings,
    tools: Mapping[str, Tool],
    *,
    policy: ToolCallPolicy,
    approvals: ApprovalService | None,
    max_iterations: int,
    max_output_tokens: int | None,
    tool_timeout: float | None,
    compaction: CompactionSettings,
    mcp_tools: Callable[[], Mapping[str, Tool]] | None = None,
) -> tuple[Tool, ...]:
    """The ``delegate`` tool when ``delegation.enabled`` and an agent is defined (empty otherwise), its
    subagents using ``tools`` (the agent's, by name) as their definitions say and asking ``approvals``.

    ``mcp_tools`` gives the session's tools once its MCP servers are started (``None``: there are none): an
    ``mcp__`` name is looked up there when its subagent launches, and one no server offers fails that launch with
    the definition's file and line.

    Raises :class:`~hive_core.config.agents.AgentDefinitionError` (file and line) for a definition naming a
    provider, backend or tool that does not exist, or a provider that is not set up.
    """
    definitions = [
        definition for definition in agent_definitions(loaded) if not _needs_trust(definition, loaded)
    ]
    if not definitions:
        return ()
    from hive_core.builtin_tools.delegate import Delegation

    subagents = [
        _backend_agent(definition, loaded, policy=_policy_of(definition, policy, loaded.project_root))
        if definition.backend is not None
        else _model_agent(
            definition,
            loaded,
            working,
            tools,
            mcp_tools,
            policy=_policy_of(definition, policy, loaded.project_root),
            max_iterations=max_iterations,
            max_output_tokens=max_output_tokens,
            tool_timeout=tool_timeout,
            compaction=compaction,
        )
        for definition in definitions
    ]
    section = loaded.section("delegation")
    delegation = Delegation(
        subagents,
        max_depth=cast("int", section["maxDepth"]),
        max_concurrent=cast("int", section["maxConcurrent"]),
    )
    made = delegation.tool(1, approvals)
    return (made,) if made is not None else ()


def untrusted_agent_endpoints(loaded: LoadedConfig) -> list[IgnoredSetting]:
    """The agents of an untrusted project (its agents directory or its own config) that set an ``endpoint``:
    they are left out of delegation until the user trusts the project. Empty for a trusted project, and when a
    definition cannot be read (the start reports that itself)."""
    if loaded.trusted:
        return []
    try:
        definitions = agent_definitions(loaded)
    except AgentDefinitionError:
        return []
    return [
        IgnoredSetting(
            setting=f"agent {definition.name!r} endpoint: {definition.endpoint}",
            source=definition.source,
            line=definition.lines.get("endpoint"),
        )
        for definition in definitions
        if _needs_trust(definition, loaded)
    ]


def _needs_trust(definition: AgentDefinition, loaded: LoadedConfig) -> bool:
    return (
        definition.endpoint is not None
        and not loaded.trusted
        and Path(definition.source).is_relative_to(loaded.project_root)
    )
