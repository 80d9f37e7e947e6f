"""``/undo`` and ``/rewind`` on a real pseudo-terminal against the scripted model: the files a turn changed through
hive's tools come back, a created file goes, a deleted one returns, a rewind shows what it will change and asks,
a command's own changes are named as not covered, and a file someone else changed since is asked about."""

from __future__ import annotations

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer


def test_undo_restores_a_file_after_an_approved_edit(ws: Workspace, server: ScriptedModelServer) -> None:
    app = ws.project / "app.py"
    app.write_text("print('hello')\n", encoding="utf-8")
    server.add(
        calls(("c1", "edit_file", {"path": "app.py", "old_text": "hello", "new_text": "bye"})),
        text("Edited."),
    )
    with ws.use(server).prompt() as term:
        term.enter("/help", "/undo", "/rewind")
        term.type("say bye\r")
        term.expect("approval needed: edit_file")
        term.enter("y", "Edited.")
        assert app.read_text(encoding="utf-8") == "print('bye')\n"

        term.enter(
            "/undo",
            "undo turn 1 (say bye)",
            "app.py  +1 \N{MINUS SIGN}1",
            "undone turn 1: 1 file(s) restored",
        )
        assert app.read_text(encoding="utf-8") == "print('hello')\n"

        term.type("/undo\r")  # the undo was recorded: nothing is left
        assert "nothing left to undo" in term.expect("> ")
        term.type("exit\r")
        assert term.wait() == 0
    assert app.read_text(encoding="utf-8") == "print('hello')\n"


def test_a_rewind_over_two_turns_shows_the_change_first_and_restores_both(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    first, second = ws.project / "a.txt", ws.project / "b.txt"
    first.write_text("a0\n", encoding="utf-8")
    second.write_text("b0\nkeep\n", encoding="utf-8")
    server.add(
        calls(("c1", "write_file", {"path": "a.txt", "content": "a1\n"})),
        text("Wrote a."),
        calls(("c2", "edit_file", {"path": "b.txt", "old_text": "b0", "new_text": "b1\nb2"})),
        text("Edited b."),
        text("Just talk."),
    )
    with ws.use(server).allow_all().terminal() as term:
        term.expect("> ")
        for message, answer in (
            ("change a", "Wrote a."),
            ("change b", "Edited b."),
            ("just talk", "Just talk."),
        ):
            term.type(message + "\r")
            term.expect(answer)
            term.expect("> ")

        term.enter(
            "/rewind",
            "1. change a · a.txt",
            "2. change b · b.txt",
            "3. just talk · (no file changed)",
            until="rewind to before which turn (1-3, empty to cancel)? ",
        )
        term.enter(
            "1",
            "rewind to before turn 1 (change a)",
            "a.txt  +1 \N{MINUS SIGN}1",
            "b.txt  +1 \N{MINUS SIGN}2",
            until="restore these files? [y/N] ",
        )
        # Shown first: nothing is restored before the answer.
        assert first.read_text(encoding="utf-8") == "a1\n"
        assert second.read_text(encoding="utf-8") == "b1\nb2\nkeep\n"
        term.enter("y", "undone turns 1, 2: 2 file(s) restored")
        assert first.read_text(encoding="utf-8") == "a0\n"
        assert second.read_text(encoding="utf-8") == "b0\nkeep\n"

        term.enter("/undo", "nothing left to undo")
        term.type("exit\r")
        assert term.wait() == 0


def test_a_declined_rewind_changes_nothing(ws: Workspace, server: ScriptedModelServer) -> None:
    target = ws.project / "a.txt"
    server.add(calls(("c1", "write_file", {"path": "a.txt", "content": "new\n"})), text("Wrote it."))
    with ws.use(server).allow_all().terminal() as term:
        term.expect("> ")
        term.enter("write a", "Wrote it.")
        term.enter("/rewind 1", "a.txt  removed (the turn created it)", until="restore these files? [y/N] ")
        term.enter("", "not rewound")
        assert target.read_text(encoding="utf-8") == "new\n"
        term.type("exit\r")
        assert term.wait() == 0


def test_undo_after_continue_removes_a_created_file_and_brings_back_a_deleted_one(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    created, deleted = ws.project / "notes" / "new.md", ws.project / "old.bin"
    deleted.write_bytes(b"\x00\x01binary\xff")
    deleted.chmod(0o640)
    server.add(
        calls(
            ("c1", "write_file", {"path": "notes/new.md", "content": "# new\n"}),
            ("c2", "delete_file", {"path": "old.bin"}),
        ),
        text("Tidied."),
    )
    ws.use(server).allow_all()
    with ws.prompt() as term:
        term.enter("tidy up", "Tidied.")
        term.type("exit\r")
        assert term.wait() == 0
    assert created.exists()
    assert not deleted.exists()

    with ws.terminal("-c") as term:  # the checkpoints live with the session
        term.expect("> ")
        term.enter(
            "/undo",
            "notes/new.md  removed (the turn created it)",
            "old.bin  brought back (9 bytes)",
            "undone turn 1: 2 file(s) restored",
        )
        term.type("exit\r")
        assert term.wait() == 0
    assert not created.parent.exists()  # the directory write_file made for it goes too
    assert deleted.read_bytes() == b"\x00\x01binary\xff"
    assert deleted.stat().st_mode & 0o777 == 0o640


def test_a_commands_changes_are_named_as_not_covered(ws: Workspace, server: ScriptedModelServer) -> None:
    made, written = ws.project / "made.txt", ws.project / "a.txt"
    server.add(
        calls(
            ("c1", "write_file", {"path": "a.txt", "content": "a\n"}),
            ("c2", "execute_command", {"command": "touch made.txt"}),
        ),
        text("Built."),
    )
    with ws.use(server).allow_all().terminal() as term:
        term.expect("> ")
        term.enter("build", "Built.")
        assert made.exists()
        assert written.exists()
        term.type("/undo\r")
        shown = term.expect("> ")
        assert (
            "commands run in these turns may have changed files hive cannot restore: touch made.txt" in shown
        )
        term.type("exit\r")
        assert term.wait() == 0
    assert not written.exists()
    assert made.exists()


def test_a_file_changed_since_is_named_and_asked_about(ws: Workspace, server: ScriptedModelServer) -> None:
    target = ws.project / "a.txt"
    target.write_text("mine\n", encoding="utf-8")
    server.add(calls(("c1", "write_file", {"path": "a.txt", "content": "hive's\n"})), text("Wrote it."))
    with ws.use(server).allow_all().terminal() as term:
        term.expect("> ")
        term.enter("write a", "Wrote it.")
        target.write_text("edited by hand\n", encoding="utf-8")
        term.enter(
            "/undo",
            "changed since hive's tools left them (by you or another program): a.txt",
            until="overwrite them? [y/N] ",
        )
        term.enter("n", "nothing undone")
        assert target.read_text(encoding="utf-8") == "edited by hand\n"
        term.type("/undo\r")
        term.expect("overwrite them? [y/N] ")
        term.enter("y", "undone turn 1")
        assert target.read_text(encoding="utf-8") == "mine\n"
        term.type("exit\r")
        assert term.wait() == 0
