"""Local models worth using: for each model here, hive's ``LocalChatClient`` against plain llama-cpp-python.

Run: uv run python benchmarks/local_models.py [--tokens 48] [--repeats 3] [--threads N] [--model PATH ...]

The models: the packaged SmolLM2-135M, every model of the alias table (``hive models pull --help``) found in the
Hugging Face cache (nothing is downloaded), and each ``--model`` file. For each, both sides load the same GGUF
with the same context size and thread count and answer the same prompts greedily (temperature 0, the same
sampling settings).

Speed: a greeting without tools, a different name each run (the system prompt stays in both KV caches, the
user's words are evaluated). The raw side iterates ``Llama.create_chat_completion(stream=True)``; hive's side runs
the adapter's stream on an event loop. The figures are medians over the runs: first-token latency (request to
the first text), tokens per second after it, and the ratios hive / raw of the first-token latency and of the
time per token (goal: at most 1.5 on every row).

Tasks, scored per side: a greeting (an answer, no call), arithmetic (``42``, no call), "list the files" (one call
to ``list_files``) and an edit needing two calls (``read_file`` of the file, then, given its text,
``edit_file`` replacing the word). The tool score counts those three calls. hive offers the tools as it does in
a session (the model's own format when its template is tool-aware, else its prompted fallback, and a call
parsed from ``<tool_call>`` blocks); the raw side passes the same tools to ``create_chat_completion(tools=...)``
and a call counts when its text holds a ``<tool_call>`` block naming it (what a tool-aware template asks for).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import cast

import anyio

from hive_core import ChatOptions
from hive_core import Message
from hive_core import TextUpdate
from hive_core import ToolCallPart
from hive_core import ToolCallUpdate
from hive_core import ToolResultPart
from hive_core import ToolSpec
from hive_core import UsageUpdate
from hive_core.messages import system
from hive_core.messages import user
from hive_providers.local import LocalChatClient
from hive_providers.local import default_model_path
from hive_providers.local.generation import SAMPLING
from hive_providers.local.hub import cached_model
from hive_providers.local.model_table import MODEL_TABLE

CONTEXT = 4096
INSTRUCTIONS = "You are hive, a helpful assistant. Keep answers short."
"""The small-model profile's instructions (``hive_cli.assemble.instructions_for``)."""
SETTINGS: dict[str, Any] = {"temperature": 0.0, **SAMPLING}
"""Greedy, with the sampling settings hive uses (llama-cpp-python's defaults)."""
NAMES = ("Ann", "Bob", "Cleo", "Dan", "Eve", "Finn", "Gus", "Hal", "Ida")
NOTES = "the cat sat on the mat"

TOOLS = [
    ToolSpec(
        "list_files",
        "List the files of a directory.",
        {"type": "object", "properties": {"path": {"type": "string", "description": "The directory."}}},
    ),
    ToolSpec(
        "read_file",
        "Read a text file.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    ToolSpec(
        "edit_file",
        "Replace text in a file: old_text becomes new_text.",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_text": {"type": "string"},
                "new_text": {"type": "string"},
            },
            "required": ["path", "old_text", "new_text"],
        },
    ),
]
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
    }
    for t in TOOLS
]
_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*(?:</tool_call>|$)", re.DOTALL)


@dataclass
class Reply:
    """One answer: its text and calls (name, arguments)."""

    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list[tuple[str, dict[str, Any]]])


@dataclass
class Row:
    """One side's figures on one model."""

    first: list[float] = field(default_factory=list[float])
    per_token: list[float] = field(default_factory=list[float])
    cpu: list[float] = field(default_factory=list[float])
    answers: int = 0
    calls: int = 0


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def _raw_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    for body in _CALL.findall(text):
        value = _arguments(body)
        name = value.get("name")
        if isinstance(name, str):
            arguments = value.get("arguments")
            calls.append((name, cast("dict[str, Any]", arguments) if isinstance(arguments, dict) else {}))
    return calls


# --- the raw side -----------------------------------------------------------------------------------------------


def raw_speed(llama: Any, name: str, tokens: int) -> tuple[float, float, float]:
    """First-token latency, seconds per token after it, and CPU seconds of the whole request, of one greeting."""
    messages = [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": f"Say hello to {name}."},
    ]
    cpu = time.process_time()
    start = time.perf_counter()
    first: float | None = None
    count = 0
    for chunk in llama.create_chat_completion(messages, stream=True, max_tokens=tokens, **SETTINGS):
        if chunk["choices"][0]["delta"].get("content"):
            count += 1
            if first is None:
                first = time.perf_counter()
    end = time.perf_counter()
    assert first is not None, "the raw side wrote nothing"
    return first - start, (end - first) / max(count - 1, 1), time.process_time() - cpu


def raw_reply(llama: Any, messages: list[dict[str, Any]], tools: bool) -> Reply:
    extra: dict[str, Any] = {"tools": OPENAI_TOOLS, "tool_choice": "auto"} if tools else {}
    result = llama.create_chat_completion(
        [{"role": "system", "content": INSTRUCTIONS}, *messages], max_tokens=128, **SETTINGS, **extra
    )
    text = result["choices"][0]["message"].get("content") or ""
    return Reply(text, _raw_calls(text))


# --- hive's side ----------------------------------------------------------------------------------------------


async def hive_speed(client: LocalChatClient, name: str, tokens: int) -> tuple[float, float, float]:
    """First-token latency, seconds per token after it, and CPU seconds of the whole request (every thread of
    the process), of one greeting."""
    options = ChatOptions(temperature=0.0, max_output_tokens=tokens)
    cpu = time.process_time()
    start = time.perf_counter()
    first: float | None = None
    generated = 0
    async for update in client.stream([system(INSTRUCTIONS), user(f"Say hello to {name}.")], options):
        if isinstance(update, TextUpdate) and update.text and first is None:
            first = time.perf_counter()
        elif isinstance(update, UsageUpdate):
            generated = update.output_tokens
    end = time.perf_counter()
    assert first is not None, "hive wrote nothing"
    return first - start, (end - first) / max(generated - 1, 1), time.process_time() - cpu


async def hive_reply(client: LocalChatClient, messages: Sequence[Message], tools: bool) -> Reply:
    options = ChatOptions(temperature=0.0, max_output_tokens=128, tools=TOOLS if tools else [])
    reply = Reply()
    calls: dict[int, list[str]] = {}
    async for update in client.stream([system(INSTRUCTIONS), *messages], options):
        if isinstance(update, TextUpdate):
            reply.text += update.text
        elif isinstance(update, ToolCallUpdate):
            entry = calls.setdefault(update.index, ["", ""])
            entry[0] += update.name or ""
            entry[1] += update.arguments
    reply.calls = [(name, _arguments(arguments)) for name, arguments in calls.values()]
    return reply


# --- the tasks ------------------------------------------------------------------------------------------------


def _is(call: tuple[str, dict[str, Any]], name: str, **wanted: str) -> bool:
    return call[0] == name and all(value in str(call[1].get(key, "")) for key, value in wanted.items())


SHOW: list[bool] = []
"""Set by ``--show``: print every task's reply."""


def show(side: str, *replies: Reply) -> None:
    """Print the task replies of one side (``--show``)."""
    if SHOW:
        for task, reply in zip(("greeting", "arithmetic", "list", "read", "edit"), replies, strict=True):
            print(f"    {side} {task}: {reply.text.strip()[:100]!r} {reply.calls}")


def score_answers(greeting: Reply, arithmetic: Reply) -> int:
    return int(bool(greeting.text.strip()) and not greeting.calls) + int(
        "42" in arithmetic.text and not arithmetic.calls
    )


def score_calls(listing: Reply, read: Reply, edit: Reply) -> int:
    return (
        int(len(listing.calls) == 1 and listing.calls[0][0] == "list_files")
        + int(bool(read.calls) and _is(read.calls[0], "read_file", path="notes.txt"))
        + int(
            bool(edit.calls)
            and _is(edit.calls[0], "edit_file", path="notes.txt", old_text="cat", new_text="dog")
        )
    )


GREETING = "Hello!"
ARITHMETIC = "What is 17 + 25? Reply with just the number."
LISTING = "List the files in the current directory."
EDIT = "In the file notes.txt, replace the word cat with dog."
READ_ARGUMENTS = '{"path": "notes.txt"}'


async def hive_tasks(client: LocalChatClient) -> tuple[int, int]:
    greeting = await hive_reply(client, [user(GREETING)], tools=True)
    arithmetic = await hive_reply(client, [user(ARITHMETIC)], tools=True)
    listing = await hive_reply(client, [user(LISTING)], tools=True)
    read = await hive_reply(client, [user(EDIT)], tools=True)
    # The second step, whatever the first did: the file was read.
    call = ToolCallPart("call_1", "read_file", READ_ARGUMENTS, {"path": "notes.txt"})
    history = [
        user(EDIT),
        Message("assistant", [call]),
        Message("tool", [ToolResultPart("call_1", "read_file", NOTES)]),
    ]
    edit = await hive_reply(client, history, tools=True)
    show("hive", greeting, arithmetic, listing, read, edit)
    return score_answers(greeting, arithmetic), score_calls(listing, read, edit)


def raw_tasks(llama: Any) -> tuple[int, int]:
    greeting = raw_reply(llama, [{"role": "user", "content": GREETING}], tools=True)
    arithmetic = raw_reply(llama, [{"role": "user", "content": ARITHMETIC}], tools=True)
    listing = raw_reply(llama, [{"role": "user", "content": LISTING}], tools=True)
    read = raw_reply(llama, [{"role": "user", "content": EDIT}], tools=True)
    history = [
        {"role": "user", "content": EDIT},
        {
            "role": "assistant",
            "content": f'<tool_call>\n{{"name": "read_file", "arguments": {READ_ARGUMENTS}}}\n</tool_call>',
        },
        {"role": "tool", "content": NOTES},
    ]
    edit = raw_reply(llama, history, tools=True)
    show("raw", greeting, arithmetic, listing, read, edit)
    return score_answers(greeting, arithmetic), score_calls(listing, read, edit)


# --- the run --------------------------------------------------------------------------------------------------


def models(extra: Sequence[Path]) -> list[tuple[str, Path]]:
    """The packaged model, the table's models in the hub's cache, and ``extra``."""
    found: list[tuple[str, Path]] = []
    packaged = default_model_path()
    if packaged is not None:
        found.append(("smollm2-135m (packaged)", packaged))
    for model in MODEL_TABLE:
        if model.repo is not None and (path := cached_model(model.repo, model.pattern)) is not None:
            found.append((model.alias, path))
    found += [(path.name, path) for path in extra]
    return found


async def measure(label: str, path: Path, args: argparse.Namespace) -> tuple[Row, Row]:
    from llama_cpp import Llama

    with contextlib.redirect_stderr(io.StringIO()):
        raw = Llama(model_path=str(path), n_ctx=CONTEXT, n_threads=args.threads, verbose=True)
    raw.verbose = False
    client = LocalChatClient(
        model_path=path, context_length=CONTEXT, threads=args.threads, prefix_cache_bytes=0
    )
    raw_row, hive_row = Row(), Row()
    # Warm-up: loads hive's copy and puts the system prompt in both KV caches.
    raw_speed(raw, "Zoe", args.tokens)
    await hive_speed(client, "Zoe", args.tokens)
    for name in NAMES[: args.repeats]:
        first, per_token, cpu = raw_speed(raw, name, args.tokens)
        raw_row.first.append(first)
        raw_row.per_token.append(per_token)
        raw_row.cpu.append(cpu)
        first, per_token, cpu = await hive_speed(client, name, args.tokens)
        hive_row.first.append(first)
        hive_row.per_token.append(per_token)
        hive_row.cpu.append(cpu)
    raw_row.answers, raw_row.calls = raw_tasks(raw)
    hive_row.answers, hive_row.calls = await hive_tasks(client)
    raw.close()
    print(f"  measured {label}", flush=True)
    return raw_row, hive_row


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tokens", type=int, default=48, help="tokens of each greeting")
    parser.add_argument("--repeats", type=int, default=3, help="greetings per side (at most 9)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--model", type=Path, action="append", default=[], help="another GGUF file")
    parser.add_argument("--show", action="store_true", help="print each task's reply")
    args = parser.parse_args()
    if args.show:
        SHOW.append(True)
    found = models(args.model)
    if not found:
        raise SystemExit("no model: install hive-providers[local], pull one, or pass --model PATH")
    print(
        f"context {CONTEXT}, threads {args.threads or 'default'}, {os.cpu_count()} cores, {args.repeats} runs"
    )
    results = [(label, *await measure(label, path, args)) for label, path in found]

    header = (
        f"{'model':26s} {'side':5s} {'1st token':>10s} {'tok/s':>7s} {'answers':>8s} {'tools':>6s}"
        f" {'ratio 1st':>10s} {'ratio tok':>10s} {'ratio CPU':>10s}"
    )
    print(header)
    for label, raw_row, hive_row in results:
        raw_first, hive_first = statistics.median(raw_row.first), statistics.median(hive_row.first)
        raw_token, hive_token = statistics.median(raw_row.per_token), statistics.median(hive_row.per_token)
        for side, row, first, token in (
            ("raw", raw_row, raw_first, raw_token),
            ("hive", hive_row, hive_first, hive_token),
        ):
            cpu = statistics.median(hive_row.cpu) / statistics.median(raw_row.cpu)
            ratios = (
                f" {hive_first / raw_first:10.2f} {hive_token / raw_token:10.2f} {cpu:10.2f}"
                if side == "hive"
                else ""
            )
            print(
                f"{label:26s} {side:5s} {first * 1000:8.0f}ms {1 / token:7.1f} {row.answers:6d}/2 {row.calls:4d}/3"
                + ratios
            )
    print(
        "ratios: hive / raw of the median first-token latency, time per token and CPU seconds of a request "
        "(every thread; the figure to trust on a busy machine); goal <= 1.5"
    )


if __name__ == "__main__":
    anyio.run(main)
