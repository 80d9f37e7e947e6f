"""Where a client's context window comes from, each source winning in its place: the server's own metadata
(Ollama, LM Studio, llama.cpp's server, GPUStack, served here by a small fake on 127.0.0.1; the local model's
GGUF header), the catalog, a window the client is built with, ``compaction.maxContextTokens``, the default."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from providers_harness import configuration
from providers_metadata import metadata_server

from hive_core import Capabilities
from hive_core.chat import CapabilityProbe
from hive_core.chat import probed_capabilities
from hive_core.context import DEFAULT_CONTEXT_WINDOW
from hive_core.context import CompactionSettings
from hive_core.context import ContextWindow
from hive_core.context import resolve_window
from hive_core.testing import ScriptedChatClient
from hive_providers import ProviderSettings
from hive_providers.compatible import from_settings
from hive_providers.local import LocalChatClient
from hive_providers.openai_chat import OpenAIChatClient
from hive_providers.registry import model_capabilities

pytestmark = pytest.mark.anyio

OLLAMA_SHOW: dict[str, Any] = {
    "parameters": 'stop "<|eot_id|>"',
    "model_info": {"general.architecture": "llama", "llama.context_length": 131_072, "llama.block_count": 28},
}


def window_of(capabilities: Capabilities) -> tuple[int | None, str | None]:
    return capabilities.context_window, capabilities.context_window_source


def ollama(url: str, model: str = "llama3.2") -> OpenAIChatClient:
    return from_settings(ProviderSettings(provider="ollama", endpoint=url, model=model))


# -- Ollama ------------------------------------------------------------------------------------------------------


async def test_ollama_reports_the_models_trained_length_from_api_show() -> None:
    routes: dict[str, tuple[int, Any]] = {
        "POST /api/show": (200, OLLAMA_SHOW),
        "GET /api/ps": (200, {"models": []}),
    }
    with metadata_server(routes) as server:
        client = ollama(server.url)
        assert isinstance(client, CapabilityProbe)
        assert window_of(client.capabilities) == (None, None)  # nothing is asked before the probe
        assert server.seen == []
        assert window_of(await probed_capabilities(client)) == (131_072, "server")
        assert window_of(client.capabilities) == (131_072, "server")
        assert server.paths() == ["GET /api/ps", "POST /api/show"]
        assert server.seen[1].body == {"model": "llama3.2"}
        # Once per client: a second probe answers from the first.
        await client.probe_capabilities()
        assert len(server.seen) == 2


async def test_ollama_num_ctx_parameter_wins_over_the_trained_length() -> None:
    show = {**OLLAMA_SHOW, "parameters": "num_ctx                        16384\nstop <|eot_id|>"}
    with metadata_server({"POST /api/show": (200, show)}) as server:
        assert window_of(await probed_capabilities(ollama(server.url + "/v1"))) == (16_384, "server")


async def test_ollama_loaded_model_context_wins_over_everything_it_says() -> None:
    show = {**OLLAMA_SHOW, "parameters": "num_ctx 16384"}
    running = {
        "models": [
            {"name": "qwen3:8b", "model": "qwen3:8b", "context_length": 40_960},
            {"name": "llama3.2:latest", "model": "llama3.2:latest", "context_length": 8_192},
        ]
    }
    with metadata_server({"POST /api/show": (200, show), "GET /api/ps": (200, running)}) as server:
        assert window_of(await probed_capabilities(ollama(server.url))) == (8_192, "server")
        assert server.paths() == ["GET /api/ps"]


# -- LM Studio and llama.cpp ------------------------------------------------------------------------------------


LMSTUDIO_MODELS: dict[str, Any] = {
    "object": "list",
    "data": [
        {"id": "qwen2.5-7b-instruct", "object": "model", "state": "not-loaded", "max_context_length": 32_768},
        {
            "id": "llama-3.2-3b-instruct",
            "object": "model",
            "state": "loaded",
            "max_context_length": 131_072,
            "loaded_context_length": 4_096,
        },
    ],
}


@pytest.mark.parametrize(
    ("model", "window"), [("llama-3.2-3b-instruct", 4_096), ("qwen2.5-7b-instruct", 32_768)]
)
async def test_lmstudio_reports_the_loaded_context_else_the_maximum(model: str, window: int) -> None:
    with metadata_server({"GET /api/v0/models": (200, LMSTUDIO_MODELS)}) as server:
        client = from_settings(
            ProviderSettings(provider="lmstudio", endpoint=server.url + "/v1", model=model)
        )
        assert window_of(await probed_capabilities(client)) == (window, "server")
        assert server.paths() == ["GET /api/v0/models"]


async def test_a_llamacpp_server_at_the_lmstudio_address_reports_its_slot_context() -> None:
    props = {"default_generation_settings": {"n_ctx": 6_144, "model": "smollm2"}, "total_slots": 1}
    with metadata_server({"GET /props": (200, props)}) as server:
        client = from_settings(
            ProviderSettings(provider="lmstudio", endpoint=server.url + "/v1", model="any")
        )
        assert window_of(await probed_capabilities(client)) == (6_144, "server")
        assert server.paths() == ["GET /api/v0/models", "GET /props"]


# -- GPUStack ----------------------------------------------------------------------------------------------------


async def test_gpustack_reports_its_model_lists_length_and_is_sent_the_key() -> None:
    listed = {
        "data": [
            {"id": "other", "max_model_len": 2_048},
            {"id": "qwen3-8b", "max_model_len": 32_768},
            {"id": "llama-box-model", "meta": {"n_ctx": 8_192}},
        ]
    }
    with metadata_server({"GET /v1-openai/models": (200, listed)}) as server:
        for model, window in (("qwen3-8b", 32_768), ("llama-box-model", 8_192)):
            settings = ProviderSettings(
                provider="gpustack", endpoint=server.url, api_key="gs-key", model=model
            )
            assert window_of(await probed_capabilities(from_settings(settings))) == (window, "server")
        assert server.seen[0].headers["authorization"] == "Bearer gs-key"


# -- when the server cannot say ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "routes",
    [
        {},  # 404 everywhere
        {"POST /api/show": (500, {"error": "boom"})},
        {"POST /api/show": (200, b"{not json")},
        {"POST /api/show": (200, {"model_info": {"general.architecture": "gptoss"}})},  # no length
        {"POST /api/show": (200, {"model_info": {"general.architecture": "x", "x.context_length": "big"}})},
        {"POST /api/show": (200, [1, 2, 3])},
    ],
)
async def test_a_server_that_cannot_say_leaves_the_window_to_the_catalog(routes: dict[str, Any]) -> None:
    with metadata_server(routes) as server:
        client = ollama(server.url, model="gpt-oss:20b")
        assert window_of(await probed_capabilities(client)) == (131_072, "catalog")
        assert server.seen  # it was asked


async def test_an_unreachable_server_is_no_error() -> None:
    with metadata_server({}) as server:
        url = server.url
    client = ollama(url, model="some-local-model")
    assert window_of(await probed_capabilities(client)) == (None, None)


async def test_a_configured_window_wins_and_the_server_is_not_asked() -> None:
    with metadata_server({"POST /api/show": (200, OLLAMA_SHOW)}) as server:
        client = from_settings(
            ProviderSettings(provider="ollama", endpoint=server.url, model="llama3.2", context_length=12_000)
        )
        assert window_of(await probed_capabilities(client)) == (12_000, "configured")
        assert server.seen == []


async def test_a_client_that_cannot_probe_keeps_its_capabilities() -> None:
    scripted = ScriptedChatClient([], capabilities=Capabilities(context_window=100))
    assert not isinstance(scripted, CapabilityProbe)
    assert window_of(await probed_capabilities(scripted)) == (100, None)


async def test_model_capabilities_builds_asks_and_closes_for_any_model() -> None:
    with metadata_server({"POST /api/show": (200, OLLAMA_SHOW)}) as server:
        settings = ProviderSettings(provider="ollama", endpoint=server.url, model="llama3.2")
        assert window_of(await model_capabilities(settings, "qwen3:8b")) == (131_072, "server")
        assert server.seen[-1].body == {"model": "qwen3:8b"}


# -- the local model's GGUF header ------------------------------------------------------------------------------


def gguf_file(path: Path, context_length: int) -> Path:
    """A GGUF header (no tensors) of a ``llama`` model trained with ``context_length`` tokens."""

    def text(value: str) -> bytes:
        data = value.encode()
        return struct.pack("<Q", len(data)) + data

    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 2)
    header += text("general.architecture") + struct.pack("<I", 8) + text("llama")
    header += text("llama.context_length") + struct.pack("<II", 4, context_length)
    path.write_bytes(header)
    return path


def test_the_local_model_reports_its_gguf_header_as_the_server(tmp_path: Path) -> None:
    model = gguf_file(tmp_path / "tiny.gguf", 2_048)
    # The trained length bounds whatever size memory or the configuration asks for.
    assert window_of(LocalChatClient(model_path=model).capabilities) == (2_048, "server")
    assert window_of(LocalChatClient(model_path=model, context_length=1_024).capabilities) == (
        1_024,
        "server",
    )
    missing = LocalChatClient(model_path=tmp_path / "missing.gguf")
    assert window_of(missing.capabilities) == (None, None)


# -- resolving: client, then compaction.maxContextTokens, then the default --------------------------------------


def test_each_source_wins_in_its_place(tmp_path: Path) -> None:
    config = configuration(tmp_path, text="compaction:\n  maxContextTokens: 65536\n")
    configured = CompactionSettings.from_config(config).max_context_tokens
    assert configured == 65_536
    server = Capabilities(context_window=8_192, context_window_source="server")
    catalog = Capabilities(context_window=400_000, context_window_source="catalog")
    assert resolve_window(server, configured) == ContextWindow(8_192, "server")
    assert resolve_window(catalog, configured) == ContextWindow(400_000, "catalog")
    assert resolve_window(Capabilities(), configured) == ContextWindow(65_536, "configured")
    assert resolve_window(Capabilities()) == ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")
    assert resolve_window(Capabilities(), None, default=4_096) == ContextWindow(4_096, "default")
    assert ContextWindow(1_047_576, "catalog").describe() == "1,047,576 tokens (from the catalog)"
