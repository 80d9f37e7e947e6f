"""The scripted model server: replays a script of model rounds over the OpenAI Chat Completions, OpenAI
Responses, Anthropic Messages and Gemini APIs, streaming or not, and records every request it receives.

Run it from a shell with ``python -m hive_conformance.model_server SCRIPT.jsonl [--port N]``.
"""

from .agent_cli import agent_cli_responder
from .recording import Endpoint
from .recording import RecordedRequest
from .server import DEFAULT_MODEL
from .server import EXHAUSTED_STATUS
from .server import Responder
from .server import ScriptedModelServer

__all__ = [
    "DEFAULT_MODEL",
    "EXHAUSTED_STATUS",
    "Endpoint",
    "RecordedRequest",
    "Responder",
    "ScriptedModelServer",
    "agent_cli_responder",
]
