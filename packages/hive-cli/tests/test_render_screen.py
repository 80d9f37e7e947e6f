"""A question on the terminal (an approval, an agent's question) holds the screen: the progress line is cleared
and stays away until the answer, then the latest progress comes back."""

from __future__ import annotations

import io
from contextlib import AbstractContextManager

import anyio
import pytest

from hive_cli.approver import TerminalApprover
from hive_cli.render import TextRenderer
from hive_cli.spinner import Spinner
from hive_core import ApprovalRequest
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolStartEvent


class RecordingSpinner(Spinner):
    """The progress indicator, recording what it was asked to do instead of drawing."""

    def __init__(self) -> None:
        super().__init__(io.StringIO())
        self.calls: list[str] = []

    def show(self, label: str) -> None:
        self.calls.append(f"show {label}")

    def hide(self) -> None:
        self.calls.append("hide")


def test_progress_is_not_drawn_while_the_screen_is_held() -> None:
    spinner = RecordingSpinner()
    renderer = TextRenderer(stdout=io.StringIO(), stderr=io.StringIO(), spinner=spinner)
    renderer(ToolStartEvent(tool="execute_command", input={"command": "touch x"}, call_id="c1"))
    assert spinner.calls[-1] == "show running execute_command…"

    spinner.calls.clear()
    with renderer.screen():
        assert spinner.calls == ["hide"]
        # An event while the person is asked (another call starting): noted, but no progress drawn over the panel.
        renderer(ToolStartEvent(tool="read_file", input={"path": "a"}, call_id="c2"))
        assert not [call for call in spinner.calls if call.startswith("show")]
    assert spinner.calls[-1] == "show running read_file…"


def test_nothing_is_redrawn_when_the_reply_came_while_held() -> None:
    spinner = RecordingSpinner()
    renderer = TextRenderer(stdout=io.StringIO(), stderr=io.StringIO(), spinner=spinner)
    renderer.begin_turn()
    with renderer.screen():
        renderer(TextDeltaEvent(content="Done."))
    assert not [call for call in spinner.calls[1:] if call.startswith("show")]


@pytest.mark.anyio
async def test_the_terminal_approver_holds_the_screen_while_it_asks() -> None:
    held: list[str] = []

    class Screen(AbstractContextManager[object]):
        def __enter__(self) -> object:
            held.append("enter")
            return None

        def __exit__(self, *exc: object) -> None:
            held.append("exit")

    stderr = io.StringIO()
    approver = TerminalApprover(stdin=io.StringIO("y\n"), stderr=stderr, interactive=True)
    approver.screen = Screen
    with anyio.fail_after(5):
        decision = await approver.request(
            ApprovalRequest(
                call_id="c1", tool_name="execute_command", arguments={"command": "ls"}, reason="ask"
            )
        )
    assert decision.approved
    assert held == ["enter", "exit"]
    assert "approval needed: execute_command" in stderr.getvalue()
