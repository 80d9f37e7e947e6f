"""Events: what an agent writes to its client, one JSON object per line."""

from __future__ import annotations

from typing import Any

import msgspec

from .limits import TOO_DEEP
from .limits import nested_too_deep
from .values import ErrorCode
from .values import FallbackCategory
from .values import FallbackKind
from .values import RefusalKind
from .values import RiskLevel
from .values import StopReason
from .values import WorkItemKind
from .values import WorkItemStatus

__all__ = [
    "AddendumEvent",
    "AgentSelectedEvent",
    "AgentWorkEvent",
    "ErrorEvent",
    "Event",
    "FallbackEvent",
    "HitlRequestEvent",
    "PlanCompletedEvent",
    "PlanCreatedEvent",
    "PlanStepCompletedEvent",
    "PlanStepStartedEvent",
    "Question",
    "QuestionOption",
    "QuestionRequestEvent",
    "SessionStartedEvent",
    "TextDeltaEvent",
    "ThinkingDeltaEvent",
    "ToolEndEvent",
    "ToolStartEvent",
    "TurnEndEvent",
    "WorkItem",
]


class _Event(msgspec.Struct, tag_field="type", omit_defaults=True, kw_only=True, frozen=True):
    """Base of every event; ``type`` is the discriminator."""


class SessionStartedEvent(_Event, tag="session_started", kw_only=True, frozen=True):
    """The first line a stdio runner writes, before it reads any request."""

    session_id: str
    """The session's id: the one the client asked for, or a generated one."""
    protocol_version: int | None = None
    """The ``PROTOCOL_VERSION`` the runner speaks."""


class TextDeltaEvent(_Event, tag="text_delta", kw_only=True, frozen=True):
    """A piece of the model's reply, in stream order."""

    content: str
    """The text piece."""


class ThinkingDeltaEvent(_Event, tag="thinking_delta", kw_only=True, frozen=True):
    """A piece of the model's reasoning; never folded into ``text_delta``."""

    content: str
    """The reasoning piece."""


class ToolStartEvent(_Event, tag="tool_start", kw_only=True, frozen=True):
    """The model called a tool; its outcome follows as a ``tool_end`` with the same ``call_id``."""

    tool: str
    """The tool's name as offered to the model."""
    input: Any
    """The call's arguments (a JSON object; the raw text when it did not parse)."""
    call_id: str
    """The call's id, unique within the turn."""

    def __post_init__(self) -> None:
        if nested_too_deep(self.input):
            raise ValueError(f"input: {TOO_DEEP}")


class HitlRequestEvent(_Event, tag="hitl_request", kw_only=True, frozen=True):
    """A tool call waits for a human's approval; answer with ``hitl_response``."""

    id: str
    """The request's id, derived from the call id; quote it in the answer."""
    action: str
    """What the call would do, in a few words (the risk reason or the tool name)."""
    target: str
    """What it acts on: the path, command, URL or query; empty when none applies."""
    description: str
    """The question put to the human."""
    tool_name: str | None = None
    """The tool called."""
    arguments: dict[str, Any] | None = None
    """The call's arguments as the model sent them."""
    call_id: str | None = None
    """The waiting call; equals its ``tool_start.call_id``."""
    level: RiskLevel | None = None
    """How risky the call is judged to be."""

    def __post_init__(self) -> None:
        if nested_too_deep(self.arguments):
            raise ValueError(f"arguments: {TOO_DEEP}")


class ToolEndEvent(_Event, tag="tool_end", kw_only=True, frozen=True):
    """The outcome of one tool call; exactly one per ``tool_start``, before ``turn_end``."""

    tool: str
    """The tool's name, as in its ``tool_start``."""
    success: bool
    """Whether the call ran and succeeded; always ``false`` for a refusal."""
    output: str | None = None
    """The result as text (the refusal text the model read, for a refused call)."""
    call_id: str
    """The call's id, as in its ``tool_start``."""
    refusal: RefusalKind | None = None
    """Set when the call was refused or its result withheld."""
    stats: dict[str, int | float | bool | str] | None = None
    """The tool's own report for the client (at most 16 short entries); never shown to the model."""


class QuestionOption(msgspec.Struct, omit_defaults=True, kw_only=True, frozen=True):
    """One choice offered by a question."""

    label: str
    """The choice as the answer names it."""
    description: str | None = None
    """What choosing it means."""


class Question(msgspec.Struct, omit_defaults=True, kw_only=True, frozen=True):
    """One question the agent asks the user."""

    question: str
    """The question's text; answers are keyed by it."""
    header: str | None = None
    """A short title for the question."""
    multi_select: bool
    """Whether several options may be chosen."""
    options: list[QuestionOption]
    """The choices offered."""
    allow_free_text: bool
    """Whether an answer may be free text instead of a label."""


class QuestionRequestEvent(_Event, tag="question_request", kw_only=True, frozen=True):
    """The agent asks the user questions; answer with ``question_response``."""

    id: str
    """The request's id; quote it in the answer."""
    call_id: str | None = None
    """The tool call that asks, when a tool asks."""
    questions: list[Question]
    """The questions, in the order to ask them."""


class FallbackEvent(_Event, tag="fallback", kw_only=True, frozen=True):
    """A model provider failed and the client retried, switched provider, or gave up."""

    kind: FallbackKind
    """What happened next."""
    provider_index: int
    """The 0-based index of the provider that failed."""
    total_providers: int
    """How many providers are configured in the chain."""
    category: FallbackCategory
    """How the failure was classified."""
    message: str
    """The failure, for humans."""
    attempt: int
    """Which attempt on this provider failed (1-based)."""
    max_attempts: int
    """How many attempts each provider gets."""


class AddendumEvent(_Event, tag="addendum", kw_only=True, frozen=True):
    """A note from a turn observer: at most once per turn, after the last ``text_delta``; never in history."""

    content: str
    """The note."""


class TurnEndEvent(_Event, tag="turn_end", kw_only=True, frozen=True):
    """The last event of every turn. Token counts are summed over every model round of the turn."""

    input_tokens: int | None = None
    """Input tokens, when the provider reported usage."""
    output_tokens: int | None = None
    """Output tokens, when the provider reported usage."""
    total_tokens: int | None = None
    """Input plus output tokens."""
    cached_input_tokens: int | None = None
    """Input tokens served from the provider's cache; only when more than zero."""
    stop_reason: StopReason | None = None
    """Why the turn ended; absent when it failed."""
    duration_ms: int | None = None
    """Wall time of the turn in milliseconds."""


class ErrorEvent(_Event, tag="error", kw_only=True, frozen=True):
    """A failure. Inside a turn it comes immediately before that turn's ``turn_end``."""

    message: str
    """What went wrong, for humans; may change between versions."""
    code: ErrorCode | None = None
    """What went wrong, for programs."""


class WorkItem(msgspec.Struct, omit_defaults=True, kw_only=True, frozen=True):
    """One piece of work an agent backend runs beside the main conversation."""

    id: str
    """Stable id, prefixed with the backend (``codex:<thread>``, ``opencode:<session>``)."""
    kind: WorkItemKind
    """What is tracked."""
    status: WorkItemStatus
    """Its state at the time of the snapshot."""
    title: str | None = None
    """The task it was given."""
    summary: str | None = None
    """Its last text, or its failure."""
    blocks_completion: bool = False
    """Whether the turn waits for it before ending."""
    tool_calls: int | None = None
    """Tool calls it has finished."""
    duration_ms: int | None = None
    """How long it has run, in milliseconds."""
    input_tokens: int | None = None
    """Input tokens it has used."""
    output_tokens: int | None = None
    """Output tokens it has used."""


class AgentWorkEvent(_Event, tag="agent_work", kw_only=True, frozen=True):
    """The complete list of an agent backend's side work, sent whenever it changes."""

    items: list[WorkItem]
    """Every tracked item, not just the changed ones."""


class AgentSelectedEvent(_Event, tag="agent_selected", kw_only=True, frozen=True):
    """A router chose the agent that handles the turn."""

    agent_name: str
    """The chosen agent."""
    confidence: float
    """The router's confidence, from 0 to 1."""


class PlanCreatedEvent(_Event, tag="plan_created", kw_only=True, frozen=True):
    """The agent wrote a plan (through its todo tool)."""

    plan_id: str
    """The plan's id."""
    step_count: int
    """How many steps it has."""
    step_descriptions: list[str]
    """Each step, in order."""


class PlanStepStartedEvent(_Event, tag="plan_step_started", kw_only=True, frozen=True):
    """Work on a step of the plan began."""

    plan_id: str
    """The plan's id."""
    step_index: int
    """The 0-based step."""
    description: str
    """The step."""


class PlanStepCompletedEvent(_Event, tag="plan_step_completed", kw_only=True, frozen=True):
    """A step of the plan ended."""

    plan_id: str
    """The plan's id."""
    step_index: int
    """The 0-based step."""
    success: bool
    """Whether the step was done."""
    summary: str | None = None
    """What came of it."""


class PlanCompletedEvent(_Event, tag="plan_completed", kw_only=True, frozen=True):
    """Every step of the plan ended, or the plan was dropped."""

    plan_id: str
    """The plan's id."""
    success: bool
    """Whether every step was done."""
    summary: str | None = None
    """What came of it."""


Event = (
    SessionStartedEvent
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | ToolStartEvent
    | HitlRequestEvent
    | ToolEndEvent
    | QuestionRequestEvent
    | FallbackEvent
    | AddendumEvent
    | TurnEndEvent
    | ErrorEvent
    | AgentWorkEvent
    | AgentSelectedEvent
    | PlanCreatedEvent
    | PlanStepStartedEvent
    | PlanStepCompletedEvent
    | PlanCompletedEvent
)
"""Any event an agent may write."""
