"""Checkpoints: the files a turn changes through hive's file tools are kept in the session store before the
change, and undo (one turn, or every turn from one on) brings them back, across a restart of the store."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from sessions_harness import older_database
from sessions_harness import reopen

from hive_core import Agent
from hive_core.approvals import ALLOW_ALL
from hive_core.builtin_tools import BUILTIN_TOOLS
from hive_core.pipeline import default_middlewares
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import TranscriptRecorder
from hive_core.sessions.checkpoint_keeper import CheckpointKeeper
from hive_core.sessions.checkpoints import apply_undo
from hive_core.sessions.checkpoints import plan_rewind
from hive_core.sessions.checkpoints import plan_undo
from hive_core.sessions.checkpoints import session_turns
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_core.testing import reply
from hive_protocol import Event
from hive_protocol import UserMessageRequest


def _agent(project: Path, client: ScriptedChatClient, keeper: CheckpointKeeper) -> Agent:
    return Agent(
        client,
        tools=BUILTIN_TOOLS,
        middlewares=[*default_middlewares(ALLOW_ALL), keeper],
        working_dir=project,
        clock=lambda: 0.0,
    )


def _run_turns(store: SharedSessionStore, project: Path, turns: list[tuple[str, list[ScriptedRound]]]) -> str:
    """Run each ``(message, rounds)`` as a recorded turn of a new session of ``project``; its id."""
    session_id = _session(store, project)
    client = ScriptedChatClient([r for _, rounds in turns for r in rounds])
    keeper = CheckpointKeeper()
    keeper.bind(store, session_id)
    recorder = TranscriptRecorder(
        _agent(project, client, keeper).session(store.restore(session_id)), store, session_id
    )
    events: list[Event] = []

    async def run() -> None:
        with anyio.fail_after(30):
            for message, _ in turns:
                await recorder(UserMessageRequest(content=message), events.append)

    anyio.run(run)
    client.assert_consumed()
    return session_id


def _session(store: SharedSessionStore, project: Path) -> str:
    return store.create(project_path=project).id


def test_undo_goes_back_one_turn_at_a_time_after_a_restart(
    home: Path, project: Path, store: SharedSessionStore
) -> None:
    (project / "a.txt").write_text("one\ntwo\n")
    (project / "old.txt").write_text("keep me\n")
    sid = _run_turns(
        store,
        project,
        [
            (
                "edit a",
                [call(("edit_file", {"path": "a.txt", "old_text": "two", "new_text": "TWO"})), reply("ok")],
            ),
            (
                "make b, drop old",
                [
                    call(
                        ("write_file", {"path": "sub/b.txt", "content": "new\n"}),
                        ("delete_file", {"path": "old.txt"}),
                    ),
                    reply("done"),
                ],
            ),
            ("just look", [call(("list_directory", {"path": "."})), reply("seen")]),
        ],
    )
    assert (project / "a.txt").read_text() == "one\nTWO\n"
    assert (project / "sub/b.txt").exists()
    assert not (project / "old.txt").exists()
    store.close()

    with reopen(store) as reopened:  # what a `hive -c` finds
        turns = session_turns(reopened, sid)
        assert [t.title for t in turns] == ["edit a", "make b, drop old", "just look"]
        assert [len(t.paths) for t in turns] == [1, 2, 0]

        second = plan_undo(reopened, sid)
        assert second is not None
        assert [t.title for t in second.turns] == ["make b, drop old"]
        assert not second.conflicts
        assert not second.commands
        assert apply_undo(reopened, sid, second) == []
        assert (project / "old.txt").read_text() == "keep me\n"
        assert not (project / "sub").exists()  # the directory the tool made for it goes too
        assert (project / "a.txt").read_text() == "one\nTWO\n"

        first = plan_undo(reopened, sid)  # the undo was recorded: the next goes one turn further back
        assert first is not None
        assert [t.title for t in first.turns] == ["edit a"]
        apply_undo(reopened, sid, first)
        assert (project / "a.txt").read_text() == "one\ntwo\n"
        assert plan_undo(reopened, sid) is None


def test_a_rewind_restores_every_turn_from_the_one_picked(project: Path, store: SharedSessionStore) -> None:
    (project / "a.txt").write_text("a0\n")
    sid = _run_turns(
        store,
        project,
        [
            ("one", [call(("write_file", {"path": "a.txt", "content": "a1\n"})), reply("ok")]),
            ("two", [call(("write_file", {"path": "a.txt", "content": "a2\n"})), reply("ok")]),
            (
                "three",
                [call(("move_file", {"source": "a.txt", "destination": "moved/a.txt"})), reply("ok")],
            ),
        ],
    )
    turns = session_turns(store, sid)
    plan = plan_rewind(store, sid, turns[1].turn)
    assert plan is not None
    assert [t.title for t in plan.turns] == ["two", "three"]
    by_name = {Path(r.path).relative_to(project.resolve()).as_posix(): r for r in plan.files}
    assert set(by_name) == {"a.txt", "moved/a.txt"}
    assert by_name["a.txt"].before.content == b"a1\n"  # before turn two, not before turn one
    assert not by_name["moved/a.txt"].before.existed
    apply_undo(store, sid, plan)
    assert (project / "a.txt").read_text() == "a1\n"
    assert not (project / "moved/a.txt").exists()
    assert plan_rewind(store, sid, turns[1].turn) is None
    last = plan_undo(store, sid)
    assert last is not None
    assert [t.title for t in last.turns] == ["one"]


def test_a_file_changed_since_is_named_before_it_is_overwritten(
    project: Path, store: SharedSessionStore
) -> None:
    (project / "a.txt").write_text("mine\n")
    sid = _run_turns(
        store,
        project,
        [("w", [call(("write_file", {"path": "a.txt", "content": "hive\n"})), reply("ok")])],
    )
    plan = plan_undo(store, sid)
    assert plan is not None
    assert plan.conflicts == ()
    (project / "a.txt").write_text("someone else\n")
    plan = plan_undo(store, sid)
    assert plan is not None
    assert [Path(r.path).name for r in plan.conflicts] == ["a.txt"]


def test_binary_files_are_kept_as_bytes_and_large_ones_are_named_not_restored(
    project: Path, store: SharedSessionStore
) -> None:
    blob = bytes(range(256)) * 4
    (project / "image.bin").write_bytes(blob)
    (project / "big.txt").write_text("x" * 5000)
    sid = _session(store, project)
    keeper_cap = 4096

    client = ScriptedChatClient(
        [
            call(
                ("delete_file", {"path": "image.bin"}),
                ("write_file", {"path": "big.txt", "content": "small"}),
            ),
            reply("ok"),
        ]
    )
    keeper = CheckpointKeeper(max_bytes=keeper_cap)
    keeper.bind(store, sid)
    recorder = TranscriptRecorder(_agent(project, client, keeper).session(), store, sid)

    async def run() -> None:
        with anyio.fail_after(30):
            await recorder(UserMessageRequest(content="clean up"), lambda _: None)

    anyio.run(run)
    plan = plan_undo(store, sid, max_bytes=keeper_cap)
    assert plan is not None
    assert [Path(r.path).name for r in plan.unrestorable] == ["big.txt"]
    problems = apply_undo(store, sid, plan)
    assert (project / "image.bin").read_bytes() == blob
    assert [(Path(path).name, "it was 5,000 bytes" in why) for path, why in problems] == [("big.txt", True)]
    assert (project / "big.txt").read_text() == "small"


def test_a_failed_call_and_a_read_only_turn_keep_nothing(project: Path, store: SharedSessionStore) -> None:
    (project / "a.txt").write_text("a\n")
    sid = _run_turns(
        store,
        project,
        [
            ("read", [call(("read_file", {"path": "a.txt"})), reply("ok")]),
            (
                "bad edit",
                [call(("edit_file", {"path": "a.txt", "old_text": "zzz", "new_text": "y"})), reply("no")],
            ),
        ],
    )
    assert store.file_changes(sid)[0].changed is False  # the edit failed: the file is as it was
    assert plan_undo(store, sid) is None
    assert [t.paths for t in session_turns(store, sid)] == [(), ()]


def test_commands_a_turn_ran_are_named_as_not_covered(project: Path, store: SharedSessionStore) -> None:
    sid = _run_turns(
        store,
        project,
        [
            (
                "build",
                [
                    call(
                        ("write_file", {"path": "a.txt", "content": "a\n"}),
                        ("execute_command", {"command": "echo made > made.txt"}),
                    ),
                    reply("ok"),
                ],
            ),
            ("later", [call(("execute_command", {"command": "touch later.txt"})), reply("ok")]),
        ],
    )
    assert (project / "made.txt").exists()
    plan = plan_undo(store, sid)
    assert plan is not None
    # The later turn's command ran on what the undone turn left: it is named too.
    assert plan.commands == ("echo made > made.txt", "touch later.txt")
    apply_undo(store, sid, plan)
    assert not (project / "a.txt").exists()
    assert (project / "made.txt").exists()  # what the command made is not hive's to know


def test_an_unbound_keeper_keeps_nothing(project: Path, store: SharedSessionStore) -> None:
    sid = _session(store, project)
    client = ScriptedChatClient([call(("write_file", {"path": "a.txt", "content": "a"})), reply("ok")])
    recorder = TranscriptRecorder(_agent(project, client, CheckpointKeeper()).session(), store, sid)
    events: list[Event] = []
    anyio.run(recorder, UserMessageRequest(content="w"), events.append)
    assert (project / "a.txt").read_text() == "a"
    assert store.file_changes(sid) == []


def test_checkpoints_go_with_their_session_and_a_fork_takes_them(
    project: Path, store: SharedSessionStore
) -> None:
    sid = _run_turns(
        store, project, [("w", [call(("write_file", {"path": "a.txt", "content": "a"})), reply("ok")])]
    )
    fork = store.fork(sid)
    assert len(store.file_changes(fork.id)) == 1
    assert store.delete(sid)
    assert store.file_changes(sid) == []
    assert len(store.file_changes(fork.id)) == 1


def test_a_version_2_database_gains_the_checkpoints_table(home: Path, project: Path) -> None:
    with older_database(home / "sessions.db", project, 2, "file_checkpoints", "file_outcomes") as (
        store,
        info,
    ):
        assert store.file_changes(info.id) == []


@pytest.mark.parametrize("version", [1])
def test_an_older_database_gains_every_later_table(home: Path, project: Path, version: int) -> None:
    tables = ("file_checkpoints", "file_outcomes", "leases")
    with older_database(home / "sessions.db", project, version, *tables) as (store, info):
        store.lease(info.id)
        assert store.file_changes(info.id) == []
