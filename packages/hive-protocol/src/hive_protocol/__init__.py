"""hive-protocol: the turn-stream wire contract of hive.

Requests go from a client to an agent and events come back, one JSON object per line. This package holds the
types, the one canonical encoder, tolerant decoders, the line framing and the sequence verifier. It depends on
msgspec alone, so a client can speak to any hive runner with nothing else installed.
"""

from .codec import ProtocolError, UnknownEvent, UnreadableRequest, decode_event, decode_request, encode
from .events import (
    AddendumEvent,
    AgentSelectedEvent,
    AgentWorkEvent,
    ErrorEvent,
    Event,
    FallbackEvent,
    HitlRequestEvent,
    PlanCompletedEvent,
    PlanCreatedEvent,
    PlanStepCompletedEvent,
    PlanStepStartedEvent,
    Question,
    QuestionOption,
    QuestionRequestEvent,
    SessionStartedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolEndEvent,
    ToolStartEvent,
    TurnEndEvent,
    WorkItem,
)
from .limits import MAX_NESTING_DEPTH, MAX_QUOTED_CHARS, excerpt, nested_too_deep
from .lines import DEFAULT_MAX_LINE_BYTES, LineSplitter, LineTooLong, aiter_lines, iter_lines
from .options import InvalidTurnOptions, validate_tool_mode, validate_turn_options
from .requests import (
    CancelRequest,
    ContextUpdateRequest,
    HitlResponseRequest,
    QuestionResponseRequest,
    Request,
    ShutdownRequest,
    TurnOptions,
    UserMessageRequest,
)
from .sequence import RULES, StreamVerifier, Violation, verify
from .sse import ServerSentEvent, SseDecoder, sse_event
from .values import (
    ERROR_CODES,
    FALLBACK_CATEGORIES,
    FALLBACK_KINDS,
    REASONING_EFFORTS,
    REFUSAL_KINDS,
    RISK_LEVELS,
    STOP_REASONS,
    TOOL_MODES,
    WORK_ITEM_KINDS,
    WORK_ITEM_STATUSES,
    ErrorCode,
    FallbackCategory,
    FallbackKind,
    ReasoningEffort,
    RefusalKind,
    RiskLevel,
    StopReason,
    WorkItemKind,
    WorkItemStatus,
)
from .version import PROTOCOL_VERSION

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "ERROR_CODES",
    "FALLBACK_CATEGORIES",
    "FALLBACK_KINDS",
    "MAX_NESTING_DEPTH",
    "MAX_QUOTED_CHARS",
    "PROTOCOL_VERSION",
    "REASONING_EFFORTS",
    "REFUSAL_KINDS",
    "RISK_LEVELS",
    "RULES",
    "STOP_REASONS",
    "TOOL_MODES",
    "WORK_ITEM_KINDS",
    "WORK_ITEM_STATUSES",
    "AddendumEvent",
    "AgentSelectedEvent",
    "AgentWorkEvent",
    "CancelRequest",
    "ContextUpdateRequest",
    "ErrorCode",
    "ErrorEvent",
    "Event",
    "FallbackCategory",
    "FallbackEvent",
    "FallbackKind",
    "HitlRequestEvent",
    "HitlResponseRequest",
    "InvalidTurnOptions",
    "LineSplitter",
    "LineTooLong",
    "PlanCompletedEvent",
    "PlanCreatedEvent",
    "PlanStepCompletedEvent",
    "PlanStepStartedEvent",
    "ProtocolError",
    "Question",
    "QuestionOption",
    "QuestionRequestEvent",
    "QuestionResponseRequest",
    "ReasoningEffort",
    "RefusalKind",
    "Request",
    "RiskLevel",
    "ServerSentEvent",
    "SessionStartedEvent",
    "ShutdownRequest",
    "SseDecoder",
    "StopReason",
    "StreamVerifier",
    "TextDeltaEvent",
    "ThinkingDeltaEvent",
    "ToolEndEvent",
    "ToolStartEvent",
    "TurnEndEvent",
    "TurnOptions",
    "UnknownEvent",
    "UnreadableRequest",
    "UserMessageRequest",
    "Violation",
    "WorkItem",
    "WorkItemKind",
    "WorkItemStatus",
    "aiter_lines",
    "decode_event",
    "decode_request",
    "encode",
    "excerpt",
    "iter_lines",
    "nested_too_deep",
    "sse_event",
    "validate_tool_mode",
    "validate_turn_options",
    "verify",
]


def __getattr__(name: str) -> str:
    # ``__version__`` is read from the installed metadata when asked for: importing importlib.metadata costs
    # ~25 ms, more than the rest of ``hive --help``, and only ``--version`` and ``doctor`` need it.
    if name == "__version__":
        from importlib.metadata import version

        return version("hive-protocol")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
