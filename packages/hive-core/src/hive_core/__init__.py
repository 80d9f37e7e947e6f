"""hive-core: the hive SDK.

Bring any :class:`ChatClient`, declare tools from typed functions, and run turns through the agent loop with
its guarded tool pipeline; serve the same session in process, over stdio or over HTTP. Events are the structs
of :mod:`hive_protocol`.
"""

from .approvals import ApprovalDecision, ApprovalRequest, ApprovalService, ToolCallPolicy
from .budget import TokenBudgetChatClient
from .chat import (
    ChatClient,
    ChatOptions,
    ChatUpdate,
    FinishUpdate,
    NoticeUpdate,
    TextUpdate,
    ThinkingUpdate,
    ToolCallUpdate,
    ToolSpec,
    UsageUpdate,
)
from .failures import ChatError, classify
from .fallback import FallbackChatClient
from .hitl import HitlBridge
from .loop import Agent, AgentSession
from .messages import Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from .pipeline import Invocation, Middleware, Pipeline, default_middlewares
from .runners import Processor, SessionRunner, StdioRunner, collect_turn, open_turn, run_stdio
from .tools import EventSink, Tool, ToolArgumentError, ToolContext, ToolOutcome, tool

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentSession",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalService",
    "ChatClient",
    "ChatError",
    "ChatOptions",
    "ChatUpdate",
    "EventSink",
    "FallbackChatClient",
    "FinishUpdate",
    "HitlBridge",
    "Invocation",
    "Message",
    "Middleware",
    "NoticeUpdate",
    "Pipeline",
    "Processor",
    "SessionRunner",
    "StdioRunner",
    "TextPart",
    "TextUpdate",
    "ThinkingPart",
    "ThinkingUpdate",
    "TokenBudgetChatClient",
    "Tool",
    "ToolArgumentError",
    "ToolCallPart",
    "ToolCallPolicy",
    "ToolCallUpdate",
    "ToolContext",
    "ToolOutcome",
    "ToolResultPart",
    "ToolSpec",
    "UsageUpdate",
    "classify",
    "collect_turn",
    "default_middlewares",
    "open_turn",
    "run_stdio",
    "tool",
]
