"""hive-core: the hive SDK.

Bring any :class:`ChatClient`, declare tools from typed functions, and run turns through the agent loop with
its guarded tool pipeline; serve the same session in process (:func:`open_turn`, :func:`collect_turn`) or as
JSON Lines over stdio (:class:`StdioRunner`, :func:`run_stdio`) or to a host over HTTP (:class:`HttpRunner`,
:func:`run_http`). Events are the structs of :mod:`hive_protocol`.
"""

from hive_protocol.package_version import version_attribute as _version_attribute

from .approvals import ALLOW_ALL
from .approvals import AllowEverything
from .approvals import ApprovalDecision
from .approvals import ApprovalRequest
from .approvals import ApprovalService
from .approvals import PathJudge
from .approvals import ToolCallPolicy
from .backends import AgentBackend
from .backends import BackendProbe
from .backends import HiveBackend
from .budget import TokenBudgetChatClient
from .chat import AsyncClosable
from .chat import Capabilities
from .chat import ChatClient
from .chat import ChatOptions
from .chat import ChatUpdate
from .chat import FinishUpdate
from .chat import ModelLister
from .chat import NoticeUpdate
from .chat import TextUpdate
from .chat import ThinkingUpdate
from .chat import ToolCallUpdate
from .chat import ToolSpec
from .chat import UsageUpdate
from .failures import ChatError
from .failures import classify
from .fallback import FallbackChatClient
from .fallback import LazyChatClient
from .hitl import HitlBridge
from .loop import Agent
from .loop import AgentSession
from .messages import Message
from .messages import TextPart
from .messages import ThinkingPart
from .messages import ToolCallPart
from .messages import ToolResultPart
from .pipeline import Invocation
from .pipeline import Middleware
from .pipeline import Pipeline
from .pipeline import default_middlewares
from .questions import QuestionBridge
from .questions import QuestionService
from .runners import HttpRunner
from .runners import HttpRunnerError
from .runners import Processor
from .runners import SessionRunner
from .runners import StdioRunner
from .runners import collect_turn
from .runners import open_turn
from .runners import run_http
from .runners import run_stdio
from .tools import EventSink
from .tools import Tool
from .tools import ToolArgumentError
from .tools import ToolContext
from .tools import ToolOutcome
from .tools import tool
from .turn_deadline import PausingQuestions
from .turn_deadline import TurnDeadline

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
    "LazyChatClient",
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
