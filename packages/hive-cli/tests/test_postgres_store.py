"""Sessions on PostgreSQL through the command: ``--store`` and ``sessions.store`` choose the store, a session is
found by its project from another hive home, and a bad URL is one line without the password."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import psycopg
import pytest
from acp import RequestError
from acp.schema import TextContentBlock
from acp_client_harness import hive_acp
from cli_harness import Workspace
from cli_harness import assistant_texts
from cli_harness import text
from cli_harness import user_texts
from core_postgres import PostgresServer
from serve_harness import serving

from hive_conformance.model_server import ScriptedModelServer
from hive_core.sessions.postgres import SCHEMA_VERSION


def other_home(ws: Workspace, tmp_path: Path) -> Workspace:
    """A second hive home (another machine, say) working on the same project directory."""
    elsewhere = Workspace.create(tmp_path / "elsewhere")
    return Workspace(elsewhere.root, elsewhere.home, ws.project, elsewhere.env)


def test_a_session_run_with_store_is_listed_from_another_home(
    ws: Workspace, server: ScriptedModelServer, postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    server.add(text("Stored far away."))
    ran = ws.use(server).run("run", "--store", url, "-p", "remember this", "-o", "json")
    assert ran.code == 0, ran
    session_id = ran.line_document()["session_id"]
    assert not (ws.home / "sessions.db").exists()  # nothing went to the home's SQLite file

    second = other_home(ws, tmp_path)
    listed = second.run("sessions", "list", "--store", url, "-o", "json")
    assert listed.code == 0, listed
    [summary] = listed.line_document()
    assert summary["id"] == session_id
    assert summary["first_message"] == "remember this"
    assert summary["message_count"] == 2
    shown = second.run("sessions", "show", session_id[:8], "--store", url)
    assert shown.code == 0, shown
    assert "Stored far away." in shown.stdout
    # Without the store, the other home's own file has nothing.
    assert second.run("sessions", "list", "-o", "json").line_document() == []

    # The other home continues the session where the first left it: the model sees the whole conversation.
    server.add(text("Still here."))
    resumed = second.use(server).run("-p", "and now?", "-r", session_id, "--store", url, "-o", "json")
    assert resumed.code == 0, resumed
    assert resumed.line_document()["session_id"] == session_id
    assert user_texts(server.requests[-1]) == ["remember this", "and now?"]
    assert "Stored far away." in assistant_texts(server.requests[-1])
    listed = ws.run("sessions", "list", "--store", url, "-o", "json").line_document()
    assert [s["message_count"] for s in listed] == [4]


def test_sessions_store_in_the_config_is_used_and_its_password_never_shown(
    ws: Workspace, server: ScriptedModelServer, postgres: PostgresServer
) -> None:
    url = postgres.new_database().replace("hive@", "hive:pw-secret-1@")  # trust auth ignores the password
    (ws.home / "config.yaml").write_text(f"sessions:\n  store: {json.dumps(url)}\n", encoding="utf-8")
    server.add(text("Configured."))
    ran = ws.use(server).run("-p", "from the config", "-o", "json")
    assert ran.code == 0, ran
    listed = ws.run("sessions", "list", "-o", "json").line_document()
    assert [s["id"] for s in listed] == [ran.line_document()["session_id"]]
    assert not (ws.home / "sessions.db").exists()
    shown = ws.run("config", "show")
    assert shown.code == 0, shown
    assert "sessions.store" in shown.stdout
    assert "pw-secret-1" not in shown.stdout + shown.stderr


def test_an_unreachable_store_is_one_line_and_exit_1_without_the_password(
    ws: Workspace, server: ScriptedModelServer, postgres: PostgresServer
) -> None:
    url = postgres.url("nowhere", password="pw-secret-2").replace(f":{postgres.port}/", ":1/")
    for args in (("sessions", "list", "--store", url), ("run", "--store", url, "-p", "hello")):
        result = ws.use(server).run(*args)
        assert result.code == 1, result
        assert "pw-secret-2" not in result.stdout + result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert "127.0.0.1:1" in lines[0]
        assert "cannot be" in lines[0]
    assert server.requests == []  # no turn ran: nothing it said is lost


def test_a_store_url_of_another_kind_is_refused(ws: Workspace) -> None:
    result = ws.run("sessions", "list", "--store", "mysql://someone:pw-secret-3@127.0.0.1/db")
    assert result.code == 1, result
    assert "postgresql://" in result.stderr
    assert "pw-secret-3" not in result.stderr


def test_doctor_reports_the_store(ws: Workspace, postgres: PostgresServer) -> None:
    default = ws.run("doctor")
    assert (
        f"session store: SQLite file {ws.home / 'sessions.db'} (made by the first session)" in default.stdout
    )
    assert not (ws.home / "sessions.db").exists()
    url = postgres.new_database().replace("hive@", "hive:pw-secret-4@")
    reached = ws.run("doctor", "--store", url)
    masked = url.replace("hive:pw-secret-4@", "***@")
    assert (
        f"session store: PostgreSQL {masked}, reachable, schema version {SCHEMA_VERSION}" in reached.stdout
    ), reached
    unreachable = ws.run("doctor", "--store", url.replace(f":{postgres.port}/", ":1/"))
    assert unreachable.code == 1
    [line] = [line for line in unreachable.stdout.splitlines() if "session store:" in line]
    assert "cannot be reached" in line
    assert "pw-secret-4" not in reached.stdout + unreachable.stdout + unreachable.stderr


def test_an_untrusted_projects_store_is_ignored(ws: Workspace) -> None:
    # A project's files could send every transcript to someone else's database: only a trusted project may.
    ws.trusted = False
    (ws.project / ".hive" / "config.yaml").write_text(
        'sessions:\n  store: "postgresql://someone@127.0.0.1:1/theirs"\n', encoding="utf-8"
    )
    listed = ws.run("sessions", "list", "-o", "json")
    assert (listed.code, listed.stdout) == (0, "[]\n"), listed
    ws.trusted = True
    refused = ws.run("sessions", "list", "-o", "json")
    assert refused.code == 1
    assert "cannot be reached" in refused.stdout + refused.stderr


def test_hive_serve_with_store_keeps_its_sessions_there(
    ws: Workspace, server: ScriptedModelServer, postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    server.add(text("Served from afar."))
    with serving(ws.use(server), "--store", url) as served:
        session = served.open()
        events = served.turn(session, "over http")
        assert events[-1][1]["type"] == "turn_end"
    assert not (ws.home / "sessions.db").exists()
    listed = other_home(ws, tmp_path).run("sessions", "list", "--store", url, "-o", "json")
    assert listed.code == 0, listed
    assert [(s["id"], s["first_message"]) for s in listed.line_document()] == [(session, "over http")]
    logged = ws.run("logs", session, "--store", url, "-o", "json")
    assert logged.code == 0, logged
    kinds = [json.loads(line)["kind"] for line in logged.stdout.splitlines() if line.strip()]
    assert kinds == ["turn_start", "model_request", "turn_end"], logged.stdout


def test_logs_follow_on_another_home_prints_the_turn_another_process_runs(
    ws: Workspace, server: ScriptedModelServer, postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    ws.env["HIVE_SESSION_STORE"] = url  # what --store sets for the command
    server.add(text("First."), text("Second."))
    first = ws.use(server).run("-p", "one", "-o", "json")
    assert first.code == 0, first
    session = first.line_document()["session_id"]
    watcher = other_home(ws, tmp_path)
    with watcher.start("logs", session, "--follow", "--store", url, "-o", "json") as follow:
        before = [follow.next_event() for _ in range(3)]
        assert [r["kind"] for r in before] == ["turn_start", "model_request", "turn_end"]
        assert ws.run("-r", session, "-p", "two").code == 0  # another process, while the follower waits
        after = [follow.next_event() for _ in range(3)]
        follow.signal(signal.SIGINT)
        assert follow.wait() == 0, follow.stderr
    assert [r["kind"] for r in after] == ["turn_start", "model_request", "turn_end"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the acp package is built on asyncio
async def test_hive_acp_with_store_keeps_its_sessions_there_and_names_an_unreachable_one(
    ws: Workspace, server: ScriptedModelServer, postgres: PostgresServer, tmp_path: Path, anyio_backend: str
) -> None:
    url = postgres.new_database()
    server.add(text("Edited afar."))
    async with hive_acp(ws.use(server), "--store", url) as (conn, _):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        done = await conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text="from the editor")]
        )
        assert done.stop_reason == "end_turn"
    assert not (ws.home / "sessions.db").exists()
    listed = other_home(ws, tmp_path).run("sessions", "list", "--store", url, "-o", "json")
    assert [(s["id"], s["first_message"]) for s in listed.line_document()] == [
        (session.session_id, "from the editor")
    ]

    unreachable = postgres.url("nowhere", password="pw-secret-5").replace(f":{postgres.port}/", ":1/")
    async with hive_acp(ws, "--store", unreachable) as (conn, _):
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(ws.project), mcp_servers=[])
    said = f"{refused.value} {refused.value.data}"
    assert "pw-secret-5" not in said
    assert "127.0.0.1:1" in said
    assert "cannot be reached" in said


@pytest.mark.parametrize(
    "rule",
    [
        "ALTER TABLE sessions ADD CONSTRAINT house_rule CHECK (project_path = '')",  # the session is not made
        "ALTER TABLE entries ADD CONSTRAINT house_rule CHECK (kind <> 'turn_end')",  # its turn cannot end
    ],
    ids=["create", "mid-turn"],
)
def test_a_write_the_database_refuses_is_one_line_naming_the_store(
    ws: Workspace, server: ScriptedModelServer, postgres: PostgresServer, rule: str
) -> None:
    url = postgres.new_database()
    assert ws.run("sessions", "list", "--store", url).code == 0  # the schema is made
    with psycopg.connect(url) as conn:  # a rule of the database's owner that hive's writes break
        conn.execute(rule.encode())
    server.add(text("not kept"))
    result = ws.use(server).run("run", "--store", url, "-p", "hello")
    assert result.code == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "house_rule" in lines[0]
    assert "127.0.0.1" in lines[0]
