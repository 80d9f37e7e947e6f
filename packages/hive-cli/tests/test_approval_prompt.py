"""The approval prompt on a real pseudo-terminal against the scripted model: it cannot be misfired (a key typed
before it was drawn is no answer, nothing is chosen by default), Ctrl+C rejects and leaves a working prompt, a
refusal's reason reaches the model, the whole diff shows before approving, an allowed edit's diff is one
``/diff`` away, and keys typed while a reply streams wait for the next prompt on a line of their own.

The approval's panel ends with ``reject and stop``: a test types only once it is on the screen, since hive drops
whatever was typed before (that is the point).
"""

from __future__ import annotations

import io
import json
import os
import re
from typing import Any

import anyio
from agent_cli_harness import ASK_TRANSCRIPT
from agent_cli_harness import FakeCli
from cli_harness import Terminal
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts
from cli_harness import wait_until

from hive_cli.approver import TerminalApprover
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_core import ApprovalDecision
from hive_core import ApprovalRequest

PROMPT_MARK = "\x1b[?2004h"
"""prompt_toolkit turning bracketed paste on: the line editor (or the approval's choice) is reading."""

"""A recorded Reasonix run whose ``ask`` tool puts a question (Postgres or SQLite) to the person."""

ASKED = "reject and stop"
"""The end of the approval's panel: from here on a key typed is read as the answer."""


def _xterm(ws: Workspace, *args: str) -> Terminal:
    return ws.terminal(*args, term="xterm-256color")


def _tool_outputs(request: Any) -> list[str]:
    return [str(item["output"]) for item in input_items(request, "function_call_output")]


def _streamed_then_call(words: int, call: tuple[str, str, dict[str, Any]], delay: float) -> Round:
    """A round that streams ``words`` words slowly, then calls a tool: an approval comes right after a stream."""
    call_id, name, arguments = call
    encoded = json.dumps(arguments)
    return Round(
        parts=[
            ScriptText(chunks=[f"w{i} " for i in range(words)]),
            ScriptToolCall(id=call_id, name=name, arguments=[encoded]),
        ],
        usage=Usage(input_tokens=20, output_tokens=5),
        chunk_delay=delay,
    )


def test_an_enter_typed_while_the_reply_streams_is_no_answer(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        _streamed_then_call(12, ("c1", "write_file", {"path": "typed_ahead.txt", "content": "x"}), delay=0.2),
        text("Left it."),
    )
    with _xterm(ws.use(server)) as term:
        term.expect(PROMPT_MARK)
        term.type("write it\r")
        term.expect("w1")
        term.type("\r")  # a stray Enter while the reply streams, before any question is drawn
        term.expect(ASKED)
        term.expect("y/a/n/s?")  # still asking: the Enter answered nothing
        assert not (ws.project / "typed_ahead.txt").exists()
        term.type("\r")  # Enter at the question is no answer either: nothing is chosen by default
        wait_until(lambda: "press y, a, n or s" in _screen_of(term.raw), what="the hint")
        term.type("n")
        term.type("not now\r")
        term.expect("Left it.")
        term.expect(PROMPT_MARK)
        term.type("\x04")
        assert term.wait() == 0
    assert not (ws.project / "typed_ahead.txt").exists()
    assert _tool_outputs(model_requests(server)[1]) == ["Approval rejected: not now"]


def test_ctrl_c_at_the_approval_rejects_and_the_prompt_after_it_takes_what_is_typed(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        calls(("c1", "write_file", {"path": "config.json", "content": "{}"})),
        text("Heard you."),
    )
    with _xterm(ws.use(server)) as term:
        term.expect(PROMPT_MARK)
        term.type("write the config\r")
        term.expect(ASKED)
        term.type("\x03")  # Ctrl+C at the question
        term.expect("(stopped: cancelled)")
        term.expect(PROMPT_MARK)
        term.type("still here\r")  # read by the line editor, not swallowed by a reader left behind
        term.expect("Heard you.")
        term.expect(PROMPT_MARK)
        term.type("\x04")
        assert term.wait() == 0
    assert not (ws.project / "config.json").exists()
    requests = model_requests(server)
    assert len(requests) == 2
    assert user_texts(requests[1])[-1] == "still here"


def test_a_refusal_s_reason_reaches_the_model_in_the_tool_result(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        calls(("c1", "execute_command", {"command": "python3 -m unittest"})),
        text("Using pytest then."),
    )
    with _xterm(ws.use(server), "-p", "run the tests") as term:
        term.expect(ASKED)
        term.type("n because use pytest\r")
        term.expect("Using pytest then.")
        assert term.wait() == 0
    assert _tool_outputs(model_requests(server)[1]) == ["Approval rejected: because use pytest"]


def test_a_120_line_diff_is_shown_whole_before_approving(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "big.txt").write_text("".join(f"old {i}\n" for i in range(120)), encoding="utf-8")
    content = "".join(f"new {i}\n" for i in range(120))
    server.add(calls(("c1", "write_file", {"path": "big.txt", "content": content})), text("Rewrote it."))
    with _xterm(ws.use(server), "-p", "rewrite it") as term:
        panel = _visible(term.expect(ASKED))
        for i in range(120):  # every line, before anything is answered
            assert f"│ -old {i}\n" in panel
            assert f"│ +new {i}\n" in panel
        assert "more lines" not in panel
        term.expect("y/a/n/s?")
        term.type("d")  # the whole diff in a scrollable view, its end one key away
        term.expect("q returns to the question")
        start = term.raw.rindex("\x1b[?1049h")  # the view's own screen
        term.type("G")
        wait_until(lambda: "+new 119" in _screen_of(term.raw[start:]), what="the diff's last line")
        term.type("q")
        term.expect("y/a/n/s?")  # back at the question, still unanswered
        assert not (ws.project / "big.txt").read_text(encoding="utf-8").startswith("new")
        term.type("y")
        term.expect("Rewrote it.")
        assert term.wait() == 0
    assert (ws.project / "big.txt").read_text(encoding="utf-8") == content


def test_an_allowed_edit_shows_its_counts_and_its_diff_on_request(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "app.py").write_text("greeting = 'hi'\nsize = 1\n", encoding="utf-8")
    server.add(
        calls(("c1", "edit_file", {"path": "app.py", "old_text": "size = 1", "new_text": "size = 2"})),
        text("Changed it."),
    )
    with _xterm(ws.use(server).allow_all()) as term:
        term.expect(PROMPT_MARK)
        term.type("grow it\r")
        shown = _visible(term.expect("Changed it."))
        term.expect(PROMPT_MARK)
        term.type("/diff\r")
        diff = _visible(term.expect(PROMPT_MARK))
        term.type("\x04")
        assert term.wait() == 0
    assert "✓ edit_file app.py  +1 \N{MINUS SIGN}1  (/diff shows it)" in shown
    assert "+size = 2" not in shown  # collapsed to its counts
    assert "-size = 1\n+size = 2" in diff
    assert "--- a/app.py" in diff
    assert len(model_requests(server)) == 2  # /diff never reached the model


def test_keys_typed_while_a_reply_streams_wait_below_it_on_a_line_of_their_own(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    words = [f"w{i} " for i in range(16)]
    server.add(text(*words, delay=0.2), text("Heard the next one."))
    with _xterm(ws.use(server)) as term:
        term.expect(PROMPT_MARK)
        term.type("talk\r")
        term.expect("w1")
        term.type("next question")  # typed while the paragraph streams
        during = term.expect(PROMPT_MARK)  # the turn ended: the next prompt is drawn
        term.expect("next question")  # shown there, in the prompt's line
        screen = Screen(120, 400)  # tall enough to keep the scrollback: nothing scrolls off
        screen.feed(term.raw)
        term.type("\r")
        term.expect("Heard the next one.")
        term.expect(PROMPT_MARK)
        term.type("\x04")
        assert term.wait() == 0
    assert "next question" not in during  # nothing typed was drawn inside the streamed reply
    paragraph = "".join(words).strip()
    rows = screen.rows()
    assert sum(row.count("w15") for row in rows) == 1, "\n".join(rows)  # the paragraph is on screen once
    [reply_row] = [number for number, row in enumerate(rows) if paragraph in row]
    [typed_row] = [number for number, row in enumerate(rows) if "next question" in row]
    assert typed_row > reply_row
    assert rows[typed_row].startswith("> next question")
    assert user_texts(model_requests(server)[1])[-1] == "next question"


# -- reading the terminal ----------------------------------------------------------------------------------------

_ESCAPES = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")


def _screen_of(raw: str) -> str:
    """What a terminal 120 columns wide shows after ``raw`` (400 rows: nothing scrolls off)."""
    screen = Screen(120, 400)
    screen.feed(raw)
    return "\n".join(screen.rows())


def _visible(raw: str) -> str:
    """``raw`` without escape sequences (the colours and cursor movements of the drawn panel)."""
    return _ESCAPES.sub("", raw)


class Screen:
    """Just enough of a terminal to read what a person sees: printable characters, carriage return, line feed,
    backspace, cursor moves (A B C D G H), erasing (K J); every other sequence is ignored."""

    def __init__(self, columns: int, lines: int) -> None:
        self.columns, self.lines = columns, lines
        self.grid = [[" "] * columns for _ in range(lines)]
        self.row = self.column = 0

    def rows(self) -> list[str]:
        """The screen's rows, trailing spaces dropped."""
        return ["".join(cells).rstrip() for cells in self.grid]

    def _line_feed(self) -> None:
        if self.row == self.lines - 1:
            self.grid.pop(0)
            self.grid.append([" "] * self.columns)
        else:
            self.row += 1

    def feed(self, data: str) -> None:
        """Draw ``data``, as written to the terminal (its line feeds are ``\r\n``)."""
        position = 0
        while position < len(data):
            char = data[position]
            if char == "\x1b":
                match = _ESCAPES.match(data, position)
                if match is None:
                    position += 1
                    continue
                self._escape(match.group(0))
                position = match.end()
                continue
            position += 1
            if char == "\r":
                self.column = 0
            elif char == "\n":
                self._line_feed()
            elif char == "\b":
                self.column = max(0, self.column - 1)
            elif char >= " ":
                if self.column >= self.columns:
                    self.column = 0
                    self._line_feed()
                self.grid[self.row][self.column] = char
                self.column += 1

    def _escape(self, sequence: str) -> None:
        if not sequence.startswith("\x1b[") or "?" in sequence:
            return
        final, body = sequence[-1], sequence[2:-1]
        numbers = [int(part) if part.isdigit() else 0 for part in body.split(";")] if body else []
        count = max(1, numbers[0]) if numbers else 1
        if final == "A":
            self.row = max(0, self.row - count)
        elif final == "B":
            self.row = min(self.lines - 1, self.row + count)
        elif final == "C":
            self.column = min(self.columns - 1, self.column + count)
        elif final == "D":
            self.column = max(0, self.column - count)
        elif final == "G":
            self.column = min(self.columns - 1, count - 1)
        elif final == "H":
            self.row = min(self.lines - 1, (numbers[0] if numbers else 1) - 1)
            self.column = min(self.columns - 1, (numbers[1] if len(numbers) > 1 else 1) - 1)
        elif final == "K":
            mode = numbers[0] if numbers else 0
            cells = self.grid[self.row]
            span = (
                range(self.column, self.columns)
                if mode == 0
                else range(self.column + 1)
                if mode == 1
                else range(self.columns)
            )
            for index in span:
                cells[index] = " "
        elif final == "J":
            mode = numbers[0] if numbers else 0
            if mode == 0:
                self.grid[self.row][self.column :] = [" "] * (self.columns - self.column)
                for row in range(self.row + 1, self.lines):
                    self.grid[row] = [" "] * self.columns
            elif mode == 2:
                self.grid = [[" "] * self.columns for _ in range(self.lines)]


# -- an agent's question, asked the same way -------------------------------------------------------------------


def test_an_agent_s_question_is_read_by_prompt_toolkit_at_a_terminal(
    ws: Workspace,
) -> None:
    cli = FakeCli.install(ws, "reasonix")
    ws.env.update(cli.env("cli-hello"))
    ws.env["HIVE_TEST_TRANSCRIPT"] = str(ASK_TRANSCRIPT)
    with _xterm(ws, "-p", "ASKME which database should I use?", "--agent", "reasonix") as term:
        term.expect("Which database?")
        term.expect(PROMPT_MARK)  # the question's line is read by prompt_toolkit, no thread on stdin
        term.type("2\r")
        term.expect("MOCK_REPLY done")
        assert term.wait() == 0
    [answer] = [m for m in cli.log() if "result" in m and "outcome" in m["result"]]
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "q1:2"}  # the second option


# -- without a terminal that can draw (a dumb one, a test's stream) ----------------------------------------------


def _request() -> ApprovalRequest:
    return ApprovalRequest(
        call_id="c1", tool_name="execute_command", arguments={"command": "make"}, reason="ask"
    )


def test_a_typed_line_answers_only_with_a_key_and_a_refusal_keeps_its_reason() -> None:
    shown = io.StringIO()
    typed = io.StringIO("\nyes please\nn   use pytest instead \n")
    approver = TerminalApprover(stdin=typed, stderr=shown, interactive=True)

    async def ask() -> ApprovalDecision:
        with anyio.fail_after(10):
            return await approver.request(_request())

    decision = anyio.run(ask)
    assert decision == ApprovalDecision(approved=False, reason="use pytest instead")
    assert shown.getvalue().count("answer y, a, n") == 2  # an empty line and a word are no answer


def test_a_cancelled_approval_leaves_nobody_reading_stdin() -> None:
    read, write = os.pipe()  # a terminal nobody answers at, at first
    with os.fdopen(read, "r") as stdin:
        approver = TerminalApprover(stdin=stdin, stderr=io.StringIO(), interactive=True)

        async def give_up_then_ask_again() -> ApprovalDecision:
            with anyio.move_on_after(0.2):
                await approver.request(_request())
            os.write(write, b"y\n")
            # A reader left behind by the cancelled question would take this answer from the next one.
            with anyio.fail_after(10):
                return await approver.request(_request())

        try:
            assert anyio.run(give_up_then_ask_again) == ApprovalDecision(approved=True)
        finally:
            os.write(write, b"n\n")  # ends a reader left behind, if any (it holds the file's lock)
            os.close(write)
