"""``--agent NAME``: a coding-agent CLI runs the turns of ``hive -p``, ``hive run`` and ``hive run --server``, under
hive's rules and approvals; its session is recorded in hive's and resumed by ``-c`` and ``-r``; names that are no
backend, CLIs that are missing and CLIs hive cannot drive are one-line errors."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_cli_harness import FakeCli
from cli_harness import Workspace

from hive_cli.questioner import TerminalQuestioner
from hive_cli.session_store import session_store_path
from hive_core.sessions import BackendSession
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import last_backend_session
from hive_protocol import Question
from hive_protocol import QuestionOption
from hive_protocol import QuestionRequestEvent
from hive_protocol import verify


@pytest.fixture
def cli(ws: Workspace) -> FakeCli:
    """A fake ``gemini`` on the workspace's ``PATH`` (and nothing else hive could start)."""
    return FakeCli.install(ws, "gemini")


def _one_line_error(result: Any) -> str:
    assert result.code == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result
    assert lines[0].startswith("hive: "), result
    return lines[0]


def _backend_session(ws: Workspace, session_id: str) -> BackendSession | None:
    with SqliteSessionStore(session_store_path(ws.env)) as store:
        return last_backend_session(store.entries(session_id))


def test_an_unknown_name_lists_the_backends_and_their_aliases(ws: Workspace, cli: FakeCli) -> None:
    line = _one_line_error(ws.run("-p", "hi", "--agent", "nosuch"))
    assert "nosuch" in line
    for name in ("hive", "gemini", "copilot", "claude-code", "claudecode"):
        assert name in line
    assert ws.sessions() == []


def test_a_missing_cli_names_its_install_command(ws: Workspace, cli: FakeCli) -> None:
    line = _one_line_error(ws.run("-p", "hi", "--agent", "Copilot"))
    assert "copilot" in line
    assert "not installed" in line
    assert "npm install" in line
    assert ws.sessions() == []  # no empty session left behind
    scripted = ws.run("run", "-o", "json", "-p", "hi", "--agent", "copilot")
    assert scripted.code == 1, scripted
    assert "npm install" in scripted.document()["error"]


def test_a_cli_that_needs_a_login_cannot_run_against_an_endpoint(ws: Workspace, cli: FakeCli) -> None:
    line = _one_line_error(
        ws.run("-p", "hi", "--agent", "qoder", "--model-endpoint", "http://127.0.0.1:9/v1")
    )
    assert "cannot run against --model-endpoint" in line
    assert "Qoder account" in line


def test_one_shot_prints_the_cli_text_and_records_the_session(ws: Workspace, cli: FakeCli) -> None:
    result = ws.run("-p", "hello", "--agent", "gemini-cli", env=cli.env("cli-hello"))
    assert result.code == 0, result
    assert "Hello from the fake CLI" in result.stdout
    assert cli.methods()[:4] == ["initialize", "session/new", "session/set_mode", "session/prompt"]
    [session] = ws.sessions()
    assert session["message_count"] == 2
    assert _backend_session(ws, session["id"]) == BackendSession(backend="gemini", session_id="sess_cli_1")

    # -c continues with the backend it was recorded with, resuming the CLI's own session.
    again = ws.run("-p", "again", "-c", "-o", "json", env=cli.env("cli-resume"))
    assert again.code == 0, again
    document = again.document()
    assert document["session_id"] == session["id"]
    assert "Welcome back" in str(document)
    assert "REPLAYED HISTORY" not in again.stdout  # what session/load replays is not this turn's output
    [load] = [m for m in cli.log() if m.get("method") == "session/load"]
    assert load["params"]["sessionId"] == "sess_cli_1"
    [prompt] = [m for m in cli.log() if m.get("method") == "session/prompt"]
    assert prompt["params"]["sessionId"] == "sess_cli_1"
    [session] = ws.sessions()
    assert session["message_count"] == 4


def test_resuming_with_another_backend_is_a_clear_error(ws: Workspace, cli: FakeCli) -> None:
    first = ws.run("run", "-o", "json", "-p", "hello", "--agent", "gemini", env=cli.env("cli-hello"))
    assert first.code == 0, first
    assert "Hello from the fake CLI" in str(first.document())
    [session] = ws.sessions()
    line = _one_line_error(ws.run("-p", "more", "-r", session["id"], "--agent", "hive"))
    assert "gemini" in line
    assert session["id"] in line
    assert len(ws.sessions()) == 1


def test_fork_copies_the_cli_session_and_leaves_the_original(ws: Workspace, cli: FakeCli) -> None:
    assert ws.run("-p", "hello", "--agent", "gemini", env=cli.env("cli-hello")).code == 0
    [original] = ws.sessions()
    forked = ws.run(
        "-p", "in the copy", "-r", original["id"], "--fork", "-o", "json", env=cli.env("cli-fork")
    )
    assert forked.code == 0, forked
    document = forked.document()
    assert "Forked session here" in document["content"]
    assert document["session_id"] != original["id"]
    [fork] = [m for m in cli.log() if m.get("method") == "session/fork"]
    assert fork["params"]["sessionId"] == "sess_cli_1"
    assert _backend_session(ws, document["session_id"]) == BackendSession(
        backend="gemini", session_id="sess_cli_fork"
    )
    assert _backend_session(ws, original["id"]) == BackendSession(backend="gemini", session_id="sess_cli_1")


def test_forking_with_a_cli_that_cannot_copy_is_a_clear_error_and_leaves_no_session(
    ws: Workspace, cli: FakeCli
) -> None:
    assert ws.run("-p", "hello", "--agent", "gemini", env=cli.env("cli-hello")).code == 0
    [original] = ws.sessions()
    result = ws.run("-p", "more", "-r", original["id"], "--fork", env=cli.env("cli-no-fork"))
    assert result.code == 1, result
    assert "gemini cannot fork session sess_cli_1: it does not offer session/fork" in result.stderr
    assert [m.get("method") for m in cli.log() if "method" in m] == ["initialize"]
    assert [s["id"] for s in ws.sessions()] == [original["id"]]


def test_jsonl_streams_the_cli_turn(ws: Workspace, cli: FakeCli) -> None:
    result = ws.run("-p", "hello", "--agent", "gemini", "-o", "jsonl", env=cli.env("cli-hello"))
    assert result.code == 0, result
    records = result.records()
    assert records[0]["type"] == "start"
    assert records[-1]["type"] == "done"
    assert "".join(r["content"] for r in records if r["type"] == "text") == "Hello from the fake CLI"


def test_agent_mode_sets_the_cli_mode(ws: Workspace, cli: FakeCli) -> None:
    result = ws.run("-p", "hello", "--agent", "gemini", "--agent-mode", "yolo", env=cli.env("cli-hello"))
    # The transcript expects the asking mode: the fake agent logs what it got, which is what is checked.
    [mode] = [m for m in cli.log() if m.get("method") == "session/set_mode"]
    assert mode["params"]["modeId"] == "yolo", result


@pytest.mark.parametrize("approved", [True, False])
def test_the_server_asks_the_cli_permission_on_the_wire(ws: Workspace, cli: FakeCli, approved: bool) -> None:
    scenario = "cli-permission-approve" if approved else "cli-permission-reject"
    with ws.start("run", "--server", "--agent", "gemini", env=cli.env(scenario)) as proc:
        started = proc.next_event()
        assert started["type"] == "session_started"
        proc.send({"type": "user_message", "content": "make a file"})
        head = proc.events_until("hitl_request")
        request = head[-1]
        assert [e["type"] for e in head] == ["tool_start", "hitl_request"]
        assert (request["tool_name"], request["arguments"]) == (
            "execute_command",
            {"command": "touch made.txt"},
        )
        assert request["call_id"] == head[0]["call_id"]
        proc.send({"type": "hitl_response", "id": request["id"], "approved": approved})
        tail = proc.events_until("turn_end")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
    assert verify([line.encode() for line in proc.stdout.splitlines(keepends=True)], turns=1) == []
    [answer] = [m for m in cli.log() if m.get("id") == "perm-1"]
    assert answer["result"]["outcome"] == {
        "outcome": "selected",
        "optionId": "opt-allow" if approved else "opt-reject",
    }
    [end] = [e for e in tail if e["type"] == "tool_end"]
    assert end["success"] is approved
    assert tail[-1]["stop_reason"] == "completed"
    assert (tail[-1]["input_tokens"], tail[-1]["output_tokens"]) == (20, 6)
    assert _backend_session(ws, started["session_id"]) == BackendSession(
        backend="gemini", session_id="sess_perm_1"
    )


def test_the_server_resumes_the_cli_session_of_a_session_id(ws: Workspace, cli: FakeCli) -> None:
    first = ws.run("-p", "hello", "--agent", "gemini", env=cli.env("cli-hello"))
    assert first.code == 0, first
    [session] = ws.sessions()
    with ws.start("run", "--server", "--session-id", session["id"], env=cli.env("cli-resume")) as proc:
        assert proc.next_event()["session_id"] == session["id"]
        proc.send({"type": "user_message", "content": "again"})
        events = proc.events_until("turn_end")
        proc.close_stdin()
        assert proc.wait() == 0, proc.stderr
    assert "".join(e.get("content", "") for e in events if e["type"] == "text_delta") == "Welcome back"
    [load] = [m for m in cli.log() if m.get("method") == "session/load"]
    assert load["params"]["sessionId"] == "sess_cli_1"


def test_agent_options_need_an_agent(ws: Workspace) -> None:
    result = ws.run("-p", "hi", "--agent-mode", "yolo")
    assert result.code == 2, result
    assert "--agent" in result.stderr, result


def test_a_cli_that_cannot_run_offline_refuses_an_endpoint(ws: Workspace) -> None:
    FakeCli.install(ws, "qodercli")
    line = _one_line_error(
        ws.run("-p", "hi", "--agent", "qoder", "--model-endpoint", "http://127.0.0.1:9/v1")
    )
    assert "model-endpoint" in line


def test_interactive_mode_asks_at_the_terminal_and_shows_the_pool(ws: Workspace, cli: FakeCli) -> None:
    ws.env.update(cli.env("cli-permission-approve"))
    with ws.prompt("--agent", "gemini", shows=["agent gemini"]) as term:
        term.approval("make a file", "approval needed: execute_command", "command: touch made.txt")
        term.expect("Created made.txt")
        term.expect("> ")
        term.enter("/agents", "agent: gemini", "1 misses")
        term.type("\x04")
        assert term.wait() == 0
    [answer] = [m for m in cli.log() if m.get("id") == "perm-1"]
    assert answer["result"]["outcome"]["optionId"] == "opt-allow"


def _question(*, multi: bool = False, free: bool = False) -> QuestionRequestEvent:
    return QuestionRequestEvent(
        id="q1",
        questions=[
            Question(
                question="Which database?",
                header="Storage",
                multi_select=multi,
                options=[
                    QuestionOption(label="SQLite", description="a file"),
                    QuestionOption(label="PostgreSQL"),
                ],
                allow_free_text=free,
            )
        ],
    )


@pytest.mark.parametrize(
    ("typed", "multi", "free", "answers"),
    [
        ("2\n", False, False, {"Which database?": ["PostgreSQL"]}),
        ("3\nsqlite\n", False, False, {"Which database?": ["SQLite"]}),
        ("1,2\n1\n", False, False, {"Which database?": ["SQLite"]}),
        ("2 1\n", True, False, {"Which database?": ["PostgreSQL", "SQLite"]}),
        ("DuckDB\n", False, True, {"Which database?": ["DuckDB"]}),
        ("\n", False, True, None),
        ("", False, False, None),
    ],
)
def test_the_terminal_questioner_numbers_the_options(
    typed: str, multi: bool, free: bool, answers: dict[str, list[str]] | None
) -> None:
    shown = io.StringIO()
    questioner = TerminalQuestioner(stdin=io.StringIO(typed), stderr=shown, interactive=True)
    assert anyio.run(questioner.ask, _question(multi=multi, free=free)) == answers
    assert "question: Storage" in shown.getvalue()
    assert "1. SQLite - a file" in shown.getvalue()
    assert "2. PostgreSQL" in shown.getvalue()


def test_without_a_terminal_questions_are_declined() -> None:
    shown = io.StringIO()
    questioner = TerminalQuestioner(stdin=io.StringIO("1\n"), stderr=shown, interactive=False)
    assert anyio.run(questioner.ask, _question()) is None
    assert shown.getvalue() == ""


def test_a_model_endpoint_runs_the_cli_in_a_private_home(ws: Workspace, cli: FakeCli) -> None:
    result = ws.run(
        "-p",
        "hello",
        "--agent",
        "gemini",
        "--model-endpoint",
        "http://127.0.0.1:9/v1",
        "-m",
        "m1",
        env=cli.env("cli-hello"),
    )
    assert result.code == 0, result
    assert "Hello from the fake CLI" in result.stdout
    environment = cli.environment()
    home = environment["HOME"]
    assert home.startswith(str(ws.home / "agents" / "gemini")), home
    written = "".join(path.read_text(encoding="utf-8") for path in Path(home).rglob("*") if path.is_file())
    assert "m1" in written  # the private configuration names the endpoint's model
    assert any("127.0.0.1:9" in value for value in environment.values()) or "127.0.0.1:9" in written
    [session] = ws.sessions()
    assert session["model"] == "m1"

    line = _one_line_error(ws.run("-p", "hi", "--agent", "gemini", "--model-endpoint", "ftp://nowhere"))
    assert "http" in line


PROVIDER_TRANSCRIPTS = Path(__file__).parents[2] / "hive-providers" / "tests" / "acp_transcripts"


def test_the_server_asks_the_cli_question_on_the_wire(ws: Workspace) -> None:
    """A Reasonix question (a permission request hive recognises as one) becomes a question_request, and the
    question_response answers it: the CLI gets the option of the chosen label."""
    cli = FakeCli.install(ws, "reasonix")
    env = cli.env("cli-hello")
    env["HIVE_TEST_TRANSCRIPT"] = str(PROVIDER_TRANSCRIPTS / "quirk-reasonix-ask-question.jsonl")
    with ws.start("run", "--server", "--agent", "reasonix", env=env) as proc:
        assert proc.next_event()["type"] == "session_started"
        proc.send({"type": "user_message", "content": "ASKME which database should I use?"})
        asked = proc.events_until("question_request")[-1]
        [question] = asked["questions"]
        assert question["question"] == "Which database?"
        labels = [option["label"] for option in question["options"]]
        assert "SQLite" in labels
        proc.send({"type": "question_response", "id": asked["id"], "answers": {"Which database?": "SQLite"}})
        events = proc.events_until("turn_end")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
    assert verify([line.encode() for line in proc.stdout.splitlines(keepends=True)], turns=1) == []
    assert "MOCK_REPLY done" in "".join(e.get("content", "") for e in events if e["type"] == "text_delta")
    [answer] = [m for m in cli.log() if "result" in m and "outcome" in m["result"]]
    assert answer["result"]["outcome"] == {
        "outcome": "selected",
        "optionId": f"q1:{labels.index('SQLite') + 1}",
    }
