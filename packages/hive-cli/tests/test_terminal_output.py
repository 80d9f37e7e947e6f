"""The terminal's output side: an approval question that no progress line overwrites, the diff an edit approval
shows, what a file tool changed (``+2 -1``), a command's first lines of output, Markdown rendered while it
streams, widths by terminal cells, and ``--plain`` / ``NO_COLOR`` / a pipe without escape codes."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import anyio
import pytest
from cli_harness import Terminal
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from rich.cells import cell_len
from rich.console import Console

from hive_cli.approver import TerminalApprover
from hive_cli.cells import clip
from hive_cli.diffs import Change
from hive_cli.diffs import counts
from hive_cli.diffs import diff_preview
from hive_cli.diffs import proposed_change
from hive_cli.markdown_stream import MarkdownStream
from hive_cli.render import Held
from hive_cli.render import TextRenderer
from hive_conformance.model_server import ScriptedModelServer
from hive_core import ApprovalRequest
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent

_ESCAPE = re.compile(r"\x1b\[")
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _visible(written: str) -> str:
    """What was written, its escape codes dropped."""
    return _CONTROL.sub("", written)


class TtyBuffer(io.StringIO):
    """An in-memory stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


# -- diffs ------------------------------------------------------------------------------------------------------


def test_an_edit_is_diffed_against_the_file_on_disk(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    change = proposed_change(
        "edit_file", {"path": "app.py", "old_text": "b = 2", "new_text": "b = 20"}, tmp_path
    )
    assert change == Change("app.py", "a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\n")
    assert change is not None
    lines = diff_preview(change, color=False)
    assert "-b = 2" in lines
    assert "+b = 20" in lines
    assert " a = 1" in lines  # context
    assert not any(_ESCAPE.search(line) for line in lines)
    coloured = diff_preview(change, color=True)
    assert "\x1b[32m+b = 20\x1b[0m" in coloured
    assert "\x1b[31m-b = 2\x1b[0m" in coloured


def test_a_new_file_shows_its_first_lines_and_how_many_more(tmp_path: Path) -> None:
    content = "".join(f"line {i}\n" for i in range(100))
    change = proposed_change("write_file", {"path": "new.txt", "content": content}, tmp_path)
    assert change is not None
    assert change.before is None
    lines = diff_preview(change, color=False, limit=10)
    assert len(lines) == 11
    assert lines[0] == "--- /dev/null"
    assert "+line 0" in lines
    assert "+line 6" in lines  # 3 header lines and the first 7 of the file
    assert "+line 7" not in lines
    assert lines[-1] == "… 93 more lines"  # 103 lines of diff (2 headers, a hunk header, 100 added), 10 shown


def test_diff_lines_are_cut_to_the_width_so_they_cannot_wrap() -> None:
    wide = "x = '" + "漢字" * 30 + "'"
    change = Change("app.py", "a = 1\n", f"a = 1\n{wide}\n\tindented = True\n")
    lines = diff_preview(change, color=True, width=24)
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in lines]
    assert all(cell_len(line) <= 24 for line in plain)
    assert "+x = '漢字漢字漢字漢字…" in plain  # cut by cells: a CJK character takes two
    assert "+       indented = True" in plain  # tabs expanded before measuring
    assert "\x1b[32m" in lines[-1]  # still coloured
    assert diff_preview(change, color=False)[-2].endswith("漢字'")  # no width: whole lines


def test_counts_are_lines_added_and_removed() -> None:
    assert counts("a\nb\nc\n", "a\nB\nc\nd\n") == (2, 1)
    assert counts(None, "x\ny\n") == (2, 0)
    assert counts("x\n", "x\n") == (0, 0)


# -- the approval panel ----------------------------------------------------------------------------------------


def _approve(approver: TerminalApprover, tool: str, arguments: dict[str, object]) -> None:
    async def ask() -> None:
        with anyio.fail_after(5):
            decision = await approver.request(
                ApprovalRequest(call_id="c1", tool_name=tool, arguments=arguments, reason="ask")
            )
        assert decision.approved

    anyio.run(ask)


def test_an_edit_approval_shows_a_coloured_diff_and_a_plain_one_without_colour(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    arguments: dict[str, object] = {"path": "app.py", "old_text": "return 1", "new_text": "return 2"}
    for color in (True, False):
        stderr = io.StringIO()
        approver = TerminalApprover(stdin=io.StringIO("y\n"), stderr=stderr, interactive=True, root=tmp_path)
        approver.screen = lambda color=color: Hold(color)
        _approve(approver, "edit_file", arguments)
        panel = stderr.getvalue()
        assert "approval needed: edit_file" in panel
        assert "path: app.py" in panel
        assert "old_text:" not in panel  # the diff shows it
        if color:
            assert "\x1b[31m-    return 1\x1b[0m" in panel
            assert "\x1b[32m+    return 2\x1b[0m" in panel
        else:
            assert "│ -    return 1" in panel
            assert "│ +    return 2" in panel
            assert not _ESCAPE.search(panel)
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == "def f():\n    return 1\n"  # only asked


class Hold:
    """A held screen, as the renderer's gives it."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __enter__(self) -> Held:
        return Held(color=self.color)

    def __exit__(self, *exc: object) -> None:
        return None


def test_a_long_argument_is_cut_by_terminal_cells() -> None:
    wide = "漢字" * 80
    assert cell_len(clip(wide, 57)) <= 57
    assert clip(wide, 57).endswith("…")
    assert clip("short", 57) == "short"
    stderr = io.StringIO()
    approver = TerminalApprover(stdin=io.StringIO("y\n"), stderr=stderr, interactive=True)
    _approve(approver, "execute_command", {"command": f"echo {wide}"})
    [line] = [line for line in stderr.getvalue().splitlines() if "command:" in line]
    assert cell_len(line) <= 4 + len("command: ") + 57


# -- tool results ----------------------------------------------------------------------------------------------


def test_a_file_tool_result_says_how_many_lines_changed(tmp_path: Path) -> None:
    source = tmp_path / "src" / "app.py"
    source.parent.mkdir()
    source.write_text("a\nb\nc\n", encoding="utf-8")
    stderr = io.StringIO()
    renderer = TextRenderer(stdout=io.StringIO(), stderr=stderr, root=tmp_path)
    renderer(ToolStartEvent(tool="edit_file", input={"path": "src/app.py"}, call_id="c1"))
    source.write_text("a\nB\nB2\nc\n", encoding="utf-8")  # what the tool did
    renderer(ToolEndEvent(tool="edit_file", success=True, output="Edited src/app.py", call_id="c1"))
    assert "✓ edit_file src/app.py  +2 \N{MINUS SIGN}1" in stderr.getvalue().splitlines()


def test_a_command_result_shows_its_first_lines_of_output() -> None:
    stderr = io.StringIO()
    renderer = TextRenderer(stdout=io.StringIO(), stderr=stderr)
    output = "Exit code: 0\nOutput:\n" + "\n".join(f"row {i}" for i in range(8))
    renderer(ToolStartEvent(tool="execute_command", input={"command": "seq"}, call_id="c1"))
    renderer(ToolEndEvent(tool="execute_command", success=True, output=output, call_id="c1"))
    lines = stderr.getvalue().splitlines()
    start = lines.index("✓ execute_command Exit code: 0")
    assert lines[start + 1 : start + 7] == [
        "  │ row 0",
        "  │ row 1",
        "  │ row 2",
        "  │ row 3",
        "  │ row 4",
        "  … 3 more lines",
    ]


# -- Markdown while it streams ---------------------------------------------------------------------------------


def test_each_block_is_printed_rendered_as_soon_as_it_ends() -> None:
    out = io.StringIO()
    stream = MarkdownStream(Console(file=out, width=60, force_terminal=False))
    stream.feed("# Pl")
    stream.feed("an\n")
    assert "Plan" in out.getvalue()
    assert "#" not in out.getvalue()  # the heading rendered, not written as typed
    stream.feed("- **first** item\n- sec")
    assert "first" not in out.getvalue()  # the list is still arriving
    stream.feed("ond\n\nAfter the list")
    assert "• first item" in out.getvalue()
    assert "**" not in out.getvalue()
    assert "After" not in out.getvalue()
    stream.feed("\n```python\nx = 1\n")
    assert "x = 1" not in out.getvalue()  # inside an open code fence
    stream.feed("```\n")
    assert "x = 1" in out.getvalue()
    assert "```" not in out.getvalue()
    stream.feed("plain line one\nplain line two")
    stream.close()
    assert "plain line one\nplain line two" in out.getvalue()  # no Markdown in it: its line breaks kept


def test_the_renderer_keeps_a_pipe_raw_and_renders_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    reply = ["## Steps\n\n", "- **one**\n", "- two\n"]
    for out, raw in ((io.StringIO(), True), (TtyBuffer(), False)):
        renderer = TextRenderer(stdout=out, stderr=io.StringIO())
        for chunk in reply:
            renderer(TextDeltaEvent(content=chunk))
        renderer(TurnEndEvent())
        if raw:
            assert out.getvalue() == "".join(reply)
        else:
            assert "• one" in _visible(out.getvalue())
    monkeypatch.setenv("NO_COLOR", "1")
    out, err = TtyBuffer(), TtyBuffer()
    renderer = TextRenderer(stdout=out, stderr=err)
    renderer.begin_turn()
    for chunk in reply:
        renderer(TextDeltaEvent(content=chunk))
    renderer(ToolStartEvent(tool="read_file", input={"path": "a"}, call_id="c1"))
    renderer(ToolEndEvent(tool="read_file", success=True, output="text", call_id="c1"))
    renderer(TurnEndEvent())
    assert out.getvalue() == "".join(reply)
    assert not _ESCAPE.search(err.getvalue())


def test_a_turn_that_ends_with_nothing_says_so() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TextRenderer(stdout=out, stderr=err)
    renderer(TextDeltaEvent(content=""))
    renderer(TurnEndEvent(stop_reason="completed"))
    assert err.getvalue() == "(no reply)\n"
    renderer(TextDeltaEvent(content="Hi."))
    renderer(TurnEndEvent(stop_reason="completed"))
    assert err.getvalue() == "(no reply)\n"  # a turn that answered says nothing more
    assert out.getvalue() == "Hi.\n"
    renderer(ToolStartEvent(tool="read_file", input={"path": "a"}, call_id="c1"))
    renderer(ToolEndEvent(tool="read_file", success=True, output="text", call_id="c1"))
    renderer(TurnEndEvent(stop_reason="completed"))
    assert "(no reply)" not in err.getvalue().split("read_file", 1)[1]


def test_a_dumb_terminal_gets_the_reply_as_it_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")
    out = TtyBuffer()
    renderer = TextRenderer(stdout=out, stderr=io.StringIO())
    renderer(TextDeltaEvent(content="- **one** and"))
    assert out.getvalue() == "- **one** and"  # shown at once: a dumb terminal cannot redraw a rendered block
    renderer(TurnEndEvent())
    assert out.getvalue() == "- **one** and\n"


def test_streaming_a_delta_stays_cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    out = TtyBuffer()
    renderer = TextRenderer(stdout=out, stderr=io.StringIO())
    words = [f"word{i} " if i % 12 else "\n\n" for i in range(4000)]
    started = time.perf_counter()
    for word in words:
        renderer(TextDeltaEvent(content=word))
    renderer(TurnEndEvent())
    per_delta = (time.perf_counter() - started) / len(words)
    print(f"{per_delta * 1e6:.1f} µs per delta")
    assert per_delta < 0.002, f"{per_delta * 1e6:.0f} µs per delta"
    assert "word3999" in out.getvalue()


# -- on a real terminal ----------------------------------------------------------------------------------------


def _terminal(ws: Workspace, *args: str) -> Terminal:
    return ws.terminal(*args, term="xterm-256color")


def test_an_edit_approval_shows_the_diff_and_stays_visible_until_answered(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "app.py").write_text("greeting = 'hi'\nsize = 1\n", encoding="utf-8")
    server.add(
        calls(
            ("c1", "edit_file", {"path": "app.py", "old_text": "size = 1", "new_text": "size = 2\nmore = 3"})
        ),
        text("Changed it."),
    )
    ws.use(server)
    with _terminal(ws, "-p", "grow it") as term:
        panel = term.expect("[s] reject and stop")
        assert "approval needed: edit_file" in panel
        assert "\x1b[31m-size = 1" in panel
        assert "\x1b[32m+size = 2" in panel
        assert "\x1b[32m+more = 3" in panel
        term.expect("y/a/n/s?")  # the choice is drawn and waits for its key
        shown = term.output
        # Not a synchronisation: the spinner draws every 0.1 s when it runs, so a half-second window in which no frame is
        # drawn is what shows that nothing is drawn over the question.
        time.sleep(0.5)
        assert not any(frame in term.output[len(shown) :] for frame in _FRAMES)
        term.type("y\r")
        term.expect("Changed it.")
        assert term.wait() == 0
    after = _visible(term.output[len(shown) :])
    assert "✓ edit_file app.py" in after
    assert "+2" in after
    assert "\N{MINUS SIGN}1" in after
    assert (ws.project / "app.py").read_text(encoding="utf-8") == "greeting = 'hi'\nsize = 2\nmore = 3\n"
    assert not any(frame in panel.split("approval needed")[1] for frame in _FRAMES)


def test_a_dumb_terminal_gets_no_spinner(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Slow ", "but ", "sure.", delay=0.4))
    ws.use(server).allow_all()
    with ws.terminal("-p", "wait for it", term="dumb") as term:
        term.expect("sure.")
        assert term.wait() == 0
    assert not any(frame in term.output for frame in _FRAMES)
    assert "\x1b[2K" not in term.output


def test_markdown_is_rendered_while_the_reply_still_streams(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        text("# Plan\n\n", "- **first** item\n\n", "more ", "words ", "to ", "come ", "END", delay=0.4)
    )
    ws.use(server).allow_all()
    with _terminal(ws, "-p", "plan") as term:
        term.expect("Plan")
        assert "END" not in term.output  # the heading is rendered before the reply has ended
        assert "# Plan" not in term.output
        term.expect("first")
        term.expect("END")
        assert term.wait() == 0
    screen = term.output
    assert "•" in screen
    assert "**first**" not in screen
    assert len(model_requests(server)) == 1


def test_plain_on_a_terminal_writes_no_escape_code(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(
        calls(("c1", "execute_command", {"command": "seq 1 9"})),
        text("## Done\n\n", "- **ok**\n", delay=0.05),
    )
    ws.use(server).allow_all()
    with _terminal(ws, "-p", "count", "--plain") as term:
        term.expect("- **ok**")
        assert term.wait() == 0
    screen = term.output
    assert not _ESCAPE.search(screen), repr(screen)
    assert "  │ 1\n" in screen
    assert "  … 4 more lines" in screen
    assert "## Done" in screen


def test_a_cjk_reply_keeps_the_layout(ws: Workspace, server: ScriptedModelServer) -> None:
    line = "漢字かな交じり文" * 9  # 144 cells on a 120-cell terminal
    server.add(text("- " + line + "\n", "- 二番目\n"))
    ws.use(server)
    with _terminal(ws, "-p", "日本語で") as term:
        term.expect("二番目")
        assert term.wait() == 0
    # What a row finally shows: what was written after its last erase (the spinner and the live display erase).
    rows = [_visible(row.split("\x1b[2K")[-1]) for row in term.output.split("\n")]
    rows = [row for row in rows if "漢" in row or "交" in row or "番" in row]
    assert len(rows) >= 3  # the long item wrapped onto a second row, then the second item
    assert all(cell_len(row) <= 120 for row in rows), [cell_len(row) for row in rows]
