"""``chatBehavior.maximumConsecutiveErrorsPerRequest`` end to end through ``hive run --server``: the Nth failed
tool call in a row ends the request cleanly (``tool_terminated``, with an addendum saying why), and a call that
succeeds starts the count again."""

from __future__ import annotations

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round


def _reads(*paths: str) -> list[Round]:
    """One round per path, each reading it with ``read_file`` (call ids c1, c2...)."""
    return [calls((f"c{number}", "read_file", {"path": path})) for number, path in enumerate(paths, 1)]


def _tool_ends(events: list[dict[str, object]]) -> list[bool]:
    return [bool(event["success"]) for event in events if event["type"] == "tool_end"]


def test_three_failed_calls_in_a_row_end_the_request(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(*_reads("missing-1.txt", "missing-2.txt", "missing-3.txt"), text("never asked for"))
    with ws.use(server).allow_all().serve() as proc:
        events = proc.turn("read the notes")
        assert _tool_ends(events) == [False, False, False]
        addendum, end = events[-2:]
        assert addendum == {
            "type": "addendum",
            "content": "The request was stopped after 3 failed tool calls in a row.",
        }
        assert end["type"] == "turn_end"
        assert end["stop_reason"] == "tool_terminated"
        # The model was not asked again after the third failure; the session goes on with the next turn.
        assert len(model_requests(server)) == 3
        after = proc.turn("thanks")
    assert [event["type"] for event in after] == ["text_delta", "turn_end"]
    assert after[-1]["stop_reason"] == "completed"


def test_a_success_starts_the_count_again(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "notes.txt").write_text("the notes\n", encoding="utf-8")
    server.add(
        *_reads("missing-1.txt", "missing-2.txt", "notes.txt", "missing-3.txt", "missing-4.txt"),
        text("Found them in notes.txt."),
    )
    with ws.use(server).allow_all().serve() as proc:
        events = proc.turn("read the notes")
    assert _tool_ends(events) == [False, False, True, False, False]
    assert [event["type"] for event in events[-2:]] == ["text_delta", "turn_end"]
    assert events[-1]["stop_reason"] == "completed"
    assert len(model_requests(server)) == 6


def test_the_limit_is_read_from_the_configuration(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / ".hive" / "config.yaml").write_text(
        "chatBehavior:\n  maximumConsecutiveErrorsPerRequest: 1\n", encoding="utf-8"
    )
    server.add(*_reads("missing.txt"), text("never asked for"))
    with ws.use(server).allow_all().serve() as proc:
        events = proc.turn("read it")
    assert _tool_ends(events) == [False]
    assert events[-2]["content"] == "The request was stopped after a failed tool call."
    assert events[-1]["stop_reason"] == "tool_terminated"
    assert len(model_requests(server)) == 1
