"""hive-protocol: the turn-stream wire contract of hive.

Requests go from a client to an agent and events come back, one JSON object per line. This package holds the
types, the one canonical encoder, tolerant decoders, the line framing and the sequence verifier. It depends on
msgspec alone, so a client can speak to any hive runner with nothing else installed.
"""

from .codec import ExtensionClash
from .codec import ProtocolError
from .codec import ProtocolExtension
from .codec import UnknownEvent
from .codec import UnreadableRequest
from .codec import decode_event
from .codec import decode_request
from .codec import encode
from .events import AddendumEvent
from .events import AgentSelectedEvent
from .events import AgentWorkEvent
from .events import ErrorEvent
from .events import Event
from .events import FallbackEvent
from .events import HitlRequestEvent
from .events import PlanCompletedEvent
from .events import PlanCreatedEvent
from .events import PlanStepCompletedEvent
from .events import PlanStepStartedEvent
from .events import Question
from .events import QuestionOption
from .events import QuestionRequestEvent
from .events import SessionStartedEvent
from .events import TextDeltaEvent
from .events import ThinkingDeltaEvent
from .events import ToolEndEvent
from .events import ToolStartEvent
from .events import TurnEndEvent
from .events import WorkItem
from .limits import MAX_NESTING_DEPTH
from .limits import MAX_QUOTED_CHARS
from .limits import excerpt
from .limits import nested_too_deep
from .lines import DEFAULT_MAX_LINE_BYTES
from .lines import LineSplitter
from .lines import LineTooLong
from .lines import aiter_lines
from .lines import iter_lines
from .options import InvalidTurnOptions
from .options import validate_tool_mode
from .options import validate_turn_options
from .package_version import version_attribute as _version_attribute
from .requests import CancelRequest
from .requests import ContextUpdateRequest
from .requests import HitlResponseRequest
from .requests import QuestionResponseRequest
from .requests import Request
from .requests import ShutdownRequest
from .requests import TurnOptions
from .requests import UserMessageRequest
from .sequence import RULES
from .sequence import StreamVerifier
from .sequence import Violation
from .sequence import verify
from .sse import ServerSentEvent
from .sse import SseDecoder
from .sse import sse_event
from .values import ERROR_CODES
from .values import FALLBACK_CATEGORIES
from .values import FALLBACK_KINDS
from .values import REASONING_EFFORTS
from .values import REFUSAL_KINDS
from .values import RISK_LEVELS
from .values import STOP_REASONS
from .values import TOOL_MODES
from .values import WORK_ITEM_KINDS
from .values import WORK_ITEM_STATUSES
from .values import ErrorCode
from .values import FallbackCategory
from .values import FallbackKind
from .values import ReasoningEffort
from .values import RefusalKind
from .values import RiskLevel
from .values import StopReason
from .values import WorkItemKind
from .values import WorkItemStatus
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
    "ExtensionClash",
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
    "ProtocolExtension",
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
    return _version_attribute(__name__, "hive-protocol", name)
