"""The vendor SDK clients hive builds: each its own HTTP client, all over the process's one set of TLS settings
(loading the trusted certificates again cost ~60 ms a client, once per session opened), closed when dropped
unclosed as the SDKs' own clients are."""

from __future__ import annotations

import gc
from typing import Any

import anyio
import httpx2
import pytest
from providers_harness import anthropic
from providers_harness import collect
from providers_harness import openai_chat
from providers_harness import openai_responses
from providers_harness import scripted

from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_providers import ProviderSettings
from hive_providers._client import sdk_http_client
from hive_providers._client import shared_ssl_context
from hive_providers.compatible import from_settings

pytestmark = pytest.mark.anyio


def _tls(http: httpx2.AsyncClient) -> object:
    transport: Any = http._transport
    return transport._pool._ssl_context


def _http(sdk: Any) -> httpx2.AsyncClient:
    return sdk._client


async def test_every_sdk_client_has_its_own_http_client_over_the_shared_tls_settings() -> None:
    first, second = openai_chat("http://127.0.0.1:9"), openai_responses("http://127.0.0.1:9")
    azure = from_settings(
        ProviderSettings(provider="azure", endpoint="http://127.0.0.1:9", api_key="k", model="deploy")
    )
    claude = anthropic("http://127.0.0.1:9")
    clients = [_http(first.sdk()), _http(second.sdk()), _http(azure.sdk()), _http(await claude._sdk_client())]
    try:
        assert len({id(http) for http in clients}) == 4
        assert all(_tls(http) is shared_ssl_context() for http in clients)
        # The SDK's defaults are kept: redirects followed, as the SDKs' own clients do.
        assert all(http.follow_redirects for http in clients)
    finally:
        for client in (first, second, azure, claude):
            await client.aclose()
    assert all(http.is_closed for http in clients)


async def test_an_sdk_client_dropped_unclosed_closes_its_connections() -> None:
    async with scripted(openai_chat, Round([ScriptText("one")])) as (_, client):
        await collect(client)
        # The pool is held here, so its open connection outlives the client and shows whether it was closed.
        pool: Any = _http(client.sdk())._transport._pool
        assert len(pool.connections) == 1
        closed = anyio.Event()
        close_pool = pool.aclose

        async def aclose() -> None:
            await close_pool()
            closed.set()

        pool.aclose = aclose
        client._sdk = None
        gc.collect()
        with anyio.fail_after(5):
            await closed.wait()
        assert pool.connections == []


def test_the_http_client_class_is_made_once_per_sdk_default() -> None:
    import openai

    assert type(sdk_http_client(openai.DefaultAsyncHttpxClient)) is type(
        sdk_http_client(openai.DefaultAsyncHttpxClient)
    )
