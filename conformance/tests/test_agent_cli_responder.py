"""The agent-CLI responder: it answers a coding-agent CLI's requests from what they contain, in all four APIs."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server import agent_cli_responder
from hive_conformance.model_server.agent_cli import DEFAULT_COMMAND
from hive_conformance.model_server.agent_cli import read_conversation
from hive_conformance.model_server.recording import Endpoint
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptToolCall

COMMAND_SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


def request(endpoint: Endpoint, body: dict[str, Any], index: int = 3) -> RecordedRequest:
    raw = json.dumps(body).encode()
    return RecordedRequest(
        index=index,
        method="POST",
        path="/v1/x",
        query={},
        headers={},
        body=body,
        raw_body=raw,
        endpoint=endpoint,
        stream=True,
        round=None,
    )


# -- one request per API: the user asks for the tool, nothing answered it yet -----------------------------------


def chat_request(*messages: dict[str, Any], tool: str = "bash") -> RecordedRequest:
    tools = [{"type": "function", "function": {"name": tool, "parameters": COMMAND_SCHEMA}}]
    return request("openai_chat", {"messages": list(messages), "tools": tools})


def responses_request(*items: Any, tool: str = "execute") -> RecordedRequest:
    tools = [{"type": "function", "name": tool, "parameters": COMMAND_SCHEMA}, {"type": "web_search"}]
    return request("openai_responses", {"input": list(items), "tools": tools})


def anthropic_request(*messages: dict[str, Any], tool: str = "Bash") -> RecordedRequest:
    return request(
        "anthropic_messages",
        {"messages": list(messages), "tools": [{"name": tool, "input_schema": COMMAND_SCHEMA}]},
    )


def gemini_request(*contents: dict[str, Any], tool: str = "run_shell_command") -> RecordedRequest:
    declaration = {"name": tool, "parametersJsonSchema": COMMAND_SCHEMA}
    return request("gemini", {"contents": list(contents), "tools": [{"functionDeclarations": [declaration]}]})


ASKING = {
    "chat": chat_request(
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "RUNTOOL go"}
    ),
    "responses": responses_request(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "RUNTOOL go"}]}
    ),
    "anthropic": anthropic_request({"role": "user", "content": [{"type": "text", "text": "RUNTOOL go"}]}),
    "gemini": gemini_request({"role": "user", "parts": [{"text": "RUNTOOL go"}]}),
}
TOOL_NAMES = {"chat": "bash", "responses": "execute", "anthropic": "Bash", "gemini": "run_shell_command"}

ANSWERED = {
    "chat": chat_request(
        {"role": "user", "content": "RUNTOOL go"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": ""},
    ),
    "responses": responses_request(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "RUNTOOL go"}]},
        {"type": "function_call", "call_id": "c1", "name": "execute", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "rejected"},
    ),
    "anthropic": anthropic_request(
        {"role": "user", "content": "RUNTOOL go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]},
    ),
    "gemini": gemini_request(
        {"role": "user", "parts": [{"text": "RUNTOOL go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {}}}]},
    ),
}


def tool_calls(round_: Round | None) -> list[ScriptToolCall]:
    assert round_ is not None
    return [part for part in round_.parts if isinstance(part, ScriptToolCall)]


def text(round_: Round | None) -> str:
    assert round_ is not None
    return "".join("".join(part.chunks) for part in round_.parts if isinstance(part, ScriptText))


@pytest.mark.parametrize("api", sorted(ASKING))
def test_the_marker_calls_the_shell_tool_with_the_command(api: str) -> None:
    round_ = agent_cli_responder()(ASKING[api])
    [call] = tool_calls(round_)
    assert call.name == TOOL_NAMES[api]
    assert json.loads("".join(call.arguments)) == {"command": DEFAULT_COMMAND}
    assert round_ is not None
    assert round_.usage is not None
    assert round_.usage.input_tokens > 0


@pytest.mark.parametrize("api", sorted(ANSWERED))
def test_a_tool_result_after_the_marker_gets_the_closing_text(api: str) -> None:
    round_ = agent_cli_responder()(ANSWERED[api])
    assert tool_calls(round_) == []
    assert text(round_) == "MOCK_REPLY done"


def test_a_request_without_the_marker_gets_the_plain_reply() -> None:
    round_ = agent_cli_responder()(chat_request({"role": "user", "content": "hello"}))
    assert text(round_) == "MOCK_REPLY ok"
    assert round_ is not None
    assert round_.usage is not None


def test_without_a_shell_tool_the_marker_gets_text_not_a_call() -> None:
    # A session-title request repeats the prompt but offers no tools.
    titled = request("openai_chat", {"messages": [{"role": "user", "content": "RUNTOOL go"}]})
    assert text(agent_cli_responder()(titled)) == "MOCK_REPLY ok"
    other_tool = chat_request({"role": "user", "content": "RUNTOOL go"}, tool="read_file")
    assert tool_calls(agent_cli_responder()(other_tool)) == []


def test_a_reminder_the_cli_appends_is_not_taken_for_the_user() -> None:
    asked = chat_request(
        {"role": "user", "content": "RUNTOOL go"},
        {"role": "user", "content": "<system-reminder>\nToday is Tuesday.\n</system-reminder>"},
    )
    assert len(tool_calls(agent_cli_responder()(asked))) == 1


def test_a_new_marker_after_an_answered_one_calls_again() -> None:
    again = chat_request(
        {"role": "user", "content": "RUNTOOL go"},
        {"role": "tool", "tool_call_id": "c1", "content": ""},
        {"role": "assistant", "content": "MOCK_REPLY done"},
        {"role": "user", "content": "RUNTOOL once more"},
    )
    assert len(tool_calls(agent_cli_responder()(again))) == 1


def test_required_arguments_besides_the_command_are_filled_from_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "cmd": {"type": "string"},
            "description": {"type": "string"},
            "mode": {"type": "string", "enum": ["sync", "async"]},
            "timeout": {"type": "integer", "maximum": 600},
            "background": {"type": "boolean"},
        },
        "required": ["cmd", "description", "mode", "timeout", "background"],
    }
    body = {
        "messages": [{"role": "user", "content": "RUNTOOL go"}],
        "tools": [{"type": "function", "function": {"name": "shell", "parameters": schema}}],
    }
    [call] = tool_calls(agent_cli_responder(command="true")(request("openai_chat", body)))
    arguments = json.loads("".join(call.arguments))
    assert arguments["cmd"] == "true"
    assert arguments["mode"] == "sync"
    assert arguments["timeout"] == 600
    assert arguments["background"] is False
    assert isinstance(arguments["description"], str)
    assert arguments["description"]


def test_slowtext_streams_many_chunks_with_a_delay() -> None:
    round_ = agent_cli_responder(slow_chunks=12, chunk_delay=0.25)(
        chat_request({"role": "user", "content": "SLOWTEXT please"})
    )
    assert round_ is not None
    assert round_.chunk_count == 12
    assert round_.chunk_delay == 0.25


def test_read_conversation_tolerates_odd_shapes() -> None:
    odd = request(
        "openai_chat", {"messages": ["not a message", {"role": "user", "content": None}], "tools": 3}
    )
    conversation = read_conversation(odd)
    assert conversation.last_user_text == ""
    assert conversation.tools == {}
    assert read_conversation(
        request("openai_responses", {"input": "RUNTOOL as a string"})
    ).last_user_text == ("RUNTOOL as a string")


# -- the server's responder option ----------------------------------------------------------------------------


def test_the_server_answers_each_request_from_the_responder_over_http() -> None:
    with ScriptedModelServer(responder=agent_cli_responder(), model="local-model") as server:
        with httpx2.Client(base_url=server.url) as client:
            reply = client.post("/v1/chat/completions", json=ASKING["chat"].body)
            call = reply.json()["choices"][0]["message"]["tool_calls"][0]
            assert call["function"]["name"] == "bash"
            assert json.loads(call["function"]["arguments"]) == {"command": DEFAULT_COMMAND}
            reply = client.post("/v1/chat/completions", json=ANSWERED["chat"].body)
            assert reply.json()["choices"][0]["message"]["content"] == "MOCK_REPLY done"
            gemini = client.post("/v1beta/models/local-model:generateContent", json=ASKING["gemini"].body)
            assert gemini.json()["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == (
                "run_shell_command"
            )
        assert [r.round for r in server.requests] == [0, 1, 2]
        server.assert_consumed()


def test_a_responder_that_declines_leaves_the_request_to_the_script() -> None:
    seen: list[int] = []

    def only_first(recorded: RecordedRequest) -> Round | None:
        seen.append(recorded.index)
        return Round(parts=[ScriptText(chunks=["from responder"])]) if recorded.index == 0 else None

    scripted = Round(parts=[ScriptText(chunks=["from script"])])
    with ScriptedModelServer([scripted], responder=only_first) as server:
        with httpx2.Client(base_url=server.url) as client:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            first = client.post("/v1/chat/completions", json=body).json()
            second = client.post("/v1/chat/completions", json=body).json()
            models = client.get("/v1/models")
        assert first["choices"][0]["message"]["content"] == "from responder"
        assert second["choices"][0]["message"]["content"] == "from script"
        assert models.status_code == 200
        assert seen == [0, 1]  # the model list is not offered to it
        assert server.remaining == []
        server.assert_consumed()


# -- ASKME: the CLI's question tool ----------------------------------------------------------------------------

CLAUDE_QUESTION_SCHEMA = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "question": {"type": "string"},
                    "header": {"type": "string"},
                    "options": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"label": {"type": "string"}, "description": {"type": "string"}},
                            "required": ["label", "description"],
                        },
                    },
                    "multiSelect": {"type": "boolean"},
                },
                "required": ["question", "header", "options", "multiSelect"],
            },
        }
    },
    "required": ["questions"],
}


def claude_asking(*messages: dict[str, Any]) -> RecordedRequest:
    tools = [
        {"name": "Bash", "input_schema": COMMAND_SCHEMA},
        {"name": "AskUserQuestion", "input_schema": CLAUDE_QUESTION_SCHEMA},
    ]
    return request("anthropic_messages", {"messages": list(messages), "tools": tools})


def test_askme_calls_claudes_question_tool_in_its_shape() -> None:
    [call] = tool_calls(
        agent_cli_responder()(claude_asking({"role": "user", "content": [{"type": "text", "text": "ASKME"}]}))
    )
    assert call.name == "AskUserQuestion"
    assert json.loads("".join(call.arguments)) == {
        "questions": [
            {
                "question": "Which database?",
                "header": "Database",
                "options": [
                    {"label": "SQLite", "description": "Use SQLite"},
                    {"label": "PostgreSQL", "description": "Use PostgreSQL"},
                ],
                "multiSelect": False,
            }
        ]
    }


def test_askme_fills_a_single_question_tool_with_string_choices() -> None:
    schema = {
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "choices": {"type": "array", "items": {"type": "string"}},
            "allow_freeform": {"type": "boolean"},
        },
        "required": ["question", "allow_freeform"],
    }
    body = {
        "messages": [{"role": "user", "content": "ASKME"}],
        "tools": [
            {"type": "function", "function": {"name": "bash", "parameters": COMMAND_SCHEMA}},
            {"type": "function", "function": {"name": "ask_user", "parameters": schema}},
        ],
    }
    [call] = tool_calls(agent_cli_responder()(request("openai_chat", body)))
    assert call.name == "ask_user"
    assert json.loads("".join(call.arguments)) == {
        "question": "Which database?",
        "choices": ["SQLite", "PostgreSQL"],
        "allow_freeform": False,
    }


def test_askme_without_a_question_tool_gets_text_not_a_call() -> None:
    asked = chat_request({"role": "user", "content": "ASKME"})
    assert tool_calls(agent_cli_responder()(asked)) == []
    assert text(agent_cli_responder()(asked)) == "MOCK_REPLY ok"


@pytest.mark.parametrize(
    ("api", "asked"),
    [
        (
            "anthropic",
            claude_asking(
                {"role": "user", "content": "ASKME"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "c1", "name": "AskUserQuestion"}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "c1",
                            "content": [{"type": "text", "text": 'User answered "Which database?"="SQLite"'}],
                        }
                    ],
                },
            ),
        ),
        (
            "chat",
            chat_request(
                {"role": "user", "content": "ASKME"},
                {"role": "tool", "tool_call_id": "c1", "content": 'User answered "Which database?"="SQLite"'},
            ),
        ),
        (
            "responses",
            responses_request(
                {"type": "message", "role": "user", "content": "ASKME"},
                {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": 'User answered "Which database?"="SQLite"',
                },
            ),
        ),
    ],
)
def test_the_question_tools_result_is_echoed_back(api: str, asked: RecordedRequest) -> None:
    round_ = agent_cli_responder()(asked)
    assert tool_calls(round_) == []
    assert text(round_) == 'MOCK_REPLY answered: User answered "Which database?"="SQLite"', api


def test_a_gemini_function_response_is_echoed_as_json() -> None:
    asked = gemini_request(
        {"role": "user", "parts": [{"text": "ASKME"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "ask_user", "args": {}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "ask_user", "response": {"answer": "SQLite"}}}],
        },
    )
    assert text(agent_cli_responder()(asked)) == 'MOCK_REPLY answered: {"answer": "SQLite"}'
