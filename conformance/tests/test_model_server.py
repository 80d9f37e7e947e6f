"""The server's own behaviour, whatever the API: ordering, recording, exhaustion, flushing, dropping, closing."""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator

import anyio
import anyio.to_thread
import httpx2
import pytest
from openai import APIStatusError
from openai import APITimeoutError
from openai import AsyncOpenAI
from openai import OpenAI

from hive_conformance import model_server
from hive_conformance.model_server import EXHAUSTED_STATUS
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import DropConnectionFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptText

MESSAGES = [{"role": "user", "content": "hi"}]


def text_round(*chunks: str, delay: float = 0.0) -> Round:
    return Round(parts=[ScriptText(chunks=list(chunks))], chunk_delay=delay)


def chat(url: str, **options: object) -> str | None:
    with OpenAI(base_url=url + "/v1", api_key="test", max_retries=0) as client:
        reply = client.chat.completions.create(model="gpt-test", messages=MESSAGES, **options)  # type: ignore[call-overload]
        return reply.choices[0].message.content


def test_rounds_are_consumed_in_order_across_apis_and_requests() -> None:
    with ScriptedModelServer([text_round("one"), text_round("two"), text_round("three")]) as server:
        assert chat(server.url) == "one"
        with httpx2.Client(base_url=server.url) as client:
            reply = client.post(
                "/v1/messages", json={"model": "claude-test", "max_tokens": 5, "messages": MESSAGES}
            )
            assert reply.json()["content"] == [{"type": "text", "text": "two"}]
            assert server.consumed == 2
            assert server.remaining == [text_round("three")]
            reply = client.post("/v1beta/models/gemini-test:generateContent", json={"contents": []})
            assert reply.json()["candidates"][0]["content"]["parts"] == [{"text": "three"}]
        assert server.remaining == []
        server.assert_consumed()
        assert [(r.endpoint, r.round) for r in server.requests] == [
            ("openai_chat", 0),
            ("anthropic_messages", 1),
            ("gemini", 2),
        ]


def test_every_request_is_recorded_with_what_was_sent() -> None:
    with ScriptedModelServer([text_round("hello")]) as server:
        chat(server.url, temperature=0.5)
        [request] = server.requests
    assert request.index == 0
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test"
    assert request.headers["content-type"] == "application/json"
    assert request.body == {"messages": MESSAGES, "model": "gpt-test", "temperature": 0.5}
    assert request.raw_body.startswith(b"{")
    assert request.stream is False
    assert request.round == 0


def test_query_strings_are_split_from_the_path() -> None:
    with ScriptedModelServer([text_round("x")]) as server, httpx2.Client(base_url=server.url) as client:
        client.post("/v1/messages?beta=true", json={"model": "m", "max_tokens": 1, "messages": []})
        [request] = server.requests
    assert (request.path, request.query, request.endpoint) == (
        "/v1/messages",
        {"beta": "true"},
        "anthropic_messages",
    )


def test_an_exhausted_script_answers_loudly_and_is_recorded() -> None:
    with ScriptedModelServer([text_round("only")]) as server:
        assert chat(server.url) == "only"
        # The SDK's default retries stay off: the answer is neither retryable nor a server fault.
        with (
            OpenAI(base_url=server.url + "/v1", api_key="test") as client,
            pytest.raises(APIStatusError) as caught,
        ):
            client.chat.completions.create(model="gpt-test", messages=MESSAGES)  # type: ignore[arg-type]
        assert caught.value.status_code == EXHAUSTED_STATUS
        assert "no scripted round left" in caught.value.message
        assert len(server.requests) == 2
        assert [r.index for r in server.unanswered] == [1]
        assert server.requests[1].round is None
        with pytest.raises(AssertionError, match=r"request 1 .* found the script exhausted"):
            server.assert_consumed()


def test_unconsumed_rounds_are_reported() -> None:
    with ScriptedModelServer([text_round("a"), text_round("b")]) as server:
        chat(server.url)
        assert server.remaining == [text_round("b")]
        with pytest.raises(AssertionError, match="1 scripted round"):
            server.assert_consumed()


def test_rounds_can_be_added_while_serving() -> None:
    with ScriptedModelServer() as server:
        server.add(text_round("late"))
        assert chat(server.url) == "late"
        server.assert_consumed()


def test_the_model_list_names_the_configured_model_and_consumes_no_round() -> None:
    with ScriptedModelServer([text_round("kept")], model="local-model") as server:
        with OpenAI(base_url=server.url + "/v1", api_key="test") as client:
            assert [model.id for model in client.models.list()] == ["local-model"]
        assert server.remaining == [text_round("kept")]
        assert server.requests[0].endpoint == "models"


def test_token_counts_consume_no_round() -> None:
    with ScriptedModelServer([text_round("kept")]) as server, httpx2.Client(base_url=server.url) as client:
        anthropic_count = client.post("/v1/messages/count_tokens", json={"messages": MESSAGES}).json()
        gemini_count = client.post("/v1beta/models/g:countTokens", json={"contents": []}).json()
        assert anthropic_count["input_tokens"] >= 1
        assert gemini_count["totalTokens"] >= 1
        assert len(server.remaining) == 1


def test_an_unknown_route_is_a_recorded_404() -> None:
    with ScriptedModelServer([text_round("kept")]) as server, httpx2.Client(base_url=server.url) as client:
        reply = client.post("/v1/embeddings", json={"input": "x"})
        assert reply.status_code == 404
        assert "no route for POST /v1/embeddings" in reply.json()["error"]["message"]
        assert server.requests[0].endpoint == "unknown"
        assert len(server.remaining) == 1


def test_the_request_model_is_echoed_else_the_servers() -> None:
    rounds = [text_round("a"), text_round("b")]
    with (
        ScriptedModelServer(rounds, model="fallback") as server,
        httpx2.Client(base_url=server.url) as client,
    ):
        named = client.post("/v1/chat/completions", json={"model": "asked", "messages": []}).json()
        unnamed = client.post("/v1/chat/completions", json={"messages": []}).json()
    assert (named["model"], unnamed["model"]) == ("asked", "fallback")


def test_a_stream_is_flushed_event_by_event() -> None:
    # The first chunk waits a minute; the opening event must arrive before it, or the read times out.
    with ScriptedModelServer([text_round("late", delay=60)]) as server:
        with (
            httpx2.Client(base_url=server.url, timeout=5) as client,
            client.stream(
                "POST", "/v1/chat/completions", json={"model": "m", "messages": [], "stream": True}
            ) as reply,
        ):
            first = next(reply.iter_raw())
        assert first.startswith(b"data: {")
        assert b'"role":"assistant"' in first
        assert b"late" not in first
    # Closing the server woke the waiting reply instead of waiting out the delay.


def test_a_client_that_walks_away_mid_stream_leaves_the_server_serving() -> None:
    with ScriptedModelServer([text_round("a", "b", "c", delay=0.05), text_round("next")]) as server:
        with OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0) as client:
            stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
            deltas = [chunk.choices[0].delta.content for chunk, _ in zip(stream, range(2), strict=False)]
            stream.close()
            assert deltas == ["", "a"]
            assert (
                client.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content
                == "next"
            )  # type: ignore[arg-type]
        assert server.errors == []


def test_a_dropped_connection_really_closes_the_socket_mid_message() -> None:
    round_ = Round(parts=[ScriptText(chunks=["a", "b", "c"])], failure=DropConnectionFailure(after_chunks=1))
    with ScriptedModelServer([round_]) as server:
        body = b'{"model": "m", "messages": [], "stream": true}'
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
            connection.sendall(head + body)
            received = b""
            while chunk := connection.recv(65536):
                received += chunk
    assert received.startswith(b"HTTP/1.1 200")
    assert b"transfer-encoding: chunked" in received.lower()
    assert b'"content":"a"' in received
    assert b'"content":"b"' not in received
    assert not received.endswith(b"0\r\n\r\n")


def test_a_bad_json_body_is_recorded_as_none() -> None:
    with ScriptedModelServer([text_round("x")]) as server, httpx2.Client(base_url=server.url) as client:
        reply = client.post(
            "/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert reply.status_code == 200
        assert server.requests[0].body is None
        assert server.requests[0].raw_body == b"{not json"


def test_the_port_is_free_and_the_url_is_loopback() -> None:
    with ScriptedModelServer() as first, ScriptedModelServer() as second:
        assert first.port != second.port
        assert first.url == f"http://127.0.0.1:{first.port}"
    with pytest.raises(RuntimeError):
        _ = first.port


def test_close_ends_open_keep_alive_connections() -> None:
    server = ScriptedModelServer([text_round("x")]).start()
    client = httpx2.Client(base_url=server.url)
    try:
        client.post("/v1/chat/completions", json={"messages": []})
        server.close()
        with pytest.raises(httpx2.TransportError):
            client.post("/v1/chat/completions", json={"messages": []})
    finally:
        client.close()


@pytest.mark.anyio
async def test_it_serves_async_clients_as_an_async_context_manager() -> None:
    with anyio.fail_after(10):
        async with ScriptedModelServer([text_round("as", "ync")]) as server:
            async with AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0) as client:
                stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
                text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream])
            assert text == "async"
            server.assert_consumed()


def test_all_is_sorted_and_complete() -> None:
    names = model_server.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    assert all(hasattr(model_server, name) for name in names)


def connection_threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name == "scripted-model-connection"}


def test_a_stalled_stream_sends_its_first_chunks_then_nothing_until_the_client_goes_away() -> None:
    stalled = Round(parts=[ScriptText(chunks=["a", "b", "c"])], stall_after_chunks=1)
    before = connection_threads()
    with ScriptedModelServer([stalled, text_round("next")]) as server:
        # The short read timeout is the assertion that nothing more comes, not a synchronisation.
        timeout = httpx2.Timeout(5, read=0.5)
        with OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0, timeout=timeout) as client:
            stream = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            chunks = iter(stream)
            assert next(chunks).choices[0].delta.content == ""
            assert next(chunks).choices[0].delta.content == "a"
            with pytest.raises(APITimeoutError):
                next(chunks)
            stream.close()
        # The client went away: the stalled reply notices and its connection's thread ends.
        for thread in connection_threads() - before:
            thread.join(10)
            assert not thread.is_alive()
        assert chat(server.url) == "next"
        assert server.errors == []


def test_a_stall_after_every_chunk_holds_back_the_stream_ending() -> None:
    stalled = Round(parts=[ScriptText(chunks=["a", "b"])], stall_after_chunks=2)
    with (
        ScriptedModelServer([stalled]) as server,
        httpx2.Client(base_url=server.url, timeout=httpx2.Timeout(5, read=0.5)) as client,
        client.stream(
            "POST", "/v1/chat/completions", json={"model": "m", "messages": [], "stream": True}
        ) as reply,
    ):
        pieces: list[bytes] = []
        with pytest.raises(httpx2.ReadTimeout):
            pieces.extend(reply.iter_raw())
        received = b"".join(pieces)
    assert b'"content":"b"' in received
    assert b'finish_reason":"stop' not in received
    assert b"[DONE]" not in received


async def drain(chunks: AsyncIterator[bytes], into: list[bytes]) -> None:
    async for data in chunks:
        into.append(data)


@pytest.mark.anyio
async def test_closing_the_server_ends_a_stalled_stream_promptly() -> None:
    stalled = Round(parts=[ScriptText(chunks=["a", "b"])], stall_after_chunks=0)
    with anyio.fail_after(10):
        server = ScriptedModelServer([stalled]).start()
        try:
            async with (
                httpx2.AsyncClient(base_url=server.url) as client,
                client.stream(
                    "POST", "/v1/chat/completions", json={"model": "m", "messages": [], "stream": True}
                ) as reply,
            ):
                chunks = reply.aiter_raw()
                opening = await anext(chunks)
                assert b'"role":"assistant"' in opening
                assert b'"content":"a"' not in opening
                await anyio.to_thread.run_sync(server.close)
                rest: list[bytes] = []
                with pytest.raises(httpx2.TransportError):
                    await drain(chunks, rest)
                assert b'"content":"a"' not in b"".join(rest)
        finally:
            server.close()


def test_a_stalled_body_sends_nothing_until_the_server_closes() -> None:
    stalled = Round(parts=[ScriptText(chunks=["a"])], stall_after_chunks=0)
    server = ScriptedModelServer([stalled]).start()
    try:
        body = b'{"model": "m", "messages": []}'
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", server.port), timeout=0.5) as connection:
            connection.sendall(head + body)
            # The short timeout is the assertion that no answer comes.
            with pytest.raises(TimeoutError):
                connection.recv(65536)
            connection.settimeout(10)
            server.close()
            assert connection.recv(65536) == b""
        assert [request.stream for request in server.requests] == [False]
    finally:
        server.close()


def test_reset_replaces_the_rounds_and_forgets_the_requests() -> None:
    with ScriptedModelServer([text_round("old"), text_round("never")]) as server:
        with httpx2.Client(base_url=server.url) as client:
            first = client.post("/v1/chat/completions", json={"messages": []}).json()
            assert first["choices"][0]["message"]["content"] == "old"
            server.reset([text_round("new"), text_round("newer")])
            assert (server.requests, server.consumed, server.errors) == ([], 0, [])
            assert server.remaining == [text_round("new"), text_round("newer")]
            second = client.post("/v1/chat/completions", json={"messages": []}).json()
        assert second["choices"][0]["message"]["content"] == "new"
        # Rounds count from 0 again, so the reply is the same as in a fresh server.
        assert second["id"] == first["id"]
        [request] = server.requests
        assert (request.index, request.round) == (0, 0)
        server.reset()
        assert server.remaining == []
        server.assert_consumed()
