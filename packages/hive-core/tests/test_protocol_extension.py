"""An embedder's own request and event types (``ProtocolExtension``): a stdio runner given the extension reads the
added request, its handler writes the added event, and a client reads it as that type with the extension and as
an ``UnknownEvent`` without; a type clashing with a built-in one is refused."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

import anyio
import msgspec
import pytest
from core_harness import WAIT

from hive_core.runners import ExtendedSink
from hive_core.runners import SessionRunner
from hive_core.tools import EventSink
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import ExtensionClash
from hive_protocol import ProtocolError
from hive_protocol import ProtocolExtension
from hive_protocol import SessionStartedEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UnknownEvent
from hive_protocol import UnreadableRequest
from hive_protocol import UserMessageRequest
from hive_protocol import decode_event
from hive_protocol import decode_request
from hive_protocol import encode
from hive_protocol import verify

pytestmark = pytest.mark.anyio

TYPES: Final = textwrap.dedent(
    '''
    import msgspec


    class Ping(msgspec.Struct, tag_field="type", tag="x_ping", omit_defaults=True, frozen=True, kw_only=True):
        """Ask the agent for its build."""

        note: str = ""


    class Pong(msgspec.Struct, tag_field="type", tag="x_pong", omit_defaults=True, frozen=True, kw_only=True):
        """The agent's answer to a ping."""

        note: str
        build: str | None = None
    '''
)

AGENT: Final = textwrap.dedent(
    '''
    """A scripted agent served over stdio with the x_ping request and the x_pong event added."""

    import sys

    from ext_types import Ping, Pong
    from hive_core import Agent, run_stdio
    from hive_core.testing import ScriptedChatClient, reply
    from hive_protocol import ProtocolExtension


    async def on_request(request, emit):
        emit(Pong(note=request.note.upper(), build="b7"))


    client = ScriptedChatClient([reply("hello")])
    extension = ProtocolExtension(requests=[Ping], events=[Pong])
    sys.exit(run_stdio(Agent(client).session(), session_id="s1", extension=extension, on_request=on_request))
    '''
)


class Ping(msgspec.Struct, tag_field="type", tag="x_ping", omit_defaults=True, frozen=True, kw_only=True):
    note: str = ""


class Pong(msgspec.Struct, tag_field="type", tag="x_pong", omit_defaults=True, frozen=True, kw_only=True):
    note: str
    build: str | None = None


EXTENSION: Final = ProtocolExtension(requests=[Ping], events=[Pong])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_a_custom_request_is_handled_by_a_stdio_runner_and_its_event_read_only_with_the_extension(
    tmp_path: Path,
) -> None:
    (tmp_path / "ext_types.py").write_text(TYPES, encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    requests = b'{"type":"x_ping","note":"are you there?"}\n' + encode(UserMessageRequest(content="hi"))
    done = subprocess.run(
        [sys.executable, str(tmp_path / "agent.py")],
        input=requests,
        capture_output=True,
        cwd=tmp_path,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.splitlines()
    assert lines[1] == b'{"type":"x_pong","note":"ARE YOU THERE?","build":"b7"}'

    # A client with the extension reads the added event as its type; one without, as an UnknownEvent.
    with_extension = [EXTENSION.decode_event(line) for line in lines]
    assert with_extension[1] == Pong(note="ARE YOU THERE?", build="b7")
    without = [decode_event(line) for line in lines]
    assert without[1] == UnknownEvent("x_pong", {"type": "x_pong", "note": "ARE YOU THERE?", "build": "b7"})
    assert isinstance(without[0], SessionStartedEvent)
    assert [type(event) for event in without[2:]] == [TextDeltaEvent, TurnEndEvent]
    # The stream keeps every rule of the protocol: an event of an unknown type does not break it.
    assert verify(lines, turns=1) == []


def test_the_built_in_decoders_do_not_know_the_added_types() -> None:
    line = b'{"type":"x_ping","note":"n"}'
    assert EXTENSION.decode_request(line) == Ping(note="n")
    unread = decode_request(line)
    assert isinstance(unread, UnreadableRequest)
    assert "unknown request type 'x_ping'" in unread.message
    assert EXTENSION.decode_request(b'{"type":"cancel"}') == decode_request(b'{"type":"cancel"}')
    other = EXTENSION.decode_request(b'{"type":"x_other"}')
    assert isinstance(other, UnreadableRequest)
    assert "unknown request type 'x_other'; expected one of cancel" in other.message
    assert "x_ping" in other.message


def test_a_bad_added_event_is_a_protocol_error_and_a_missing_field_an_unreadable_request() -> None:
    with pytest.raises(ProtocolError, match="invalid x_pong"):
        EXTENSION.decode_event(b'{"type":"x_pong"}')
    unread = EXTENSION.decode_request(b'{"type":"x_ping","note":3}')
    assert isinstance(unread, UnreadableRequest)
    assert "invalid x_ping" in unread.message


@pytest.mark.parametrize(
    ("tag", "what"), [("cancel", "request"), ("text_delta", "event"), ("user_message", "request")]
)
def test_a_type_named_like_a_built_in_one_is_refused(tag: str, what: str) -> None:
    clash = msgspec.defstruct("Clash", [("x", int, 0)], tag_field="type", tag=tag, omit_defaults=True)
    with pytest.raises(ExtensionClash, match=f"the type '{tag}' is a built-in protocol type"):
        ProtocolExtension(**{f"{what}s": [clash]})  # pyright: ignore[reportArgumentType]


def test_a_type_added_twice_or_not_canonical_is_refused() -> None:
    twin = msgspec.defstruct("Twin", [], tag_field="type", tag="x_ping", omit_defaults=True)
    with pytest.raises(ExtensionClash, match="added twice"):
        ProtocolExtension(requests=[Ping], events=[twin])
    untagged = msgspec.defstruct("Untagged", [("x", int, 0)], omit_defaults=True)
    with pytest.raises(ExtensionClash, match="tag_field='type'"):
        ProtocolExtension(events=[untagged])
    other_field = msgspec.defstruct("Other", [], tag_field="kind", tag="x_other", omit_defaults=True)
    with pytest.raises(ExtensionClash, match="tag_field='type'"):
        ProtocolExtension(events=[other_field])
    noisy = msgspec.defstruct("Noisy", [("x", int, 0)], tag_field="type", tag="x_noisy")
    with pytest.raises(ExtensionClash, match="omit_defaults=True"):
        ProtocolExtension(events=[noisy])
    with pytest.raises(ExtensionClash, match=r"not a msgspec\.Struct"):
        ProtocolExtension(events=[dict])  # pyright: ignore[reportArgumentType]


async def _serve(runner: SessionRunner, *lines: bytes) -> list[Event | msgspec.Struct]:
    events: list[Event | msgspec.Struct] = []

    async def incoming() -> AsyncIterator[bytes]:
        for line in lines:
            yield line

    with anyio.fail_after(WAIT):
        await runner.serve(incoming(), events.append)
    return events


async def _noop(request: UserMessageRequest, emit: EventSink) -> None:
    return None


async def test_an_added_request_without_a_handler_or_whose_handler_fails_is_answered_with_an_error() -> None:
    unhandled = await _serve(SessionRunner(_noop, extension=EXTENSION), b'{"type":"x_ping"}')
    assert unhandled[1:] == [
        ErrorEvent(message="x_ping requests are not handled here", code="request_rejected")
    ]

    async def failing(request: msgspec.Struct, emit: ExtendedSink) -> None:
        raise RuntimeError("no build recorded")

    failed = await _serve(
        SessionRunner(_noop, extension=EXTENSION, on_request=failing),
        b'{"type":"x_ping"}',
        b'{"type":"x_ping"}',
    )
    error = ErrorEvent(message="the x_ping request failed: no build recorded", code="internal")
    assert failed[1:] == [error, error]
