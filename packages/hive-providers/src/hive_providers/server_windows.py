"""Asking a model server for the context window it runs a model with: Ollama, LM Studio, llama.cpp's server
and GPUStack each say so in their own way.

A :data:`WindowProbe` is given an HTTP client (already carrying the key, with short timeouts), the API root the
adapter talks to (``…/v1`` for the OpenAI-compatible API) and the model; it returns the window in tokens, or
``None`` when the server does not say. HTTP and decoding failures propagate: the adapter that probes logs them
and keeps the window it knew without the server (:meth:`~hive_providers._client.RemoteChatClient.probe_capabilities`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Final

import httpx2
import msgspec

__all__ = [
    "WindowProbe",
    "gpustack_window",
    "llamacpp_window",
    "lmstudio_window",
    "ollama_window",
    "server_root",
]

WindowProbe = Callable[[httpx2.AsyncClient, str, str], Awaitable[int | None]]
"""``(http, api_root, model)`` → the window the server runs ``model`` with, ``None`` when it does not say."""

_log: Final = logging.getLogger(__name__)

# Answers after which the next way of asking is tried (a ValidationError is a DecodeError); a server that cannot
# be reached at all is not asked again.
_STEP_FAILURES: Final = (httpx2.HTTPStatusError, msgspec.DecodeError)


def server_root(api_root: str) -> str:
    """The server's own root for an OpenAI-compatible API root (a trailing ``/v1`` dropped): where Ollama's,
    LM Studio's and llama.cpp's native endpoints are."""
    root = api_root.rstrip("/")
    return root.removesuffix("/v1")


def _positive(value: object) -> int | None:
    # bool is an int; a window is never true or false.
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def _json(response: Awaitable[httpx2.Response]) -> object:
    answer = await response
    answer.raise_for_status()
    return msgspec.json.decode(answer.content)


class _OllamaRunning(msgspec.Struct):
    name: str = ""
    model: str = ""
    context_length: object = None


class _OllamaRunningList(msgspec.Struct):
    models: list[_OllamaRunning] = msgspec.field(default_factory=list[_OllamaRunning])


class _OllamaShow(msgspec.Struct):
    parameters: str = ""
    model_info: dict[str, object] = msgspec.field(default_factory=dict[str, object])


def _ollama_tag(model: str) -> str:
    return model if ":" in model else f"{model}:latest"


def _num_ctx(parameters: str) -> int | None:
    """``num_ctx`` of an Ollama model's parameters (one ``name value`` per line), when it sets one."""
    for line in parameters.splitlines():
        name, _, value = line.strip().partition(" ")
        if name == "num_ctx" and value.strip().isdigit():
            return _positive(int(value.strip()))
    return None


async def ollama_window(http: httpx2.AsyncClient, api_root: str, model: str) -> int | None:
    """Ollama: the context a loaded model runs with (``GET /api/ps``), else the model's ``num_ctx`` parameter,
    else the length it was trained with (``POST /api/show`` → ``model_info["<architecture>.context_length"]``)."""
    root = server_root(api_root)
    wanted = _ollama_tag(model)
    try:
        running = msgspec.convert(await _json(http.get(f"{root}/api/ps")), _OllamaRunningList)
        for entry in running.models:
            length = _positive(entry.context_length)
            if length is not None and wanted in (_ollama_tag(entry.name), _ollama_tag(entry.model)):
                return length
    except _STEP_FAILURES as exc:
        _log.debug("ollama: /api/ps did not answer (%s)", exc)
    shown = msgspec.convert(await _json(http.post(f"{root}/api/show", json={"model": model})), _OllamaShow)
    if (configured := _num_ctx(shown.parameters)) is not None:
        return configured
    architecture = shown.model_info.get("general.architecture")
    if isinstance(architecture, str):
        return _positive(shown.model_info.get(f"{architecture}.context_length"))
    return None


class _LmStudioModel(msgspec.Struct):
    id: str
    max_context_length: object = None
    loaded_context_length: object = None


class _LmStudioModels(msgspec.Struct):
    data: list[_LmStudioModel]


async def _lmstudio_only(http: httpx2.AsyncClient, api_root: str, model: str) -> int | None:
    listed = msgspec.convert(await _json(http.get(f"{server_root(api_root)}/api/v0/models")), _LmStudioModels)
    matches = [entry for entry in listed.data if entry.id == model] or [
        entry for entry in listed.data if entry.id.lower() == model.lower()
    ]
    if not matches:
        return None
    loaded = _positive(matches[0].loaded_context_length)
    return loaded if loaded is not None else _positive(matches[0].max_context_length)


class _GenerationSettings(msgspec.Struct):
    n_ctx: object = None


class _Props(msgspec.Struct):
    default_generation_settings: _GenerationSettings | None = None


async def llamacpp_window(http: httpx2.AsyncClient, api_root: str, model: str) -> int | None:
    """llama.cpp's server: the context of its slots (``GET /props`` → ``default_generation_settings.n_ctx``);
    it serves one model, so ``model`` is not asked about."""
    props = msgspec.convert(await _json(http.get(f"{server_root(api_root)}/props")), _Props)
    settings = props.default_generation_settings
    return _positive(settings.n_ctx) if settings is not None else None


async def lmstudio_window(http: httpx2.AsyncClient, api_root: str, model: str) -> int | None:
    """LM Studio: the loaded context of the model, else its maximum (``GET /api/v0/models``); a server at the
    same address that is not LM Studio but llama.cpp's is asked as such (:func:`llamacpp_window`)."""
    try:
        found = await _lmstudio_only(http, api_root, model)
    except _STEP_FAILURES as exc:
        _log.debug("lmstudio: /api/v0/models did not answer (%s)", exc)
    else:
        if found is not None:
            return found
    return await llamacpp_window(http, api_root, model)


class _GpuStackMeta(msgspec.Struct):
    n_ctx: object = None


class _GpuStackModel(msgspec.Struct):
    id: str
    max_model_len: object = None
    meta: _GpuStackMeta | None = None


class _GpuStackModels(msgspec.Struct):
    data: list[_GpuStackModel]


async def gpustack_window(http: httpx2.AsyncClient, api_root: str, model: str) -> int | None:
    """GPUStack: the model's entry of its OpenAI-compatible model list (``GET <api root>/models``), which
    carries ``max_model_len`` for a vLLM backend and ``meta.n_ctx`` for a llama-box one."""
    listed = msgspec.convert(await _json(http.get(f"{api_root.rstrip('/')}/models")), _GpuStackModels)
    for entry in listed.data:
        if entry.id == model:
            if (length := _positive(entry.max_model_len)) is not None:
                return length
            return _positive(entry.meta.n_ctx) if entry.meta is not None else None
    return None
