"""Long sessions end to end: ``hive`` against the scripted model server, which records every request.

A session whose messages and tool results add up to several times the window stays inside it on every request,
every call sent keeps its result, the newest turn is sent whole, the summary the model wrote is what the next
request carries, and the transcript on disk keeps everything. A server that reports an overflow gets the turn
compacted and retried once; a session that once read a 60 KB file answers the next question after ``-c``.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from cli_harness import Proc
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import scripted_server
from cli_harness import text
from cli_harness import user_texts

from hive_cli.session_store import session_store_path
from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import ContextLengthFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_core.budget import BUDGET_EXHAUSTED_TEXT
from hive_core.messages import ToolResultPart
from hive_core.sessions import SqliteSessionStore

SUMMARY_MARK = "You summarize"
SUMMARY_PREFIX = "[Previous conversation summary]: "
WINDOW = 4_000
LOCAL_TIMEOUT = 120.0


def is_summary(request: RecordedRequest) -> bool:
    body: dict[str, Any] = request.body
    return not body.get("tools") and SUMMARY_MARK in request.raw_body.decode()


def sent_tokens(request: RecordedRequest) -> int:
    """What the request costs, estimated the way hive estimates (characters / 4), over everything it sends:
    instructions, every input item's text, arguments and results, and the tool definitions."""
    body: dict[str, Any] = request.body
    chars = len(body.get("instructions") or "") + len(json.dumps(body.get("tools") or []))
    for item in body["input"]:
        content = item.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(part.get("text", "")) for part in content)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType, reportUnknownVariableType]
        chars += len(item.get("arguments", "")) + len(item.get("output", "")) + len(item.get("name", ""))
    return chars // 4


def plain(round_: Round) -> Round:
    """``round_`` without usage: the scripted server's token counts are not the request's, and hive calibrates
    its estimate by the usage a provider reports."""
    return msgspec.structs.replace(round_, usage=None)


def round_text(round_: Round) -> str:
    return "".join(chunk for part in round_.parts if isinstance(part, ScriptText) for chunk in part.chunks)


def serve_turn(proc: Proc, content: str, **options: Any) -> list[dict[str, Any]]:
    request: dict[str, Any] = {"type": "user_message", "content": content}
    if options:
        request["options"] = options
    proc.send(request)
    return proc.events_until("turn_end")


def stored_messages(ws: Workspace, session_id: str) -> list[Any]:
    with SqliteSessionStore(session_store_path(ws.env)) as store:
        return list(store.restore(session_id))


def configure(ws: Workspace, yaml_text: str) -> None:
    (ws.project / ".hive" / "config.yaml").write_text(yaml_text, encoding="utf-8")


def test_a_long_session_stays_inside_the_window_and_loses_nothing(ws: Workspace) -> None:
    files = 8
    for n in range(files):
        lines = [f"file {n} line {i:03} " + "x" * 40 for i in range(60)]  # ~3,500 characters
        (ws.project / f"f{n}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # Every round makes sense wherever it lands: a summary request takes the next one (its text is the summary),
    # and the model's next answer is the round after it.
    rounds: list[Round] = []
    for k in range(0, 240, 3):
        for j in (k, k + 1):
            rounds.append(
                plain(calls((f"c{j}", "read_file", {"path": f"f{j % files}.txt"}), say=f"R{j} reading"))
            )
        rounds.append(text(f"R{k + 2} done", usage=None))
    turns = 30
    prompts = [f"turn {t}: " + " ".join(["please look"] * 150) for t in range(turns)]  # ~1,800 characters
    with scripted_server(*rounds) as server:
        ws.use(server).allow_all()
        configure(ws, f"compaction:\n  maxContextTokens: {WINDOW}\n")
        with ws.start("run", "--server") as proc:
            started = proc.next_event()
            assert started["type"] == "session_started"
            session_id = started["session_id"]
            for t, prompt in enumerate(prompts):
                events = serve_turn(proc, prompt, tool_names=["read_file"])
                end = events[-1]
                assert end.get("stop_reason") == "completed", (t, events)
                assert not [e for e in events if e["type"] == "error"], events
                deltas = [e["content"] for e in events if e["type"] == "text_delta"]
                assert BUDGET_EXHAUSTED_TEXT not in deltas
                addenda = [e for e in events if e["type"] == "addendum"]
                assert len(addenda) <= 1
                if addenda:
                    assert events[-2]["type"] == "addendum"
                    assert addenda[0]["content"].startswith("compacted ")
            proc.close_stdin()
            assert proc.wait() == 0, proc.stderr
        requests = model_requests(server)
        consumed = rounds[: server.consumed]
    assert server.errors == []
    summaries = [i for i, r in enumerate(requests) if is_summary(r)]
    assert summaries, "no compaction happened: the session never filled the window"
    figures = [sent_tokens(r) for r in requests]
    print(f"{len(requests)} requests, {len(summaries)} summaries, largest {max(figures)} of {WINDOW} tokens")
    for index, request in enumerate(requests):
        assert figures[index] <= WINDOW, (index, figures[index])
        if index in summaries:
            continue
        # Every call sent has its result, and every result its call.
        call_ids = [item["call_id"] for item in input_items(request, "function_call")]
        result_ids = [item["call_id"] for item in input_items(request, "function_call_output")]
        assert sorted(call_ids) == sorted(result_ids), index
        # The newest turn (the protected tail) is sent whole: its prompt, and its own results unshortened.
        assert user_texts(request)[-1] in prompts
    # Each summary is the text of the round that answered its request, and the next request carries it.
    for index in summaries:
        written = round_text(consumed[requests[index].round or 0])
        following = requests[index + 1]
        assert (SUMMARY_PREFIX + written) in following.raw_body.decode(), index
    # The conversation sent was several windows long; the transcript on disk keeps all of it.
    stored = stored_messages(ws, session_id)
    results = [p for m in stored for p in m.parts if isinstance(p, ToolResultPart)]
    assert len(results) >= 3
    assert (sum(len(p.content) for p in results) + sum(map(len, prompts))) // 4 > 3 * WINDOW
    assert [m.text for m in stored if m.role == "user"] == prompts
    for part in results:
        assert (
            part.content
            == (ws.project / json.loads(part_arguments(stored, part.call_id))["path"]).read_text()
        )


def part_arguments(stored: list[Any], call_id: str) -> str:
    for message in stored:
        for call in message.tool_calls:
            if call.id == call_id:
                return call.arguments_text
    raise AssertionError(f"no call {call_id}")


def test_an_overflow_reported_by_the_server_is_compacted_and_the_turn_completes(ws: Workspace) -> None:
    big = " ".join(["context"] * 1_000)  # ~8,000 characters an answer
    rounds = [
        text(f"first answer {big}", usage=None),
        text(f"second answer {big}", usage=None),
        Round(failure=ContextLengthFailure()),
        text("SUMMARY-OF-EARLIER", usage=None),
        text("third answer", usage=None),
    ]
    with scripted_server(*rounds) as server:
        ws.use(server)
        with ws.start("run", "--server") as proc:
            assert proc.next_event()["type"] == "session_started"
            for prompt in ("one", "two"):
                events = serve_turn(proc, prompt, tool_mode="none")
                assert events[-1].get("stop_reason") == "completed", events
            events = serve_turn(proc, "three", tool_mode="none")
            proc.close_stdin()
            assert proc.wait() == 0, proc.stderr
        requests = model_requests(server)
    assert [e["type"] for e in events][-2:] == ["addendum", "turn_end"], events
    assert events[-1].get("stop_reason") == "completed"
    assert "third answer" in [e.get("content") for e in events]
    assert "into a summary" in events[-2]["content"]
    overflowed, summary, retried = requests[2:]
    assert is_summary(summary)
    assert not is_summary(overflowed)
    assert SUMMARY_PREFIX + "SUMMARY-OF-EARLIER" in retried.raw_body.decode()
    assert user_texts(retried)[-1] == "three"
    assert len(retried.raw_body) < len(overflowed.raw_body)
    server.assert_consumed()


def test_a_session_that_read_60_kb_answers_the_next_question_after_continue(ws: Workspace) -> None:
    big = ws.project / "big.txt"
    big.write_text("".join(f"line {i:04} " + "y" * 50 + "\n" for i in range(1_000)), encoding="utf-8")
    assert len(big.read_bytes()) > 60_000
    with scripted_server(
        plain(calls(("r1", "read_file", {"path": "big.txt"}))),
        text("it is a file of lines", usage=None),
        text("the new answer", usage=None),
    ) as server:
        ws.use(server).allow_all()
        first = ws.run("-p", "read big.txt")
        assert first.code == 0, first
        assert "it is a file of lines" in first.stdout
        assert BUDGET_EXHAUSTED_TEXT not in first.stdout
        again = ws.run("-c", "-p", "new question", "--show-tokens")
        assert again.code == 0, again
        assert "the new answer" in again.stdout, again
        assert BUDGET_EXHAUSTED_TEXT not in again.stdout
        # --show-tokens shows the window's use: the default window, as nothing else knows this model.
        assert " / 8,192 tokens (" in again.stderr, again
        requests = model_requests(server)
    last = requests[-1]
    assert user_texts(last)[-1] == "new question"
    [output] = input_items(last, "function_call_output")
    assert "lines omitted" in output["output"]
    assert len(output["output"]) < 10_000
    # What is stored is whole: the next -c starts from all of it again.
    [info] = ws.sessions()
    stored = stored_messages(ws, info["id"])
    [result] = [p for m in stored for p in m.parts if isinstance(p, ToolResultPart)]
    assert result.content == big.read_text(encoding="utf-8")


def test_the_window_use_is_shown_with_show_tokens(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("hello", usage=(10, 2)))
    ws.use(server)
    configure(ws, "compaction:\n  maxContextTokens: 50000\n")
    result = ws.run("-p", "hi", "--show-tokens")
    assert result.code == 0, result
    [line] = [line for line in result.stderr.splitlines() if line.startswith("context: ")]
    assert line.endswith(" / 50,000 tokens (" + line.split("(")[-1])
    used = int(line.removeprefix("context: ").split(" / ")[0].replace(",", ""))
    assert 0 < used < 50_000


def test_the_compaction_settings_are_read_from_the_config(ws: Workspace, server: ScriptedModelServer) -> None:
    # Truncation off: the long result goes out whole (a request the default settings would shorten).
    server.add(calls(("r1", "read_file", {"path": "long.txt"})), text("read"))
    (ws.project / "long.txt").write_text("z" * 40_000 + "\n", encoding="utf-8")
    ws.use(server).allow_all()
    configure(ws, "compaction:\n  enableToolResultCompaction: false\n  maxContextTokens: 200000\n")
    result = ws.run("-p", "read long.txt")
    assert result.code == 0, result
    [output] = input_items(model_requests(server)[-1], "function_call_output")
    assert output["output"] == "z" * 40_000 + "\n"


# -- a real model --------------------------------------------------------------------------------------------

LOCAL_WINDOW = 2_048
LOCAL_TURNS = 22


@pytest.mark.slow
def test_the_local_model_answers_22_turns_inside_its_small_window(ws: Workspace) -> None:
    # SmolLM2 in process, its context set small: the conversation outgrows it within a few turns, so the
    # session must compact (the summary written by the model itself) to go on.
    del ws.env["LMSUPPLY_ENABLED"]
    configure(ws, f"lmsupply:\n  maxContextLength: {LOCAL_WINDOW}\n")
    topics = [
        "rivers",
        "bread",
        "bicycles",
        "owls",
        "glass",
        "tea",
        "maps",
        "bees",
        "clocks",
        "salt",
        "kites",
    ]
    with ws.start("run", "--server", "--max-output-tokens", "40") as proc:
        assert proc.next_event(timeout=LOCAL_TIMEOUT)["type"] == "session_started"
        ends: list[dict[str, Any]] = []
        compactions = 0
        for turn in range(LOCAL_TURNS):
            topic = topics[turn % len(topics)]
            prompt = f"Question {turn + 1}: tell me one short fact about {topic}. " + "Be brief. " * 20
            proc.send({"type": "user_message", "content": prompt, "options": {"tool_mode": "none"}})
            events = proc.events_until("turn_end", timeout=LOCAL_TIMEOUT)
            assert not [e for e in events if e["type"] == "error"], (turn, events)
            end = events[-1]
            assert end.get("stop_reason") in ("completed", "output_limit"), (turn, events)
            assert end.get("input_tokens"), (turn, end)
            compactions += sum(1 for e in events if e["type"] == "addendum")
            ends.append(end)
        proc.close_stdin()
        assert proc.wait(timeout=LOCAL_TIMEOUT) == 0, proc.stderr
    # Every prompt the model read fit its window (the tokens it reports are the prompt of the turn's one round).
    prompts = [end["input_tokens"] for end in ends]
    print(f"prompt tokens per turn: {prompts}; {compactions} turn(s) compacted")
    assert max(prompts) < LOCAL_WINDOW
    assert compactions >= 1  # 22 turns of these prompts are several windows: without compaction they overflow


def test_compact_in_the_interactive_mode_compacts_now_and_the_next_request_carries_the_summary(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    answer = " ".join(["long"] * 2_000)
    server.add(
        text(f"first {answer}", usage=None),
        text(f"second {answer}", usage=None),
        text("THE-SUMMARY", usage=None),
        text("after compaction", usage=None),
        text("SECOND-SUMMARY", usage=None),
    )
    ws.use(server)
    assert ws.run("-p", "one").code == 0
    assert ws.run("-c", "-p", "two").code == 0
    with ws.prompt("-c") as term:
        term.type("/compact\r")
        report = term.expect("> ")
        assert "compacted 3 messages into a summary" in report, report
        term.enter("three", "after compaction")
        term.type("/compact\r")
        again = term.expect("> ")
        assert "into a summary" in again, again  # the second answer, left out the first time
        term.type("exit\r")
        assert term.wait() == 0
    requests = model_requests(server)
    assert is_summary(requests[2])
    assert SUMMARY_PREFIX + "THE-SUMMARY" in requests[3].raw_body.decode()
    assert user_texts(requests[3])[-1] == "three"
    assert "THE-SUMMARY" in requests[4].raw_body.decode()  # the second summary builds on the first
    server.assert_consumed()


def test_the_cli_shows_the_compaction_of_a_turn(ws: Workspace, server: ScriptedModelServer) -> None:
    answer = " ".join(["long"] * 2_000)  # 10,000 characters
    server.add(
        text(f"first {answer}", usage=None),
        text(f"second {answer}", usage=None),
        text("THE-SUMMARY", usage=None),
        text("third answer", usage=None),
    )
    ws.use(server)
    configure(ws, "compaction:\n  maxContextTokens: 8000\n")
    assert ws.run("-p", "one").code == 0
    assert ws.run("-c", "-p", "two").code == 0
    third = ws.run("-c", "-p", "three")
    assert third.code == 0, third
    assert third.stdout.strip() == "third answer"
    [note] = [line for line in third.stderr.splitlines() if "compacted " in line]
    assert "into a summary" in note
    assert note.endswith(" tokens")
    server.assert_consumed()
