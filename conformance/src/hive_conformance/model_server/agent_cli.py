"""A responder that plays the model for a real coding-agent CLI, whatever requests it sends and in which order.

A CLI sends more than the turn's requests (session titles, probes, summaries), so a fixed script does not fit
it. :func:`agent_cli_responder` answers each request from what it contains instead, over any of the four model
APIs:

* the newest user message holds the marker ``RUNTOOL`` and nothing answered a tool call since: one call to the
  CLI's shell tool (found among the request's tools) running the command (``touch hive_tool_ran.txt``);
* a tool result follows the newest user message: the text ``MOCK_REPLY done``;
* the newest user message holds ``SLOWTEXT``: many text chunks, each after a delay (to cancel mid-text);
* anything else: the text ``MOCK_REPLY ok``.

Every answer reports usage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from hive_conformance.script import Round, ScriptText, ScriptToolCall, Usage

from .recording import RecordedRequest

__all__ = [
    "DEFAULT_COMMAND",
    "DONE_REPLY",
    "OK_REPLY",
    "RUNTOOL_MARKER",
    "SHELL_TOOL_NAMES",
    "SLOWTEXT_MARKER",
    "Conversation",
    "agent_cli_responder",
    "read_conversation",
]

RUNTOOL_MARKER = "RUNTOOL"
"""The word in a prompt that makes the model call the CLI's shell tool."""
SLOWTEXT_MARKER = "SLOWTEXT"
"""The word in a prompt that makes the model answer slowly, chunk after chunk."""
DEFAULT_COMMAND = "touch hive_tool_ran.txt"
"""The command the shell tool is asked to run."""
OK_REPLY = "MOCK_REPLY ok"
"""The answer to a request with no marker."""
DONE_REPLY = "MOCK_REPLY done"
"""The answer once the tool's result (or its refusal) came back."""

SHELL_TOOL_NAMES: tuple[str, ...] = (
    "bash",
    "run_shell_command",
    "shell",
    "terminal",
    "execute",
    "Bash",
    "run_command",
    "shell_command",
    "exec_command",
    "execute_command",
    "run_terminal_cmd",
    "Shell",
)
"""Names of CLIs' shell tools, in order of preference."""

_COMMAND_ARGUMENTS = ("command", "cmd", "commands", "script", "code")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


@dataclass(frozen=True, kw_only=True)
class Conversation:
    """What the responder reads from one request, whichever API it came through."""

    last_user_text: str
    """The text of the newest user message that is not only tool results."""
    tool_result_after: bool
    """Whether a tool result comes after that message."""
    tools: dict[str, Mapping[str, Any]]
    """The request's function tools: name -> JSON schema of the arguments."""


def agent_cli_responder(
    *,
    command: str = DEFAULT_COMMAND,
    slow_chunks: int = 60,
    chunk_delay: float = 0.1,
) -> Callable[[RecordedRequest], Round | None]:
    """A :class:`~hive_conformance.model_server.server.Responder` for coding-agent CLIs (see the module).

    ``command`` is what the shell tool is asked to run; a ``SLOWTEXT`` answer is ``slow_chunks`` chunks sent
    ``chunk_delay`` seconds apart. Requests it cannot read are answered ``MOCK_REPLY ok``.
    """

    def respond(request: RecordedRequest) -> Round | None:
        conversation = read_conversation(request)
        usage = Usage(input_tokens=max(1, len(request.raw_body) // 4), output_tokens=5)
        if conversation.tool_result_after:
            return Round(parts=[ScriptText(chunks=["MOCK_REPLY", " done"])], usage=usage)
        if RUNTOOL_MARKER in conversation.last_user_text:
            call = _shell_call(conversation.tools, command, request.index)
            if call is not None:
                return Round(parts=[call], usage=usage)
        if SLOWTEXT_MARKER in conversation.last_user_text:
            chunks = [f"chunk{index} " for index in range(slow_chunks)]
            return Round(parts=[ScriptText(chunks=chunks)], usage=usage, chunk_delay=chunk_delay)
        return Round(parts=[ScriptText(chunks=["MOCK_REPLY", " ok"])], usage=usage)

    return respond


def read_conversation(request: RecordedRequest) -> Conversation:
    """The newest user text, whether a tool result follows it, and the tools, from any of the four APIs."""
    body = _mapping(request.body)
    if request.endpoint == "openai_responses":
        turns = _responses_turns(body)
        tools = _responses_tools(body)
    elif request.endpoint == "anthropic_messages":
        turns = _anthropic_turns(body)
        tools = {
            str(tool["name"]): _mapping(tool.get("input_schema"))
            for tool in map(_mapping, _sequence(body.get("tools")))
            if "name" in tool
        }
    elif request.endpoint == "gemini":
        turns = _gemini_turns(body)
        tools = _gemini_tools(body)
    else:
        turns = _chat_turns(body)
        tools = {}
        for tool in map(_mapping, _sequence(body.get("tools"))):
            function = _mapping(tool.get("function"))
            if "name" in function:
                tools[str(function["name"])] = _mapping(function.get("parameters"))
    # CLIs add user messages of their own (Kimi's dated <system-reminder>): those are not the user speaking.
    turns = [
        ("other", "") if kind == "user" and not _REMINDER.sub("", text).strip() else (kind, text)
        for kind, text in turns
    ]
    last_user = max((index for index, (kind, _) in enumerate(turns) if kind == "user"), default=-1)
    text = turns[last_user][1] if last_user >= 0 else ""
    after = any(kind == "tool_result" for kind, _ in turns[last_user + 1 :])
    return Conversation(last_user_text=text, tool_result_after=after, tools=tools)


# -- the four request shapes: each becomes a list of ("user", text) / ("tool_result", "") / ("other", "") ------

_Turn = tuple[str, str]


def _chat_turns(body: Mapping[str, Any]) -> list[_Turn]:
    turns: list[_Turn] = []
    for message in map(_mapping, _sequence(body.get("messages"))):
        role = message.get("role")
        if role == "tool" or role == "function":
            turns.append(("tool_result", ""))
        elif role == "user":
            turns.append(("user", _text_of(message.get("content"))))
        else:
            turns.append(("other", ""))
    return turns


def _responses_turns(body: Mapping[str, Any]) -> list[_Turn]:
    items = body.get("input")
    if isinstance(items, str):
        return [("user", items)]
    turns: list[_Turn] = []
    for item in map(_mapping, _sequence(items)):
        kind = item.get("type", "message")
        if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            turns.append(("tool_result", ""))
        elif kind == "message" and item.get("role") == "user":
            turns.append(("user", _text_of(item.get("content"))))
        else:
            turns.append(("other", ""))
    return turns


def _anthropic_turns(body: Mapping[str, Any]) -> list[_Turn]:
    turns: list[_Turn] = []
    for message in map(_mapping, _sequence(body.get("messages"))):
        content = message.get("content")
        if message.get("role") != "user":
            turns.append(("other", ""))
            continue
        blocks = [_mapping(block) for block in _sequence(content)]
        if any(block.get("type") == "tool_result" for block in blocks):
            turns.append(("tool_result", ""))
            text = _text_of([block for block in blocks if block.get("type") == "text"])
            if RUNTOOL_MARKER in text or SLOWTEXT_MARKER in text:
                turns.append(("user", text))
        else:
            turns.append(("user", _text_of(content)))
    return turns


def _gemini_turns(body: Mapping[str, Any]) -> list[_Turn]:
    turns: list[_Turn] = []
    for content in map(_mapping, _sequence(body.get("contents"))):
        parts = [_mapping(part) for part in _sequence(content.get("parts"))]
        if content.get("role", "user") != "user":
            turns.append(("other", ""))
        elif any("functionResponse" in part for part in parts):
            turns.append(("tool_result", ""))
        else:
            turns.append(("user", "".join(str(part.get("text", "")) for part in parts)))
    return turns


def _responses_tools(body: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    tools: dict[str, Mapping[str, Any]] = {}
    for tool in map(_mapping, _sequence(body.get("tools"))):
        if tool.get("type") == "function" and "name" in tool:
            tools[str(tool["name"])] = _mapping(tool.get("parameters"))
        elif tool.get("type") == "namespace":  # Codex groups some of its function tools
            for inner in map(_mapping, _sequence(tool.get("tools"))):
                if "name" in inner:
                    tools[str(inner["name"])] = _mapping(inner.get("parameters"))
    return tools


def _gemini_tools(body: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    tools: dict[str, Mapping[str, Any]] = {}
    for tool in map(_mapping, _sequence(body.get("tools"))):
        for declaration in map(_mapping, _sequence(tool.get("functionDeclarations"))):
            if "name" in declaration:
                schema = declaration.get("parametersJsonSchema", declaration.get("parameters"))
                tools[str(declaration["name"])] = _mapping(schema)
    return tools


# -- the tool call ----------------------------------------------------------------------------------------------


def _shell_call(tools: Mapping[str, Mapping[str, Any]], command: str, index: int) -> ScriptToolCall | None:
    """One call to the first shell tool offered, its arguments filled from the tool's schema."""
    name = next((candidate for candidate in SHELL_TOOL_NAMES if candidate in tools), None)
    if name is None:
        return None
    schema = tools[name]
    properties = _mapping(schema.get("properties"))
    argument = next((key for key in _COMMAND_ARGUMENTS if key in properties), "command")
    arguments: dict[str, Any] = {argument: command}
    for key in map(str, _sequence(schema.get("required"))):
        if key not in arguments:
            arguments[key] = _placeholder(key, _mapping(properties.get(key)))
    text = json.dumps(arguments)
    return ScriptToolCall(
        id=f"call_hive{index}", name=name, arguments=[text[: len(text) // 2], text[len(text) // 2 :]]
    )


def _placeholder(name: str, schema: Mapping[str, Any]) -> Any:
    """A plausible value for a required argument other than the command."""
    enum = _sequence(schema.get("enum"))
    if enum:
        return enum[0]
    kind = schema.get("type")
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        value = schema.get("maximum", 60000 if "timeout" in name.lower() else 1)
        return value
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return "Create the marker file"


# -- tolerant reading -------------------------------------------------------------------------------------------


def _mapping(value: object) -> Mapping[str, Any]:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}


def _sequence(value: object) -> Sequence[Any]:
    return cast("Sequence[Any]", value) if isinstance(value, list | tuple) else ()


def _text_of(content: object) -> str:
    """The text of a message's content: a string, or a list of text parts in any API's spelling."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in _sequence(content):
        if isinstance(part, str):
            pieces.append(part)
            continue
        block = _mapping(part)
        text = block.get("text")
        if isinstance(text, str):
            pieces.append(text)
    return "\n".join(pieces)
