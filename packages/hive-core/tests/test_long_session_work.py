"""A turn's work does not grow with the session's length: the messages of the conversation a turn reads stay as
many at turn 300 as at turn 50.

The session is assembled as the CLI assembles it (the built-in tools, the default rules, the context manager
with a small window, so compaction runs all along) and recorded on a real SQLite store; the conversation is a list
that counts every message read from it (iterated, reversed, indexed or sliced). Each turn reads only the messages
it added and a few around them; before, every round walked the whole history several times (the call ids, the
context manager's check of what it had seen, the copy of the history the guards read). Benchmark:
``benchmarks/long_session.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import SupportsIndex
from typing import overload

import pytest

from hive_core import Agent
from hive_core import SessionRunner
from hive_core.builtin_tools import builtin_tools
from hive_core.chat import Capabilities
from hive_core.chat import ChatOptions
from hive_core.chat import ChatUpdate
from hive_core.chat import FinishUpdate
from hive_core.chat import TextUpdate
from hive_core.chat import ToolCallUpdate
from hive_core.context import CompactionSettings
from hive_core.context import ContextManager
from hive_core.messages import Message
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.pipeline import Invocation
from hive_core.pipeline import RepeatedCallGuard
from hive_core.pipeline import RepeatedErrorGuard
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import TranscriptRecorder
from hive_core.tools import ToolContext
from hive_core.tools import ToolOutcome
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import ToolEndEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio

WINDOW_TOKENS = 3_000


class CountingConversation(list[Message]):
    """A conversation that counts the messages read from it."""

    reads = 0

    def __iter__(self) -> Iterator[Message]:
        for message in super().__iter__():
            self.reads += 1
            yield message

    def __reversed__(self) -> Iterator[Message]:
        for message in super().__reversed__():
            self.reads += 1
            yield message

    @overload
    def __getitem__(self, index: SupportsIndex) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Message | list[Message]:
        found = super().__getitem__(index)
        self.reads += len(found) if isinstance(found, list) else 1
        return found


class Model:
    """Reads one of three files for every user message, then says it did; summarises when asked."""

    def __init__(self) -> None:
        self.calls = 0
        self.capabilities = Capabilities(tools=True, streamed_tool_calls=True, context_window=WINDOW_TOKENS)

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        self.calls += 1
        if not options.tools:
            yield TextUpdate("Notes were read.")
        elif messages[-1].role == "user":
            path = f"notes/{self.calls % 3}.md"
            yield ToolCallUpdate(0, f"call_{self.calls}", "read_file", f'{{"path": "{path}"}}')
            yield FinishUpdate("tool_calls")
            return
        else:
            yield TextUpdate(f"Read it ({self.calls}).")
        yield FinishUpdate("stop")


async def test_the_messages_a_turn_reads_do_not_grow_with_the_session(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    for number in range(3):
        (project / "notes" / f"{number}.md").write_text(f"Note {number}.\n" * 20)
    model: Any = Model()
    agent = Agent(
        model,
        tools=builtin_tools(),
        policy=PermissionPolicy(PermissionRules.default(), project),
        working_dir=project,
        context=ContextManager(CompactionSettings(max_context_tokens=WINDOW_TOKENS)),
    )
    reads: list[int] = []
    events: list[Event] = []
    with SqliteSessionStore(tmp_path / "sessions.db") as store:
        info = store.create(project_path=project)
        session = agent.session()
        conversation = CountingConversation()
        session.conversation = conversation
        runner = SessionRunner(TranscriptRecorder(session, store, info.id), session_id=info.id)
        for turn in range(300):
            before = conversation.reads
            await runner.run_turn(UserMessageRequest(content=f"turn {turn}: read a note"), events.append)
            reads.append(conversation.reads - before)
    assert [event for event in events if isinstance(event, ErrorEvent)] == []
    ends = [event for event in events if isinstance(event, ToolEndEvent)]
    assert len(ends) == 300
    assert all(end.success for end in ends)
    assert len(conversation) == 300 * 4
    early, late = reads[50:100], reads[250:300]
    # The same turn, 200 turns later: not one message more read.
    assert max(late) <= max(early), (early, late)
    assert max(late) < 40, late


@pytest.mark.parametrize("length", [10, 1_000])
async def test_the_repeat_guards_read_no_further_back_than_their_limit(tmp_path: Path, length: int) -> None:
    # The same successful call `length` times in a row, then once more: refused either way, and the guards read
    # as many messages for a streak of 1,000 as for one of 10.
    conversation = CountingConversation()
    for index in range(length):
        call = ToolCallPart(f"c{index}", "read_file", '{"path": "a"}', {"path": "a"})
        conversation.append(Message("assistant", [call]))
        conversation.append(Message("tool", [ToolResultPart(f"c{index}", "read_file", "same")]))
    call = ToolCallPart("next", "read_file", '{"path": "a"}', {"path": "a"})
    conversation.append(Message("assistant", [call]))
    context = ToolContext("next", "read_file", tmp_path, lambda event: None, conversation=conversation)
    invocation = Invocation(call, None, {"path": "a"}, context)

    async def failing(invocation: Invocation) -> ToolOutcome:
        return ToolOutcome.failed(RuntimeError("boom"))

    outcome = await RepeatedCallGuard()(invocation, failing)
    assert outcome.refusal == "repeated_call"
    assert conversation.reads <= 10, conversation.reads
    conversation.reads = 0
    await RepeatedErrorGuard()(invocation, failing)
    assert conversation.reads <= 10, conversation.reads
