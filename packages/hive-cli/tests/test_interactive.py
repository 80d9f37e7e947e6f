"""The interactive mode, driven on a real pseudo-terminal: prompts, streamed answers, an approval answered at the
keyboard, Ctrl+C cancelling a turn, and leaving."""

from __future__ import annotations

from cli_harness import APPROVAL_PANEL_END
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts

from hive_conformance.model_server import ScriptedModelServer


def test_a_session_with_a_streamed_answer_an_approval_and_a_cancelled_turn(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        text("Hello ", "from ", "hive.", delay=0.05),
        calls(("c1", "write_file", {"path": "config.json", "content": "{}"})),
        text("Saved it."),
        text(*[f"w{i} " for i in range(60)], delay=0.5),
    )
    with ws.use(server).prompt(shows=["session ", "openai/scripted"]) as term:
        term.enter("hi", "Hello from hive.")

        term.enter(
            "write the config", "approval needed: write_file", "path: config.json", until=APPROVAL_PANEL_END
        )
        assert not (ws.project / "config.json").exists()
        term.type("y\r")
        term.expect("✓ write_file")
        term.expect("Saved it.")
        term.expect("> ")
        assert (ws.project / "config.json").read_text(encoding="utf-8") == "{}"

        term.type("talk slowly\r")
        term.expect("w0 ")
        term.type("\x03")  # Ctrl+C: the turn stops, the session goes on
        term.expect("(stopped: cancelled)")
        term.expect("> ")
        assert "w59" not in term.output

        term.enter("/session")
        term.type("exit\r")
        summary = term.expect("turn(s)")
        assert term.wait() == 0
    assert "3 turn(s)" in summary
    requests = model_requests(server)
    assert len(requests) == 4
    assert user_texts(requests[3]) == ["hi", "write the config", "talk slowly"]
    [session] = ws.sessions()
    assert session["id"] in term.output
    assert session["status"] == "ended"


def test_ctrl_d_leaves_and_continue_restores_the_conversation(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("First answer."), text("Second answer."))
    ws.use(server)
    with ws.prompt() as term:
        term.enter("one", "First answer.")
        term.type("\x04")  # Ctrl+D
        assert term.wait() == 0
    with ws.prompt("-c", shows=["(2 messages restored)"]) as term:
        term.enter("/help", "Ctrl+C")
        term.enter("two", "Second answer.")
        term.type("quit\r")
        assert term.wait() == 0
    assert len(model_requests(server)) == 2
    assert user_texts(model_requests(server)[1]) == ["one", "two"]


def test_a_history_that_cannot_be_written_is_no_traceback_at_exit(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.home / "history").mkdir()  # neither readable nor writable as a history file
    with ws.use(server).prompt() as term:
        term.type("exit\r")
        term.expect("turn(s)")
        assert term.wait() == 0
    assert "Traceback" not in term.output
    assert "Exception ignored" not in term.output


def test_a_prompt_given_as_words_is_the_first_message_of_the_interactive_mode(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("First answer."), text("Second answer."))
    with ws.use(server).terminal("why", "is", "it", "red?") as term:
        term.expect("First answer.")
        term.expect("> ")
        term.enter("and now?", "Second answer.")
        term.type("\x04")
        assert term.wait() == 0
    assert user_texts(model_requests(server)[1]) == ["why is it red?", "and now?"]


def test_an_unknown_slash_command_is_answered_locally_and_never_reaches_the_model(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Answered."))
    with ws.use(server).prompt() as term:
        term.enter("/nope", "unknown command /nope")
        term.enter("/tokens", "0 turn(s)")
        term.type("/usr/bin is a directory?\r")  # a path, not a command: sent as it is
        term.expect("Answered.")
        term.expect("> ")
        term.type("/exit\r")
        assert term.wait() == 0
    [request] = model_requests(server)
    assert user_texts(request) == ["/usr/bin is a directory?"]
