"""Subagents: the ``delegate`` tool hands a task to another agent and returns its final text.

One tool, ``delegate(agent, task)``, offers every subagent: the agents are listed in its description and the
``agent`` argument is limited to their names. One tool rather than one per agent keeps the offered tools few and
fixed (a project with ten agents adds one tool, not ten, to every request, and tool retrieval has one name to keep
or drop), gives the permission rules one name to judge, and keeps the limits (``maxDepth``, ``maxConcurrent``) in
one place.

A subagent runs with its own context: a fresh conversation holding its instructions and the task, and only the
tools its definition names. It is either a model, run by hive's own loop (:func:`model_subagent`), or a
coding-agent CLI the host starts for one turn; either way it is a processor, as every runner drives. Its calls are
judged by the same rules and its approvals reach the same approval service as the agent's own, naming the
subagent (:attr:`ApprovalRequest.subagent <hive_core.approvals.ApprovalRequest.subagent>`), and asked under the
delegation call the client saw start.

Each run is announced with ``agent_selected`` and reported with ``agent_work`` snapshots (every run of the
session, the finished ones included) when it starts, as its tool calls finish and when it ends. Its tokens are
added to the turn's (:attr:`ToolOutcome.usage <hive_core.tools.ToolOutcome.usage>`). Cancelling the turn
cancels it. At most ``max_concurrent`` subagents of one level run at once; the further delegations wait their
turn. A subagent at depth ``max_depth`` is never given the tool, so ``max_depth: 1`` means subagents cannot
delegate further.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Final

import anyio
import msgspec

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.approvals import ApprovalService
from hive_core.approvals import ToolCallPolicy
from hive_core.chat import AsyncClosable
from hive_core.chat import ChatClient
from hive_core.chat import UsageUpdate
from hive_core.context import CompactionSettings
from hive_core.context import ContextManager
from hive_core.loop import DEFAULT_MAX_ITERATIONS
from hive_core.loop import Agent
from hive_core.pipeline import default_middlewares
from hive_core.tool_names import DELEGATE
from hive_core.tools import EventSink
from hive_core.tools import Tool
from hive_core.tools import ToolContext
from hive_core.tools import ToolOutcome
from hive_protocol import AgentSelectedEvent
from hive_protocol import AgentWorkEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import WorkItem
from hive_protocol import WorkItemStatus

__all__ = [
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_MAX_DEPTH",
    "DELEGATE_TOOL_NAME",
    "Delegation",
    "Processor",
    "Subagent",
    "SubagentLaunch",
    "model_subagent",
]

DELEGATE_TOOL_NAME: Final = DELEGATE
"""The tool's name, and the name an agent definition's ``tools`` lists to let the subagent delegate further."""

DEFAULT_MAX_DEPTH: Final = 2
"""Levels of delegation at most, unless configured (``delegation.maxDepth``)."""

DEFAULT_MAX_CONCURRENT: Final = 3
"""Subagents of one level running at once at most, unless configured (``delegation.maxConcurrent``)."""

Processor = Callable[[UserMessageRequest, EventSink], Awaitable[None]]
"""What runs one turn: a ``user_message`` in, events out, ending with ``turn_end`` (hive's loop or a backend)."""


@dataclass(frozen=True)
class SubagentLaunch:
    """What a subagent's run is given by the delegation that starts it."""

    approvals: ApprovalService | None
    """The agent's approval service, asking under the delegation call and naming the subagent."""
    delegate: Tool | None
    """The ``delegate`` tool one level down, when the subagent's definition names it and ``max_depth`` allows
    it; ``None`` otherwise."""


@dataclass(frozen=True)
class Subagent:
    """An agent the ``delegate`` tool can hand a task to."""

    name: str
    """The name the model calls it by."""
    description: str
    """What it is for, listed in the tool's description."""
    launch: Callable[[SubagentLaunch], AbstractAsyncContextManager[Processor]]
    """Starts it for one task; what the block yields runs the task's one turn, and leaving the block stops it
    (a CLI's process, a model client's connections)."""
    delegates: bool = False
    """Its definition names the ``delegate`` tool: it may hand work further down, within ``max_depth``."""


class _NamingApprovals:
    """The agent's approval service, asked for a subagent: under the delegation call, naming the subagent."""

    def __init__(self, approvals: ApprovalService, subagent: str, call_id: str) -> None:
        self.approvals = approvals
        self.subagent = subagent
        self.call_id = call_id

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask the agent's service, with the subagent named in front of any deeper one."""
        if request.subagent is None:
            named, inner = self.subagent, request.call_id
        else:
            named = f"{self.subagent} > {request.subagent}"
            inner = f"{request.call_id}.{request.subagent_call_id}"
        return await self.approvals.request(
            msgspec.structs.replace(request, call_id=self.call_id, subagent=named, subagent_call_id=inner)
        )


@dataclass
class _Run:
    """One delegation as ``agent_work`` reports it."""

    id: str
    agent: str
    task: str
    started: float
    status: WorkItemStatus = "running"
    summary: str | None = None
    tool_calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    duration_ms: int | None = None

    def item(self, now: float) -> WorkItem:
        return WorkItem(
            id=self.id,
            kind="subagent",
            status=self.status,
            title=f"{self.agent}: {self.task}",
            summary=self.summary,
            blocks_completion=self.status == "running",
            tool_calls=self.tool_calls,
            duration_ms=self.duration_ms
            if self.duration_ms is not None
            else int((now - self.started) * 1000),
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
        )


_SUMMARY_CHARS: Final = 200


@dataclass
class _Level:
    limiter: anyio.CapacityLimiter
    runs: dict[str, _Run] = field(default_factory=dict[str, _Run])


class Delegation:
    """The subagents of one session and their limits; :meth:`tool` is the ``delegate`` tool of a level.

    Keep one per session: the runs reported in ``agent_work`` and the ``max_concurrent`` slots are its own. Raises
    ``ValueError`` when there is no agent, two share a name, or a limit is below 1.
    """

    def __init__(
        self,
        agents: Sequence[Subagent],
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not agents:
            raise ValueError("delegation needs at least one agent")
        if max_depth < 1 or max_concurrent < 1:
            raise ValueError(
                f"max_depth and max_concurrent must be at least 1, got {max_depth}, {max_concurrent}"
            )
        self.agents: dict[str, Subagent] = {}
        """The subagents by name, in definition order."""
        for agent in agents:
            if agent.name in self.agents:
                raise ValueError(f"two subagents are named {agent.name!r}")
            self.agents[agent.name] = agent
        self.max_depth = max_depth
        """Levels of delegation at most: a subagent at this depth gets no ``delegate`` tool."""
        self.max_concurrent = max_concurrent
        """Subagents of one level running at once at most."""
        self.clock = clock
        self._levels: dict[int, _Level] = {}

    def description(self) -> str:
        """The tool's description: what it does and every agent with what it is for."""
        listed = "\n".join(
            f"- {agent.name}: {agent.description or '(no description)'}" for agent in self.agents.values()
        )
        return (
            "Hand a self-contained task to a subagent and get its final answer back. The subagent starts with a "
            "fresh conversation: it sees only the task you write, so say everything it needs (files, goals, "
            f"constraints). Agents:\n{listed}"
        )

    def tool(self, depth: int = 1, approvals: ApprovalService | None = None) -> Tool | None:
        """The ``delegate`` tool whose subagents run at ``depth`` (1: the agent's own delegations), asking
        ``approvals`` for what their calls need; ``None`` past ``max_depth``."""
        if depth > self.max_depth:
            return None
        level = self._levels.get(depth)
        if level is None:
            # Each level has its own slots: a subagent waiting on its own delegation must not hold the slot its
            # child needs.
            level = self._levels[depth] = _Level(anyio.CapacityLimiter(self.max_concurrent))

        async def delegate(context: ToolContext, agent: str, task: str) -> ToolOutcome:
            """Hand a task to a subagent.

            Args:
                agent: The subagent's name.
                task: The whole task, written for an agent that knows nothing of this conversation.
            """
            return await self._run(level, depth, approvals, context, agent, task)

        made = Tool(delegate, name=DELEGATE_TOOL_NAME, description=self.description(), delegates=True)
        made.parameters["properties"]["agent"]["enum"] = list(self.agents)
        return made

    def _snapshot(self, level: _Level, emit: EventSink) -> None:
        now = self.clock()
        emit(AgentWorkEvent(items=[run.item(now) for run in level.runs.values()]))

    async def _run(
        self,
        level: _Level,
        depth: int,
        approvals: ApprovalService | None,
        context: ToolContext,
        name: str,
        task: str,
    ) -> ToolOutcome:
        subagent = self.agents.get(name)
        if subagent is None:
            missing = f"There is no subagent named {name!r}. Agents: {', '.join(self.agents)}."
            return ToolOutcome(content=missing, success=False, error=f"LookupError: {missing}")
        if not task.strip():
            return ToolOutcome(
                content="The task is empty: write the whole task for the subagent.", success=False
            )
        emit = context.emit
        run = _Run(f"delegate:{context.call_id}", name, task, self.clock())
        named = _NamingApprovals(approvals, name, context.call_id) if approvals is not None else None
        deeper = self.tool(depth + 1, named) if subagent.delegates else None
        emit(AgentSelectedEvent(agent_name=name, confidence=1.0))
        async with level.limiter:
            run.started = self.clock()
            level.runs[run.id] = run
            self._snapshot(level, emit)
            text: list[str] = []
            errors: list[str] = []
            end: TurnEndEvent | None = None

            def collect(event: Event) -> None:
                nonlocal end
                if isinstance(event, TextDeltaEvent):
                    text.append(event.content)
                elif isinstance(event, ToolEndEvent):
                    run.tool_calls += 1
                    self._snapshot(level, emit)
                elif isinstance(event, ErrorEvent):
                    errors.append(event.message)
                elif isinstance(event, TurnEndEvent):
                    end = event

            try:
                async with subagent.launch(SubagentLaunch(approvals=named, delegate=deeper)) as processor:
                    await processor(UserMessageRequest(content=task), collect)
            except anyio.get_cancelled_exc_class():
                self._finish(run, "stopped", "cancelled with the turn", end)
                self._snapshot(level, emit)
                raise
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            answer = "".join(text).strip()
            if errors:
                failure = "; ".join(errors)
                self._finish(run, "failed", failure, end)
                self._snapshot(level, emit)
                content = f"The subagent {name} failed: {failure}"
                if answer:
                    content += f"\nIts text before it failed:\n{answer}"
                return ToolOutcome(
                    content=content, success=False, error=f"SubagentError: {failure}", usage=_usage(end)
                )
            self._finish(run, "completed", answer, end)
            self._snapshot(level, emit)
        return ToolOutcome(
            content=answer or f"The subagent {name} finished without an answer.",
            usage=_usage(end),
            stats={"agent": name, "tool_calls": run.tool_calls},
        )

    def _finish(self, run: _Run, status: WorkItemStatus, summary: str, end: TurnEndEvent | None) -> None:
        run.status = status
        run.summary = summary[:_SUMMARY_CHARS] or None
        run.duration_ms = int((self.clock() - run.started) * 1000)
        if end is not None:
            run.input_tokens = end.input_tokens
            run.output_tokens = end.output_tokens


def _usage(end: TurnEndEvent | None) -> UsageUpdate | None:
    if end is None or (end.input_tokens is None and end.output_tokens is None):
        return None
    return UsageUpdate(end.input_tokens or 0, end.output_tokens or 0, end.cached_input_tokens or 0)


def model_subagent(
    name: str,
    connect: Callable[[], ChatClient],
    *,
    description: str = "",
    instructions: str | None = None,
    tools: Mapping[str, Tool] | None = None,
    delegates: bool = False,
    policy: ToolCallPolicy | None = None,
    working_dir: Path | None = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    max_output_tokens: int | None = None,
    tool_timeout: float | None = None,
    compaction: CompactionSettings | None = None,
) -> Subagent:
    """A subagent run by hive's own loop on the model ``connect`` gives a client for (opened for each task and
    closed after it): ``instructions`` as its system prompt, ``tools`` (by name) its only tools, every call judged
    by ``policy`` and asked about through the approvals its launch brings. ``tools`` is read at each launch, so
    a mapping that resolves names late (tools added after the host is built) serves."""
    own: Mapping[str, Tool] = tools or {}

    @asynccontextmanager
    async def launch(given: SubagentLaunch) -> AsyncGenerator[Processor]:
        client = connect()
        try:
            agent = Agent(
                client,
                tools=[*own.values(), *((given.delegate,) if given.delegate is not None else ())],
                instructions=instructions,
                policy=policy,
                approvals=given.approvals,
                middlewares=default_middlewares(policy, given.approvals),
                max_output_tokens=max_output_tokens,
                tool_timeout=tool_timeout,
                working_dir=working_dir,
                context=ContextManager(compaction),
                max_iterations=max_iterations,
            )
            yield agent.session()
        finally:
            if isinstance(client, AsyncClosable):
                with anyio.CancelScope(shield=True):
                    await client.aclose()

    return Subagent(name, description, launch, delegates)
