"""Helpers for the hive-providers tests: the merged configuration of a throwaway home, each remote adapter
made for the scripted model server, streaming a client with a bound on every wait, and reading what it
streamed."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncGenerator
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from typing import Final
from typing import TypeVar

import anyio
import pytest

from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_core import Agent
from hive_core import ChatClient
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import ChatUpdate
from hive_core import Message
from hive_core import TextUpdate
from hive_core import ThinkingUpdate
from hive_core import ToolCallUpdate
from hive_core import ToolSpec
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.config import LoadedConfig
from hive_core.config import load_config
from hive_core.messages import Message as HistoryMessage
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import user
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import verify
from hive_providers import CONFIG_SCHEMA
from hive_providers._client import RemoteChatClient
from hive_providers.anthropic import AnthropicChatClient
from hive_providers.google import GoogleChatClient
from hive_providers.openai_chat import OpenAIChatClient
from hive_providers.openai_responses import OpenAIResponsesChatClient

Client = TypeVar("Client", bound=RemoteChatClient)

WAIT: Final = 10.0
"""Seconds any single wait of a test may take before it fails (a bound, never a synchronisation)."""

READ: Final = ToolSpec(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
"""A tool offered to the model."""
WRITE: Final = ToolSpec(
    "write_file", "Write a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
)
"""Another tool offered to the model."""

GOOGLE_INVALID_KEY: Final = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}],
    }
}
"""Google's answer to a key it does not accept."""
GOOGLE_QUOTA: Final = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "13s"}],
    }
}
"""Google's answer to a quota used up: the wait is in its ``RetryInfo``."""


def configuration(root: Path, env: Mapping[str, str] | None = None, text: str = "") -> LoadedConfig:
    """The configuration hive loads with ``env`` and, as the global file, ``text``, in a home and a project
    under ``root`` (each call a fresh one)."""
    index = sum(1 for _ in root.glob("config-*"))
    base = root / f"config-{index}"
    home, project = base / "home", base / "project"
    home.mkdir(parents=True)
    (project / ".hive").mkdir(parents=True)
    if text:
        (home / "config.yaml").write_text(text, encoding="utf-8")
    return load_config(project, {**(env or {}), "HIVE_HOME": str(home)}, schema=CONFIG_SCHEMA)


def _openai(url: str, options: dict[str, Any]) -> dict[str, Any]:
    defaults = {"model": "gpt-test", "api_key": "sk-test", "max_retries": 0, "idle_timeout": 30.0}
    return {"base_url": url + "/v1", **defaults, **options}


def openai_chat(url: str, **options: Any) -> OpenAIChatClient:
    """An OpenAI Chat Completions client of the scripted server at ``url`` (no retries unless asked)."""
    return OpenAIChatClient(**_openai(url, options))


def openai_responses(url: str, **options: Any) -> OpenAIResponsesChatClient:
    """An OpenAI Responses client of the scripted server at ``url`` (a reasoning model, no retries unless
    asked)."""
    return OpenAIResponsesChatClient(**_openai(url, {"reasoning": True, **options}))


def anthropic(url: str, **options: Any) -> AnthropicChatClient:
    """An Anthropic client of the scripted server at ``url``."""
    return AnthropicChatClient(base_url=url, **({"model": "claude-test", "api_key": "test"} | options))


def google(url: str, **options: Any) -> GoogleChatClient:
    """A Gemini API client of the scripted server at ``url``."""
    return GoogleChatClient(
        base_url=url + "/v1beta", **({"model": "gemini-test", "api_key": "test"} | options)
    )


@asynccontextmanager
async def scripted(
    make: Callable[..., Client], *rounds: Round, **options: Any
) -> AsyncGenerator[tuple[ScriptedModelServer, Client]]:
    """A scripted model server playing ``rounds``, and the client ``make(url, **options)`` makes for it
    (closed at the end)."""
    async with ScriptedModelServer(rounds) as server:
        client = make(server.url, **options)
        try:
            yield server, client
        finally:
            await client.aclose()


async def collect(
    client: ChatClient, messages: Sequence[Message] = (), options: ChatOptions | None = None
) -> list[ChatUpdate]:
    """Everything ``client`` streams for ``messages`` (default: one ``hi``)."""
    with anyio.fail_after(WAIT):
        return [u async for u in client.stream(messages or [user("hi")], options or ChatOptions())]


async def failing(
    client: ChatClient, options: ChatOptions | None = None
) -> tuple[list[ChatUpdate], ChatError]:
    """What ``client`` streamed for ``hi`` before it failed, and the :class:`ChatError` it failed with."""
    updates: list[ChatUpdate] = []

    async def run() -> None:
        async for update in client.stream([user("hi")], options or ChatOptions()):
            updates.append(update)

    with anyio.fail_after(WAIT), pytest.raises(ChatError) as caught:
        await run()
    return updates, caught.value


def assembled(updates: Sequence[ChatUpdate]) -> dict[int, tuple[str | None, str | None, str]]:
    """Tool calls joined by index, as the loop joins them: id, name, arguments."""
    calls: dict[int, tuple[str | None, str | None, str]] = {}
    for update in updates:
        if isinstance(update, ToolCallUpdate):
            call_id, name, arguments = calls.get(update.index, (None, None, ""))
            calls[update.index] = (update.id or call_id, update.name or name, arguments + update.arguments)
    return calls


def chat_tool_call(call_id: str, arguments: str, name: str = "read_file") -> dict[str, Any]:
    """A tool call as Chat Completions carries it in an assistant message."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def thought_then_text(signature: str) -> Round:
    """A round that thinks ``Let me look.`` (signed ``signature``), then says ``Done.``."""
    return Round(
        parts=[ScriptThinking(chunks=["Let me ", "look."], signature=signature), ScriptText(chunks=["Done."])]
    )


def thought_then_text_updates(signature: str, provider: str) -> list[ChatUpdate]:
    """What a client streams first for :func:`thought_then_text`: the thinking, its ``signature`` as the
    ``provider`` keeps it, then the text."""
    return [
        ThinkingUpdate("Let me "),
        ThinkingUpdate("look."),
        ThinkingUpdate("", signature=signature, provider=provider),
        TextUpdate("Done."),
    ]


def text_then_call(text: str, call_id: str) -> Round:
    """A round that streams ``text``, then calls ``read_file`` on ``a`` (call ``call_id``)."""
    return Round(
        parts=[
            ScriptText(chunks=[text]),
            ScriptToolCall(id=call_id, name="read_file", arguments=['{"path": "a"}']),
        ]
    )


def after_text_and_call(text: str, call_id: str, arguments: str = '{"path": "a"}') -> list[HistoryMessage]:
    """A history: ``hi``; the assistant wrote ``text`` and called ``read_file`` on ``a`` (call ``call_id``, sent
    as ``arguments``); the tool answered ``A``."""
    return [
        user("hi"),
        HistoryMessage(
            "assistant", [TextPart(text), ToolCallPart(call_id, "read_file", arguments, {"path": "a"})]
        ),
        HistoryMessage("tool", [ToolResultPart(call_id, "read_file", "A")]),
    ]


def tool_round(thinking: ThinkingPart, good: str, bad: str) -> list[HistoryMessage]:
    """A history round: the assistant thought, wrote, and called ``read_file`` twice (call ``good`` with JSON
    arguments, call ``bad`` with arguments that are not JSON); then the tool message answering both."""
    return [
        HistoryMessage(
            "assistant",
            [
                thinking,
                TextPart("Reading."),
                ToolCallPart(good, "read_file", '{"path": "a"}', {"path": "a"}),
                ToolCallPart(bad, "read_file", '{"path": ', None, "not JSON"),
            ],
        ),
        HistoryMessage(
            "tool",
            [ToolResultPart(good, "read_file", "A"), ToolResultPart(bad, "read_file", "bad", is_error=True)],
        ),
    ]


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_isolated(script: str) -> str:
    """What ``script`` prints, run by a fresh interpreter (to see what it imports)."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@tool(read_only=True)
def read_note(name: str) -> str:
    """Read a note.

    Args:
        name: The note's name.
    """
    return f"contents of {name}"


async def note_turn(
    make: Callable[..., RemoteChatClient], first: Round, **options: Any
) -> tuple[ToolStartEvent, RecordedRequest, RecordedRequest]:
    """One hive turn asking for the todo note: the model thinks ``Need the note.`` and calls :func:`read_note`
    in ``first`` (50 + 10 tokens), then says ``The note says hi.`` (80 + 5 tokens).

    Checks what every adapter's turn shows alike (the events well formed, the thinking, one call that returned
    the note, the reply, the token counts) and returns the call's ``tool_start`` and the two requests.
    """
    second = Round(
        parts=[ScriptText(chunks=["The note says ", "hi."])], usage=Usage(input_tokens=80, output_tokens=5)
    )
    async with scripted(make, first, second, **options) as (server, client):
        agent = Agent(client, tools=[read_note], policy=ALLOW_ALL)
        with anyio.fail_after(WAIT):
            events = await collect_turn(agent.session(), "read my todo note")
        server.assert_consumed()
        requests = server.requests
    assert verify(events) == []
    assert [e.content for e in events if isinstance(e, ThinkingDeltaEvent)] == ["Need the note."]
    [start] = [e for e in events if isinstance(e, ToolStartEvent)]
    assert (start.tool, start.input) == ("read_note", {"name": "todo"})
    [end] = [e for e in events if isinstance(e, ToolEndEvent)]
    assert (end.success, end.output, end.call_id) == (True, "contents of todo", start.call_id)
    assert "".join(e.content for e in events if isinstance(e, TextDeltaEvent)) == "The note says hi."
    turn_end = events[-1]
    assert isinstance(turn_end, TurnEndEvent)
    assert (turn_end.stop_reason, turn_end.input_tokens, turn_end.output_tokens) == ("completed", 130, 15)
    return start, requests[0], requests[1]
