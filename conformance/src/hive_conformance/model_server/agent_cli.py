"""A responder that plays the model for a real coding-agent CLI, whatever requests it sends and in which order.

A CLI sends more than the turn's requests (session titles, probes, summaries), so a fixed script does not fit
it. :func:`agent_cli_responder` answers each request from what it contains instead, over any of the four model
APIs:

* the newest user message holds the marker ``RUNTOOL`` and nothing answered a tool call since: one call to the
  CLI's shell tool (found among the request's tools) running the command (``touch hive_tool_ran.txt``);
* the newest user message holds ``ASKME`` and nothing answered since: one call to the CLI's question tool (found
  among the request's tools by name), asking the question ``Which database?`` with the options ``SQLite`` and
  ``PostgreSQL`` (single choice, or several with ``multi_select``), its arguments shaped by the tool's schema;
* a tool result follows the newest user message: the text ``MOCK_REPLY done``, or after an ``ASKME`` question
  ``MOCK_REPLY answered: <the tool result's text>``, so a test sees what the model was given back;
* the newest user message holds ``SLOWTEXT``: many text chunks, each after a delay (to cancel mid-text);
* anything else: the text ``MOCK_REPLY ok``.

Every answer reports usage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import cast

from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage

from .recording import RecordedRequest

__all__ = [
    "ANSWERED_REPLY",
    "ASKME_MARKER",
    "DEFAULT_COMMAND",
    "DONE_REPLY",
    "OK_REPLY",
    "QUESTION_OPTIONS",
    "QUESTION_TEXT",
    "QUESTION_TOOL_NAMES",
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
ASKME_MARKER = "ASKME"
"""The word in a prompt that makes the model call the CLI's question tool."""
QUESTION_TEXT = "Which database?"
"""The question the question tool is asked."""
QUESTION_OPTIONS: tuple[str, ...] = ("SQLite", "PostgreSQL")
"""Its options' labels, in order."""
ANSWERED_REPLY = "MOCK_REPLY answered: "
"""What the answer to a question's result starts with; the result's text follows."""
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

QUESTION_TOOL_NAMES: tuple[str, ...] = ("AskUserQuestion", "ask_user_question", "ask_user", "question", "ask")
"""Names of CLIs' question tools, in order of preference."""

_COMMAND_ARGUMENTS = ("command", "cmd", "commands", "script", "code")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


@dataclass(frozen=True, kw_only=True)
class Conversation:
    """What the responder reads from one request, whichever API it came through."""

    last_user_text: str
    """The text of the newest user message that is not only tool results."""
    tool_result_after: bool
    """Whether a tool result comes after that message."""
    tool_result_text: str = ""
    """The text of the newest tool result after that message (``""`` when there is none)."""
    tools: dict[str, Mapping[str, Any]]
    """The request's function tools: name -> JSON schema of the arguments."""


def agent_cli_responder(
    *,
    command: str = DEFAULT_COMMAND,
    slow_chunks: int = 60,
    chunk_delay: float = 0.1,
    multi_select: bool = False,
) -> Callable[[RecordedRequest], Round | None]:
    """A :class:`~hive_conformance.model_server.server.Responder` for coding-agent CLIs (see the module).

    ``command`` is what the shell tool is asked to run; a ``SLOWTEXT`` answer is ``slow_chunks`` chunks sent
    ``chunk_delay`` seconds apart; ``multi_select`` makes the question one that takes several answers (where the
    tool's schema has a flag for it). Requests it cannot read are answered ``MOCK_REPLY ok``.
    """

    def respond(request: RecordedRequest) -> Round | None:
        conversation = read_conversation(request)
        usage = Usage(input_tokens=max(1, len(request.raw_body) // 4), output_tokens=5)
        if conversation.tool_result_after:
            if ASKME_MARKER in conversation.last_user_text:
                reply = ANSWERED_REPLY + conversation.tool_result_text
                return Round(parts=[ScriptText(chunks=[reply[:12], reply[12:]])], usage=usage)
            return Round(parts=[ScriptText(chunks=["MOCK_REPLY", " done"])], usage=usage)
        if ASKME_MARKER in conversation.last_user_text:
            call = _question_call(conversation.tools, request.index, multi_select)
            if call is not None:
                return Round(parts=[call], usage=usage)
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
    results = [result for kind, result in turns[last_user + 1 :] if kind == "tool_result"]
    return Conversation(
        last_user_text=text,
        tool_result_after=bool(results),
        tool_result_text=results[-1] if results else "",
        tools=tools,
    )


# -- the four request shapes: each becomes a list of ("user", text) / ("tool_result", text) / ("other", "") ----

_Turn = tuple[str, str]


def _chat_turns(body: Mapping[str, Any]) -> list[_Turn]:
    turns: list[_Turn] = []
    for message in map(_mapping, _sequence(body.get("messages"))):
        role = message.get("role")
        if role == "tool" or role == "function":
            turns.append(("tool_result", _text_of(message.get("content"))))
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
            turns.append(("tool_result", _text_of(item.get("output"))))
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
        results = [block for block in blocks if block.get("type") == "tool_result"]
        if results:
            turns.append(("tool_result", _text_of(results[-1].get("content"))))
            text = _text_of([block for block in blocks if block.get("type") == "text"])
            if any(marker in text for marker in (RUNTOOL_MARKER, SLOWTEXT_MARKER, ASKME_MARKER)):
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
        elif responses := [
            _mapping(part["functionResponse"]) for part in parts if "functionResponse" in part
        ]:
            turns.append(("tool_result", json.dumps(responses[-1].get("response"))))
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


def _question_call(tools: Mapping[str, Mapping[str, Any]], index: int, multi: bool) -> ScriptToolCall | None:
    """One call to the first question tool offered: :data:`QUESTION_TEXT` with :data:`QUESTION_OPTIONS`, several
    answers allowed when ``multi``, in the shape the tool's schema asks for (a list of questions, as Claude's, or a single one)."""
    name = next((candidate for candidate in QUESTION_TOOL_NAMES if candidate in tools), None)
    if name is None:
        return None
    schema = tools[name]
    properties = _mapping(schema.get("properties"))
    if "questions" in properties or not properties:
        item = _mapping(_mapping(properties.get("questions")).get("items"))
        arguments: dict[str, Any] = {"questions": [_question(item, multi)]}
        for key in map(str, _sequence(schema.get("required"))):
            if key not in arguments:
                arguments[key] = _placeholder(key, _mapping(properties.get(key)))
    else:
        arguments = _question(schema, multi)
    text = json.dumps(arguments)
    return ScriptToolCall(
        id=f"call_hiveask{index}", name=name, arguments=[text[: len(text) // 2], text[len(text) // 2 :]]
    )


_MULTI_KEYS = ("multiSelect", "multiple", "multi_select", "allowMultiple", "multiselect")


def _question(schema: Mapping[str, Any], multi: bool) -> dict[str, Any]:
    """One question's object, filled from its schema (Claude's shape when the schema says nothing)."""
    properties = _mapping(schema.get("properties"))
    if not properties:
        return {
            "question": QUESTION_TEXT,
            "header": "Database",
            "options": [{"label": label, "description": f"Use {label}"} for label in QUESTION_OPTIONS],
            "multiSelect": multi,
        }
    question: dict[str, Any] = {}
    for key, value in properties.items():
        field = _mapping(value)
        if key in ("question", "prompt", "text", "message"):
            question[key] = QUESTION_TEXT
        elif key in ("header", "title"):
            question[key] = "Database"
        elif key in ("options", "choices"):
            option = _mapping(field.get("items"))
            if option.get("type") == "string":
                question[key] = list(QUESTION_OPTIONS)
            else:
                keys = _mapping(option.get("properties")) or {"label": {}, "description": {}}
                question[key] = [
                    {
                        name: label if name in ("label", "value", "name") else f"Use {label}"
                        for name in keys
                        if name in ("label", "value", "name", "description")
                    }
                    for label in QUESTION_OPTIONS
                ]
        elif key in _MULTI_KEYS:
            question[key] = multi
    for key in map(str, _sequence(schema.get("required"))):
        if key not in question:
            question[key] = _placeholder(key, _mapping(properties.get(key)))
    return question


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
