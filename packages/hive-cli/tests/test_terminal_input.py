"""The interactive mode's input side on a real pseudo-terminal: prompt_toolkit line editing (a paste is one
message, Alt+Enter a new line, history, completion), the slash commands, and ``@path`` attachments.

Every assertion that matters is on what the scripted model server recorded: a command never reaches the model, a
message reaches it whole, an attached file's content reaches it after the message.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_cli_harness import FakeCli
from cli_harness import SECRET_AND_PRIVATE
from cli_harness import Terminal
from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts

from hive_cli.attachments import mentions
from hive_cli.line_editor import HiveCompleter
from hive_cli.slash_commands import COMMANDS
from hive_cli.slash_commands import help_text
from hive_conformance.model_server import ScriptedModelServer

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
UP = "\x1b[A"
ALT_ENTER = "\x1b\r"


PROMPT_MARK = "\x1b[?2004h"
"""What an xterm shows when the editor is ready for a message: prompt_toolkit turns bracketed paste on (it draws
the prompt with cursor movements, so its ``> `` is not there as text)."""


def ready(term: Terminal) -> str:
    """Wait for the next prompt; return what came before it."""
    return term.expect(PROMPT_MARK if term.term != "dumb" else "> ")


def leave(term: Terminal) -> None:
    """At the next prompt, end the session with Ctrl+D: hive exits with 0."""
    ready(term)
    term.type("\x04")
    assert term.wait() == 0


@contextmanager
def xterm(ws: Workspace, *args: str) -> Generator[Terminal]:
    """``hive args...`` on an xterm, once its editor is ready for the first message."""
    with ws.terminal(*args, term="xterm-256color") as term:
        ready(term)
        yield term


def request_model(body: Any) -> str:
    return str(body["model"])


def test_a_paste_of_three_lines_is_one_message_and_alt_enter_inserts_a_new_line(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Got the paste."), text("Got two lines."))
    with xterm(ws.use(server)) as term:
        term.type(f"{PASTE_START}def f():\n    return 1\nprint(f()){PASTE_END}")
        term.type("\r")
        term.expect("Got the paste.")
        ready(term)
        term.type(f"first line{ALT_ENTER}second line\r")
        term.expect("Got two lines.")
        leave(term)
    requests = model_requests(server)
    assert len(requests) == 2
    assert user_texts(requests[1]) == ["def f():\n    return 1\nprint(f())", "first line\nsecond line"]


def test_history_is_kept_in_the_hive_home_and_up_recalls_it(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("One."), text("Again."))
    with xterm(ws.use(server)) as term:
        term.type("remember this line\r")
        term.expect("One.")
        leave(term)
    assert "remember this line" in (ws.home / "history").read_text(encoding="utf-8")
    with xterm(ws) as term:  # a new process: the history comes from the file
        term.type(UP)
        term.expect("remember this line")
        term.type("\r")
        term.expect("Again.")
        leave(term)
    assert user_texts(model_requests(server)[1]) == ["remember this line"]


def test_tab_completes_commands_and_project_paths(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "docs").mkdir()
    (ws.project / "docs" / "notes-on-design.md").write_text("Use small modules.\n", encoding="utf-8")
    server.add(text("Read them."))
    with xterm(ws.use(server)) as term:
        term.type("/sess")
        term.type("\t")
        term.expect("ions")  # the only command starting so: completed (drawn as what changed)
        term.type("\r")
        ready(term)
        term.type("summarise @do\t")
        term.expect("cs/")
        term.type("no\t")
        term.expect("tes-on-design.md")
        term.type("\r")
        term.expect("Read them.")
        leave(term)
    [request] = model_requests(server)
    [sent] = user_texts(request)
    assert sent.startswith("summarise @docs/notes-on-design.md")
    assert "Use small modules." in sent


def test_a_config_warning_is_said_once_however_often_the_session_is_opened_again(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / ".hive" / "config.yaml").write_text("notAKey: 1\n", encoding="utf-8")
    with ws.use(server).prompt() as term:
        for command in ("/clear", "/model other-model", "/clear"):
            term.type(command + "\r")
            term.expect("> ")
        term.type("/exit\r")
        assert term.wait() == 0
    assert term.output.count("notAKey") == 1


def test_slash_commands_are_answered_locally_and_switch_the_session_and_the_model(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("A1."), text("B1."), text("A2."), text("A3."))
    with ws.use(server).terminal() as term:
        banner = term.expect("> ")
        [first] = ws.sessions()
        assert first["id"] in banner
        term.enter("one", "A1.")

        term.enter("/help", "/clear", "/model", "/agent", "/resume", "/sessions", "/tokens", "/plan", "/exit")

        cleared = term.enter("/clear", "new session")
        term.enter("two", "B1.")
        second = next(s for s in ws.sessions() if s["id"] != first["id"])
        assert second["id"] in cleared

        term.type("/resume\r")
        listing = term.expect("empty to cancel)? ")
        number = next(
            line.split(".")[0].strip()
            for line in listing.splitlines()
            if first["id"] in line and ". " in line
        )
        term.enter(number, first["id"])
        term.enter("three", "A2.")

        term.enter("/model other-model", "openai/other-model")
        term.enter("four", "A3.")

        term.enter("/sessions", second["id"])
        for line, answer in (
            ("/resume no-such-session", "no session 'no-such-session'"),
            ("/tokens", "cost unknown"),
            ("/plan", "planning mode on"),
            ("/plan", "planning mode off"),
            ("/x", "unknown command /x"),
            ("/agent no-such-agent", "no-such-agent"),
            ("/agent hive", "already using openai/other-model"),
        ):
            term.enter(line, answer)
        term.type("/exit\r")
        assert term.wait() == 0
    requests = model_requests(server)
    assert len(requests) == 4  # the commands reached nothing
    assert user_texts(requests[1]) == ["two"]  # /clear: a fresh conversation
    assert user_texts(requests[2]) == ["one", "three"]  # /resume: the first conversation goes on
    assert user_texts(requests[3]) == ["one", "three", "four"]  # /model: the same conversation, another model
    assert [request_model(r.body) for r in requests] == ["scripted", "scripted", "scripted", "other-model"]
    assert len(ws.sessions()) == 2


def test_an_at_path_attaches_the_file_and_a_missing_one_sends_nothing(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "bug.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    server.add(text("It subtracts."), text("Mailed."))
    with ws.use(server).prompt() as term:
        term.enter("@missing.py what is wrong?", "@missing.py: no such file (nothing sent)")
        term.enter("what is wrong in @bug.py?", "It subtracts.")
        term.type("write to a@b.co about it\r")  # an address, not a path
        term.expect("Mailed.")
        term.expect("> ")
        term.type("\x04")
        assert term.wait() == 0
    requests = model_requests(server)
    assert len(requests) == 2
    assert user_texts(requests[1]) == [
        "what is wrong in @bug.py?\n\nbug.py:\n```\ndef add(a, b):\n    return a - b\n```",
        "write to a@b.co about it",
    ]


def test_an_at_path_is_judged_as_a_read_by_the_rules(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.permissions(SECRET_AND_PRIVATE)
    (ws.project / "secret.txt").write_text("hunter2\n", encoding="utf-8")
    (ws.project / "private").mkdir()
    (ws.project / "private" / "plan.md").write_text("The private plan.\n", encoding="utf-8")
    server.add(text("Without the plan."), text("Seen the plan."))
    with ws.use(server).prompt() as term:
        term.enter("show @secret.txt", "@secret.txt: refused by the rules", "nothing sent")
        term.approval(
            "and @private/plan.md", "approval needed: read_file", "path: private/plan.md", answer="n"
        )
        assert "@private/plan.md: not attached" in term.expect("Without the plan.")  # the message still goes
        term.expect("> ")
        term.type("and @private/plan.md\r")
        term.expect("[s] reject and stop")
        term.enter("y", "Seen the plan.")
        term.type("\x04")
        assert term.wait() == 0
    declined, request = model_requests(server)
    [without] = user_texts(declined)
    assert without.startswith("and @private/plan.md\n\n[@private/plan.md was not attached")
    assert "The private plan." not in str(declined.body)
    sent = user_texts(request)[-1]
    assert "The private plan." in sent
    assert "hunter2" not in str(request.body)


def test_agent_switches_the_next_turns_to_a_coding_agent_cli_in_a_new_session(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    cli = FakeCli.install(ws, "gemini")
    ws.env.update(cli.env("cli-hello"))
    server.add(text("From hive's loop."))
    with ws.use(server).prompt() as term:
        term.enter("first", "From hive's loop.")
        [before] = ws.sessions()
        term.enter(
            "/agent gemini", "agent gemini runs the next turns, in a new session", f"/resume {before['id']}"
        )
        term.enter("/model", "agent gemini (Gemini CLI) runs on its own default model")
        term.enter("/plan", "planning mode is a mode of hive's own loop")
        term.enter("hello", "Hello from the fake CLI")
        term.type("\x04")
        assert term.wait() == 0
    assert len(model_requests(server)) == 1  # the CLI ran the second turn, not hive's model
    assert "session/prompt" in cli.methods()
    after = next(s for s in ws.sessions() if s["id"] != before["id"])
    assert after["message_count"] == 2


def test_a_mention_is_an_at_after_a_space_and_ends_before_sentence_punctuation() -> None:
    assert mentions("see @src/app.py, then @README.md.") == ["src/app.py", "README.md"]
    assert mentions("mail a@b.co or me@example.org") == []
    assert mentions("@a.py and @a.py (@b.txt) '@c.md'") == ["a.py", "b.txt", "c.md"]


def test_help_and_completion_come_from_one_table(tmp_path: Path) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    shown = help_text()
    completer = HiveCompleter(tmp_path)
    offered = [
        c.text for c in completer.get_completions(Document("/"), CompleteEvent(completion_requested=True))
    ]
    for command in COMMANDS:
        assert command.name in shown
        assert command.name in offered
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("", encoding="utf-8")
    paths = [c.text for c in completer.get_completions(Document("look at @src/m"), CompleteEvent())]
    assert paths == ["src/main.py"]


def test_a_history_that_cannot_be_read_or_written_is_no_traceback(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.home / "history").mkdir()
    server.add(text("Fine."))
    with xterm(ws.use(server)) as term:
        term.type("hi\r")
        term.expect("Fine.")
        leave(term)
    assert "Traceback" not in term.output
    assert user_texts(model_requests(server)[0]) == ["hi"]
