"""The execution log a recorded session keeps: a failed request, a compaction, a provider fallback and a cancelled
call each get their record, and a log read in pieces (as ``hive logs --follow`` reads it) loses nothing."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from core_harness import WAIT
from core_harness import history

from hive_core import Agent
from hive_core import ChatError
from hive_core import FallbackChatClient
from hive_core import SessionRunner
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.execution_log import CompactionRecord
from hive_core.execution_log import FallbackRecord
from hive_core.execution_log import LogRecord
from hive_core.execution_log import ModelRequestRecord
from hive_core.execution_log import ToolRecord
from hive_core.execution_log import TurnEndRecord
from hive_core.execution_log import TurnStartRecord
from hive_core.execution_log import record_kind
from hive_core.sessions import LogReader
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import TranscriptRecorder
from hive_core.sessions import execution_log
from hive_core.testing import ScriptedChatClient
from hive_core.testing import call
from hive_core.testing import fail
from hive_core.testing import reply
from hive_protocol import ToolStartEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio

OVERFLOW = ChatError(
    "openai: HTTP 400: This model's maximum context length is 8192 tokens", code="context_limit"
)


def kinds(log: list[LogRecord]) -> list[str]:
    return [record_kind(record) for record in log]


def session_in(store: SharedSessionStore, project: Path) -> str:
    return store.create(project_path=project, model="scripted").id


async def test_an_overflow_logs_the_failed_request_the_compaction_and_the_retry(
    store: SharedSessionStore, project: Path
) -> None:
    sid = session_in(store, project)
    client = ScriptedChatClient([fail(OVERFLOW), reply("SUMMARY-X"), reply("fits now", usage=(900, 3))])
    session = Agent(client, policy=ALLOW_ALL).session(history(3, 3_900))
    recorder = TranscriptRecorder(session, store, sid, model="m-1")
    with anyio.fail_after(WAIT):
        await collect_turn(recorder, "again")

    log = list(execution_log(store.entries(sid)))

    assert kinds(log) == ["turn_start", "model_request", "compaction", "model_request", "turn_end"]
    failed, compaction, retried = log[1:4]
    assert isinstance(failed, ModelRequestRecord)
    assert failed.error is not None
    assert "maximum context length" in failed.error
    assert (failed.input_tokens, failed.output_tokens, failed.model) == (None, None, "m-1")
    assert isinstance(compaction, CompactionRecord)
    assert compaction.summarized
    assert compaction.messages_after < compaction.messages_before
    assert compaction.tokens_after < compaction.tokens_before
    assert isinstance(retried, ModelRequestRecord)
    assert (retried.error, retried.input_tokens, retried.output_tokens) == (None, 900, 3)
    # The compacted request is smaller than the one that overflowed.
    assert 0 < retried.request_bytes < failed.request_bytes


async def test_a_provider_fallback_is_logged_before_the_request_it_saved(
    store: SharedSessionStore, project: Path
) -> None:
    sid = session_in(store, project)
    first = ScriptedChatClient([fail(ChatError("bad key", code="auth"))])
    second = ScriptedChatClient([reply("from the second", usage=(7, 3))])
    session = Agent(FallbackChatClient([first, second]), policy=ALLOW_ALL).session()
    with anyio.fail_after(WAIT):
        await collect_turn(TranscriptRecorder(session, store, sid), "hello")

    log = list(execution_log(store.entries(sid)))

    assert kinds(log) == ["turn_start", "fallback", "model_request", "turn_end"]
    fallback = log[1]
    assert isinstance(fallback, FallbackRecord)
    assert (
        fallback.step,
        fallback.provider_index,
        fallback.category,
        fallback.message,
        fallback.attempt,
    ) == (
        "fallback",
        0,
        "auth",
        "bad key",
        1,
    )
    request = log[2]
    assert isinstance(request, ModelRequestRecord)
    assert (request.input_tokens, request.output_tokens, request.model, request.error) == (7, 3, None, None)


async def test_a_call_cut_short_by_a_cancelled_turn_is_logged_as_cancelled(
    store: SharedSessionStore, project: Path
) -> None:
    sid = session_in(store, project)
    gate = anyio.Event()  # never set: the call runs until the turn is cancelled

    @tool
    async def wait_here() -> str:
        """Wait until released."""
        await gate.wait()
        return "released"

    client = ScriptedChatClient([call(("wait_here", {}, "w1"))])
    session = Agent(client, tools=[wait_here], policy=ALLOW_ALL).session()
    runner = SessionRunner(TranscriptRecorder(session, store, sid), session_id=sid)
    started = anyio.Event()

    def emit(event: object) -> None:
        if isinstance(event, ToolStartEvent):
            started.set()

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(runner.run_turn, UserMessageRequest(content="wait"), emit)
            await started.wait()
            runner.cancel()

    log = list(execution_log(store.entries(sid)))

    assert kinds(log) == ["turn_start", "model_request", "tool", "turn_end"]
    tool_record, end = log[2], log[3]
    assert isinstance(tool_record, ToolRecord)
    assert (tool_record.name, tool_record.call_id, tool_record.outcome) == ("wait_here", "w1", "cancelled")
    assert isinstance(end, TurnEndRecord)
    assert end.stop_reason == "cancelled"


async def test_a_log_read_in_pieces_keeps_a_turns_error_with_its_end(
    store: SharedSessionStore, project: Path
) -> None:
    sid = session_in(store, project)
    client = ScriptedChatClient([fail(ChatError("the server broke", code="network"))])
    session = Agent(client, policy=ALLOW_ALL).session()
    with anyio.fail_after(WAIT):
        await collect_turn(TranscriptRecorder(session, store, sid), "hello")
    entries = store.entries(sid)
    [error_at] = [n for n, entry in enumerate(entries) if entry.kind == "error"]

    reader = LogReader()
    pieces = [
        list(reader.read(entries[: error_at + 1])),
        list(reader.read(store.entries(sid, after=error_at + 1))),
    ]

    assert [kinds(piece) for piece in pieces] == [["turn_start", "model_request"], ["turn_end"]]
    assert isinstance(pieces[0][0], TurnStartRecord)
    end = pieces[1][0]
    assert isinstance(end, TurnEndRecord)
    assert end.error == "the server broke"
    assert list(execution_log(entries))[-1] == end
