"""Streaming overhead of the OpenAI adapters: the scripted model server → adapter → hive loop → stdio writer.

Run: uv run python benchmarks/provider_stream.py [--chunks N] [--repeats N]

The scripted model server runs in its own process (so the CPU figures are the client's alone) and streams
rounds of N text chunks (default 5,000). For each API (Chat Completions, Responses) it measures:

- lean floor: httpx2 reading the SSE lines and msgspec decoding each payload into typed structs;
- raw openai SDK: the SDK's own stream of response objects;
- adapter: ``OpenAIChatClient`` / ``OpenAIResponsesChatClient`` streaming ``ChatUpdate`` values;
- adapter + hive loop: a whole turn through ``Agent`` and the stdio runner's writer into an in-memory buffer.

It prints CPU per chunk (``time.process_time``), chunks per second (wall clock), and each CPU figure as a
multiple of the lean floor; the median of the repeats, runs of the different paths interleaved.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
import msgspec
from openai import AsyncOpenAI

from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import Usage
from hive_conformance.script import encode_script
from hive_core import Agent
from hive_core import SessionRunner
from hive_core import StdioRunner
from hive_core.approvals import ALLOW_ALL
from hive_core.chat import ChatOptions
from hive_core.chat import TextUpdate
from hive_core.messages import user
from hive_protocol import UserMessageRequest
from hive_providers.openai_chat import OpenAIChatClient
from hive_providers.openai_responses import OpenAIResponsesChatClient

MODEL = "gpt-bench"


# The lean floor's structs: just what a reader of the text needs.
class Delta(msgspec.Struct):
    content: str | None = None


class Choice(msgspec.Struct):
    delta: Delta | None = None
    finish_reason: str | None = None


class Chunk(msgspec.Struct):
    choices: list[Choice] = []


class Event(msgspec.Struct):
    type: str = ""
    delta: str = ""


CHAT_CHUNK = msgspec.json.Decoder(Chunk)
RESPONSES_EVENT = msgspec.json.Decoder(Event)


async def chat_floor(url: str, http: httpx2.AsyncClient) -> int:
    count = 0
    body = {"model": MODEL, "messages": [{"role": "user", "content": "go"}], "stream": True}
    async with http.stream("POST", url + "/v1/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                for choice in CHAT_CHUNK.decode(line[6:]).choices:
                    if choice.delta is not None and choice.delta.content:
                        count += 1
    return count


async def responses_floor(url: str, http: httpx2.AsyncClient) -> int:
    count = 0
    body = {"model": MODEL, "input": "go", "stream": True}
    async with http.stream("POST", url + "/v1/responses", json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                event = RESPONSES_EVENT.decode(line[6:])
                if event.type == "response.output_text.delta" and event.delta:
                    count += 1
    return count


async def chat_sdk(sdk: AsyncOpenAI) -> int:
    count = 0
    stream = await sdk.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "go"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            count += 1
    return count


async def responses_sdk(sdk: AsyncOpenAI) -> int:
    count = 0
    stream = await sdk.responses.create(model=MODEL, input="go", stream=True)
    async for event in stream:
        if event.type == "response.output_text.delta" and event.delta:
            count += 1
    return count


async def adapter(client: OpenAIChatClient | OpenAIResponsesChatClient) -> int:
    count = 0
    async for update in client.stream([user("go")], ChatOptions()):
        if isinstance(update, TextUpdate):
            count += 1
    return count


async def adapter_and_loop(client: OpenAIChatClient | OpenAIResponsesChatClient) -> int:
    buffer = io.BytesIO()
    session = Agent(client, clock=lambda: 0.0, policy=ALLOW_ALL).session()
    runner = StdioRunner(SessionRunner(session, session_id="bench"), stdout=buffer)
    await runner.session.run_turn(UserMessageRequest(content="go"), runner.write)
    return buffer.getvalue().count(b'"type":"text_delta"')


async def measure(run: Callable[[], Awaitable[int]], chunks: int) -> tuple[float, float]:
    """CPU seconds and wall seconds of one run, after checking it saw every chunk."""
    cpu, wall = time.process_time(), time.perf_counter()
    seen = await run()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if seen != chunks:
        raise RuntimeError(f"saw {seen} chunks, expected {chunks}")
    return cpu, wall


async def bench(url: str, chunks: int, repeats: int) -> None:
    async with (
        httpx2.AsyncClient(timeout=60) as http,
        AsyncOpenAI(api_key="bench", base_url=url + "/v1", max_retries=0) as sdk,
        OpenAIChatClient(model=MODEL, api_key="bench", base_url=url + "/v1", max_retries=0) as chat,
        OpenAIResponsesChatClient(
            model=MODEL, api_key="bench", base_url=url + "/v1", max_retries=0
        ) as responses,
    ):
        apis: dict[str, dict[str, Callable[[], Awaitable[int]]]] = {
            "Chat Completions": {
                "lean floor (httpx2 + msgspec)": lambda: chat_floor(url, http),
                "raw openai SDK": lambda: chat_sdk(sdk),
                "OpenAIChatClient": lambda: adapter(chat),
                "OpenAIChatClient + hive loop": lambda: adapter_and_loop(chat),
            },
            "Responses": {
                "lean floor (httpx2 + msgspec)": lambda: responses_floor(url, http),
                "raw openai SDK": lambda: responses_sdk(sdk),
                "OpenAIResponsesChatClient": lambda: adapter(responses),
                "OpenAIResponsesChatClient + hive loop": lambda: adapter_and_loop(responses),
            },
        }
        print(f"{chunks} text chunks per stream, median of {repeats} runs; CPU of this process only\n")
        for api, paths in apis.items():
            for run in paths.values():  # warm-up: imports, connections, caches
                await measure(run, chunks)
            samples: dict[str, list[tuple[float, float]]] = {name: [] for name in paths}
            for _ in range(repeats):
                for name, run in paths.items():
                    samples[name].append(await measure(run, chunks))
            floor = statistics.median(cpu for cpu, _ in samples["lean floor (httpx2 + msgspec)"]) / chunks
            print(f"{api}")
            print(f"  {'path':36s} {'CPU/chunk':>10s} {'chunks/s':>10s} {'vs floor':>9s}")
            for name, runs in samples.items():
                cpu = statistics.median(c for c, _ in runs) / chunks
                rate = chunks / statistics.median(w for _, w in runs)
                print(f"  {name:36s} {cpu * 1e6:7.1f} us {rate:10,.0f} {cpu / floor:8.2f}x")
            print()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=5_000, help="text chunks per stream (default 5000)")
    parser.add_argument("--repeats", type=int, default=5, help="measured runs per path (default 5)")
    args = parser.parse_args()
    per_api = 4 * (args.repeats + 1)
    round_ = Round(
        parts=[ScriptText(chunks=["tok "] * args.chunks)], usage=Usage(input_tokens=10, output_tokens=10)
    )
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "script.jsonl"
        script.write_bytes(encode_script([round_] * (2 * per_api)))
        command = [sys.executable, "-m", "hive_conformance.model_server", str(script), "--model", MODEL]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            if not url.startswith("http"):
                raise RuntimeError("the scripted model server did not start")
            anyio.run(bench, url, args.chunks, args.repeats)
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
