"""hive-core: the hive SDK.

Bring any :class:`ChatClient`, declare tools from typed functions, and run turns through the agent loop with
its guarded tool pipeline; serve the same session in process (:func:`open_turn`, :func:`collect_turn`) or as
JSON Lines over stdio (:class:`StdioRunner`, :func:`run_stdio`) or to a host over HTTP (:class:`HttpRunner`,
:func:`run_http`). Events are the structs of :mod:`hive_protocol`.
"""

from hive_protocol.package_version import version_attribute as _version_attribute

from .approvals import (
    ALLOW_ALL,
    AllowEverything,
    ApprovalDecision,
    ApprovalRequest,
    ApprovalService,
    PathJudge,
    ToolCallPolicy,
)
from .backends import AgentBackend, BackendProbe, HiveBackend
from .budget import TokenBudgetChatClient
from .chat import (
    AsyncClosable,
    Capabilities,
    ChatClient,
    ChatOptions,
    ChatUpdate,
    FinishUpdate,
    ModelLister,
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
from .questions import QuestionBridge, QuestionService
from .runners import (
    HttpRunner,
    HttpRunnerError,
    Processor,
    SessionRunner,
    StdioRunner,
    collect_turn,
    open_turn,
    run_http,
    run_stdio,
)
from .tools import EventSink, Tool, ToolArgumentError, ToolContext, ToolOutcome, tool
from .turn_deadline import PausingQuestions, TurnDeadline

__all__ = [
    "ALLOW_ALL",
    "Agent",
    "AgentBackend",
    "AgentSession",
    "AllowEverything",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalService",
    "AsyncClosable",
    "BackendProbe",
    "Capabilities",
    "ChatClient",
    "ChatError",
    "ChatOptions",
    "ChatUpdate",
    "EventSink",
    "FallbackChatClient",
    "FinishUpdate",
    "HitlBridge",
    "HiveBackend",
    "HttpRunner",
    "HttpRunnerError",
    "Invocation",
    "Message",
    "Middleware",
    "ModelLister",
    "NoticeUpdate",
    "PathJudge",
    "PausingQuestions",
    "Pipeline",
    "Processor",
    "QuestionBridge",
    "QuestionService",
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
    "TurnDeadline",
    "UsageUpdate",
    "classify",
    "collect_turn",
    "default_middlewares",
    "open_turn",
    "run_http",
    "run_stdio",
    "tool",
]


def __getattr__(name: str) -> str:
    return _version_attribute(__name__, "hive-core", name)
