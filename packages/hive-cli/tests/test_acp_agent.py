"""``hive acp`` driven as a subprocess by the ``agent-client-protocol`` package's client side, against the scripted
model server: streamed text, permissions answered once / always / rejected, edits as diffs, modes, a cancel
mid-tool, ``session/load`` of an earlier session, a client MCP server used as a tool, and bad requests."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from typing import cast

import anyio
import pytest
from acp import RequestError
from acp.schema import ElicitationFormSessionMode
from acp.schema import ElicitationMultiSelectPropertySchema
from acp.schema import ElicitationStringPropertySchema
from acp.schema import HttpMcpServer
from acp.schema import TerminalToolCallContent
from acp.schema import TextContentBlock
from acp.schema import TitledMultiSelectItems
from acp.schema import ToolCallProgress
from acp_client_harness import RecordingClient
from acp_client_harness import hive_acp
from agent_cli_harness import ASK_TRANSCRIPT
from agent_cli_harness import FakeCli
from cli_harness import TIMEOUT
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts
from msgspec.structs import replace

from hive_cli.acp_agent.agent import PromptBlock
from hive_cli.acp_agent.agent import _form_answer  # pyright: ignore[reportPrivateUsage]
from hive_cli.acp_agent.agent import _question_field  # pyright: ignore[reportPrivateUsage]
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.tool_server import FixtureToolServer
from hive_protocol import Question
from hive_protocol import QuestionOption

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ASK_EDITS = """\
permissions:
  read:
    - pattern: "**/*"
      action: allow
  edit:
    - pattern: "**/*"
      action: ask
  default_action: ask
  inherit: false
"""
"""Reads run; every edit is asked about."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the acp package is built on asyncio


def say(words: str) -> list[PromptBlock]:
    return [TextContentBlock(type="text", text=words)]


async def test_initialize_states_what_hive_offers(ws: Workspace) -> None:
    async with hive_acp(ws) as (conn, _):
        answer = await conn.initialize(protocol_version=1)
    capabilities = answer.agent_capabilities
    assert capabilities is not None
    assert capabilities.load_session is True
    assert capabilities.prompt_capabilities is not None
    assert capabilities.prompt_capabilities.embedded_context is True
    assert capabilities.prompt_capabilities.image is False
    assert capabilities.mcp_capabilities is not None
    assert capabilities.mcp_capabilities.http is True
    assert capabilities.mcp_capabilities.sse is False
    assert answer.agent_info is not None
    assert answer.agent_info.name == "hive"


async def test_a_prompt_streams_text_and_ends_with_usage(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Hel", "lo ", "there", usage=(12, 3)))
    async with hive_acp(ws.use(server)) as (conn, client):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        assert session.modes is not None
        assert [mode.id for mode in session.modes.available_modes] == ["default", "accept_edits", "plan"]
        done = await conn.prompt(session_id=session.session_id, prompt=say("Greet me"))
    assert done.stop_reason == "end_turn"
    assert done.usage is not None
    assert (done.usage.input_tokens, done.usage.output_tokens) == (12, 3)
    # Chunks that wait while an update is written go out merged in the next one: the text is whole, in order.
    assert client.text() == "Hello there"
    assert "Greet me" in user_texts(model_requests(server)[0])[-1]


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_an_asked_edit_is_shown_as_a_diff_and_runs_as_answered(
    ws: Workspace, server: ScriptedModelServer, answer: str
) -> None:
    (ws.project / "notes.txt").write_text("old line\n", encoding="utf-8")
    server.add(calls(("c1", "edit_file", {"path": "notes.txt", "old_text": "old", "new_text": "new"})))
    server.add(text("Done."))
    ws.permissions(ASK_EDITS)
    async with hive_acp(ws.use(server), client=RecordingClient(answers=[answer])) as (conn, client):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=say("Edit the notes"))
    assert done.stop_reason == "end_turn"
    [asked] = client.asked
    assert asked.tool_call.kind == "edit"
    assert {option.kind for option in asked.options} == {
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    }
    [diff] = asked.tool_call.content or []
    assert (diff.type, diff.old_text, diff.new_text) == ("diff", "old line\n", "new line\n")
    assert diff.path == str(ws.project / "notes.txt")
    [started] = client.of("tool_call")
    assert started.kind == "edit"
    assert started.locations[0].path == str(ws.project / "notes.txt")
    [ended] = client.of("tool_call_update")
    written = (ws.project / "notes.txt").read_text(encoding="utf-8")
    if answer == "allow_once":
        assert ended.status == "completed"
        assert written == "new line\n"
    else:
        assert ended.status == "failed"
        assert written == "old line\n"


async def test_allow_always_is_kept_for_the_session_and_reject_always_refuses_unasked(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "b.txt").write_text("keep", encoding="utf-8")
    for number, content in enumerate(("one", "two")):
        server.add(calls((f"w{number}", "write_file", {"path": "a.txt", "content": content})))
        server.add(text("ok"))
    for number in range(2):
        server.add(calls((f"d{number}", "delete_file", {"path": "b.txt"})))
        server.add(text("ok"))
    ws.permissions(ASK_EDITS)
    client = RecordingClient(answers=["allow_always", "reject_always"])
    async with hive_acp(ws.use(server), client=client) as (conn, _):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        for words in ("write one", "write two", "delete", "delete again"):
            await conn.prompt(session_id=session.session_id, prompt=say(words))
    assert [asked.tool_call.title for asked in client.asked] == ["write_file: a.txt", "delete_file: b.txt"]
    assert (ws.project / "a.txt").read_text(encoding="utf-8") == "two"  # allowed always: not asked again
    assert (ws.project / "b.txt").read_text(encoding="utf-8") == "keep"  # rejected always: refused unasked
    statuses = [update.status for update in client.of("tool_call_update")]
    assert statuses == ["completed", "completed", "failed", "failed"]


async def test_modes_accept_edits_and_plan(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(calls(("w1", "write_file", {"path": "one.txt", "content": "1"})))
    server.add(text("written"))
    server.add(calls(("w2", "write_file", {"path": "two.txt", "content": "2"})))
    server.add(text("planned"))
    ws.permissions(ASK_EDITS)
    async with hive_acp(ws.use(server)) as (conn, client):  # no answers: any permission request fails
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="accept_edits")
        await conn.prompt(session_id=session.session_id, prompt=say("write one"))
        await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        await conn.prompt(session_id=session.session_id, prompt=say("write two"))
        with pytest.raises(RequestError) as unknown:
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
    assert unknown.value.code == -32602
    assert (ws.project / "one.txt").read_text(encoding="utf-8") == "1"
    assert not (ws.project / "two.txt").exists()  # planning mode: only read-only tools run
    assert [u.current_mode_id for u in client.of("current_mode_update")] == ["accept_edits", "plan"]
    assert [u.status for u in client.of("tool_call_update")] == ["completed", "failed"]
    assert client.asked == []


@pytest.mark.parametrize("terminal", [False, True], ids=["hive-runs-it", "in-the-clients-terminal"])
async def test_cancel_mid_tool_ends_the_turn_and_leaves_no_process(
    ws: Workspace, server: ScriptedModelServer, terminal: bool
) -> None:
    """A cancel mid-command ends the turn and the command, whether hive runs it or the client's terminal does
    (then killed and released)."""
    marker = "27.1828" if terminal else "31.4159"
    server.add(calls(("s1", "execute_command", {"command": f"sleep {marker}"})))
    ws.allow_all().sandbox_off()
    async with hive_acp(ws.use(server), terminal=terminal) as (conn, client):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        outcome: list[str] = []
        async with anyio.create_task_group() as group:

            async def turn() -> None:
                done = await conn.prompt(session_id=session.session_id, prompt=say("sleep"))
                outcome.append(done.stop_reason)

            group.start_soon(turn)
            await client.until(lambda: _sleeping(marker), "the command to run")
            await conn.cancel(session_id=session.session_id)
        assert outcome == ["cancelled"]
        assert not _sleeping(marker)
        [ended] = [u for u in client.of("tool_call_update") if u.status is not None]
        assert ended.status == "failed"
        methods = [method for method, _ in client.terminal_calls]
        if terminal:
            assert len(client.terminals) == 1
            assert methods[-2:] == ["kill", "release"]  # waiting for the exit, if it got that far, came first
            assert set(methods) <= {"wait_for_exit", "kill", "release"}
        else:
            assert client.terminals == {}


def _sleeping(marker: str) -> bool:
    """Whether a process runs ``sleep <marker>``."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if command.split(b"\0")[:2] == [b"sleep", marker.encode()]:
                return True
    return False


async def test_load_replays_an_earlier_session(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "a.txt").write_text("alpha", encoding="utf-8")
    server.add(calls(("r1", "read_file", {"path": "a.txt"}), say="Reading."))
    server.add(text("It says alpha."))
    ws.allow_all()
    async with hive_acp(ws.use(server)) as (conn, _):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=say("What does a.txt say?"))
    async with hive_acp(ws) as (conn, client):
        listed = await conn.list_sessions(cwd=str(ws.project))
        assert session.session_id in [info.session_id for info in listed.sessions]
        await conn.load_session(cwd=str(ws.project), session_id=session.session_id, mcp_servers=[])
        kinds = [update.session_update for _, update in client.updates]
        assert kinds == [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk",
        ]
        assert "What does a.txt say?" in client.of("user_message_chunk")[0].content.text
        assert client.text() == "Reading.It says alpha."
        assert client.of("tool_call_update")[0].raw_output == "alpha"
        with pytest.raises(RequestError) as missing:
            await conn.load_session(cwd=str(ws.project), session_id="no-such-session", mcp_servers=[])
        assert missing.value.code == -32602


async def test_a_client_mcp_server_is_a_tool_of_the_session(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(calls(("m1", "mcp__tools__echo", {"text": "ping"})))
    server.add(text("echoed"))
    ws.allow_all()
    with FixtureToolServer(ws.root) as tools:
        async with hive_acp(ws.use(server)) as (conn, client):
            mcp = HttpMcpServer(type="http", name="tools", url=tools.url, headers=[])
            session = await conn.new_session(cwd=str(ws.project), mcp_servers=[mcp])
            await conn.prompt(session_id=session.session_id, prompt=say("echo ping"))
    offered = {tool["name"] for tool in model_requests(server)[0].body["tools"]}
    assert "mcp__tools__echo" in offered
    [ended] = client.of("tool_call_update")
    assert ended.status == "completed"
    assert "ping" in (ended.raw_output or "")


async def test_bad_requests_get_json_rpc_errors(ws: Workspace) -> None:
    async with hive_acp(ws) as (conn, _):
        with pytest.raises(RequestError) as unknown_method:
            await conn._conn.send_request("session/teleport", {"sessionId": "x"})  # pyright: ignore[reportPrivateUsage]
        with pytest.raises(RequestError) as unknown_session:
            await conn.prompt(session_id="nobody", prompt=say("hello"))
        with pytest.raises(RequestError) as relative:
            await conn.new_session(cwd="project", mcp_servers=[])
    assert unknown_method.value.code == -32601
    assert unknown_session.value.code == -32602
    assert "nobody" in str(unknown_session.value.data)
    assert relative.value.code == -32602


async def test_an_agent_that_is_not_installed_is_named_with_its_install_hint(ws: Workspace) -> None:
    ws.env["PATH"] = os.pathsep.join(["/usr/bin", "/bin"])
    async with hive_acp(ws, "--agent", "gemini") as (conn, _):
        with anyio.fail_after(TIMEOUT), pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(ws.project), mcp_servers=[])
    message = str(refused.value)
    assert "gemini" in message
    assert "install it with" in message


async def test_a_clis_question_is_a_choice_of_the_client(ws: Workspace) -> None:
    """A question of the CLI (a recording of Reasonix asking one) reaches the client as a permission-shaped
    choice, one option per answer; the picked one goes back to the CLI."""
    cli = FakeCli.install(ws, "reasonix")
    ws.env.update(cli.env("cli-hello"), HIVE_TEST_TRANSCRIPT=str(ASK_TRANSCRIPT))
    client = RecordingClient(answers=["answer-0"])
    async with hive_acp(ws, "--agent", "reasonix", client=client) as (conn, _):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=say("ASKME which database?"))
    assert done.stop_reason == "end_turn"
    [asked] = client.asked
    assert asked.tool_call.title == "Which database?"
    kinds = [option.kind for option in asked.options]
    assert kinds[-1] == "reject_once"  # decline: asked, never assumed
    assert len(kinds) >= 3
    assert set(kinds[:-1]) == {"allow_once"}  # one option per answer
    [chosen] = [m for m in cli.log() if "result" in m and "outcome" in m["result"]]
    assert chosen["result"]["outcome"]["outcome"] == "selected"


@pytest.mark.parametrize("answer", ["SQLite", "decline", "cancel"])
async def test_a_clis_question_is_a_form_when_the_client_offers_elicitation(
    ws: Workspace, answer: str
) -> None:
    """The same recorded question asked by form elicitation: one field, its choices titled by label; the answer
    picked goes back to the CLI, a declined or cancelled form declines the question (never a permission
    request)."""
    cli = FakeCli.install(ws, "reasonix")
    ws.env.update(cli.env("cli-hello"), HIVE_TEST_TRANSCRIPT=str(ASK_TRANSCRIPT))
    form: dict[str, Any] | str = {"q0": answer} if answer == "SQLite" else answer
    client = RecordingClient(forms=[form])
    async with hive_acp(ws, "--agent", "reasonix", client=client, forms=True) as (conn, _):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=say("ASKME which database?"))
    assert client.asked == []
    [(message, mode)] = client.elicited
    assert message == "Which database?"
    assert isinstance(mode, ElicitationFormSessionMode)
    assert mode.session_id == session.session_id
    assert mode.requested_schema.required == ["q0"]
    field = (mode.requested_schema.properties or {})["q0"]
    assert isinstance(field, ElicitationStringPropertySchema)
    assert [choice.const for choice in field.one_of or []] == ["Postgres", "SQLite"]
    [replied] = [m for m in cli.log() if "result" in m and "outcome" in m["result"]]
    chosen = "q1:2" if answer == "SQLite" else "q1:cancel"  # declined: Reasonix's own cancel option
    assert replied["result"]["outcome"] == {"outcome": "selected", "optionId": chosen}


def test_a_multi_select_question_is_a_form_field_keeping_every_answer() -> None:
    """A multi-select question is an array field of its labels; all the picked answers are kept, an answer
    outside the choices (or none) declines."""
    question = Question(
        question="Which checks?",
        header="Checks",
        multi_select=True,
        options=[QuestionOption(label="lint"), QuestionOption(label="types"), QuestionOption(label="tests")],
        allow_free_text=False,
    )
    field = _question_field(question)
    assert isinstance(field, ElicitationMultiSelectPropertySchema)
    assert isinstance(field.items, TitledMultiSelectItems)
    assert [choice.const for choice in field.items.any_of] == ["lint", "types", "tests"]
    assert _form_answer(question, ["lint", "tests"]) == ["lint", "tests"]
    assert _form_answer(question, ["lint", "deploy"]) is None
    assert _form_answer(question, []) is None
    single = replace(question, multi_select=False)
    assert _form_answer(single, "types") == ["types"]
    assert _form_answer(single, ["lint", "types"]) is None
    free = replace(question, allow_free_text=True, multi_select=False)
    assert isinstance(_question_field(free), ElicitationStringPropertySchema)
    assert _form_answer(free, "ruff and mypy") == "ruff and mypy"
    assert _form_answer(free, " ") is None


async def test_resume_fork_close_and_the_model_option(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("first"))
    server.add(text("in the fork"))
    server.add(text("resumed"))
    async with hive_acp(ws.use(server)) as (conn, _):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=say("one"))
        await conn.close_session(session_id=session.session_id)
        with pytest.raises(RequestError) as closed:
            await conn.prompt(session_id=session.session_id, prompt=say("after close"))
        assert closed.value.code == -32602
        fork = await conn.fork_session(session_id=session.session_id, cwd=str(ws.project), mcp_servers=[])
        assert fork.session_id != session.session_id
        chosen = await conn.set_config_option(
            config_id="model", session_id=fork.session_id, value="other-model"
        )
        assert [option.current_value for option in chosen.config_options] == ["other-model"]
        await conn.prompt(session_id=fork.session_id, prompt=say("two"))
        with pytest.raises(RequestError) as unknown_option:
            await conn.set_config_option(config_id="temperature", session_id=fork.session_id, value="hot")
        assert unknown_option.value.code == -32602
    async with hive_acp(ws) as (conn, client):
        await conn.resume_session(session_id=session.session_id, cwd=str(ws.project), mcp_servers=[])
        assert client.updates == []  # resume replays nothing
        await conn.prompt(session_id=session.session_id, prompt=say("three"))
    _, forked, resumed = model_requests(server)
    assert forked.body["model"] == "other-model"
    assert resumed.body["model"] == "scripted"
    assert "one" in user_texts(forked)[0]  # the fork holds the original's conversation
    assert "one" in user_texts(resumed)[0]
    assert "two" not in " ".join(user_texts(resumed))  # and the original does not hold the fork's


SECRET_DENIED = """\
permissions:
  read:
    - pattern: "secret.txt"
      action: deny
    - pattern: "**/*"
      action: allow
  edit:
    - pattern: "secret.txt"
      action: deny
    - pattern: "**/*"
      action: allow
  inherit: false
"""
"""Everything may be read and edited but ``secret.txt``."""


def with_a_secret(ws: Workspace, text: str) -> None:
    """``a.txt`` holding ``text``, ``secret.txt`` (which :data:`SECRET_DENIED` denies) and ``link.txt`` to it."""
    (ws.project / "a.txt").write_text(text, encoding="utf-8")
    (ws.project / "secret.txt").write_text("s3cret", encoding="utf-8")
    (ws.project / "link.txt").symlink_to(ws.project / "secret.txt")
    ws.permissions(SECRET_DENIED)


async def test_the_clients_fs_serves_reads_and_writes_under_the_same_rules(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with_a_secret(ws, "alpha")
    server.add(
        calls(
            ("r1", "read_file", {"path": "a.txt"}),
            ("r2", "read_file", {"path": "link.txt"}),
            ("w1", "write_file", {"path": "b.txt", "content": "beta"}),
        )
    )
    server.add(text("done"))
    async with hive_acp(ws.use(server), fs=True) as (conn, client):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=say("read and write"))
    project = ws.project.resolve()
    # The link to the denied file is never read; b.txt is asked for once, for the write's diff (it does not exist).
    assert client.reads == [str(project / "a.txt"), str(project / "b.txt")]
    assert client.writes == [(str(project / "b.txt"), "beta")]
    outcomes = {u.tool_call_id: (u.status, u.raw_output) for u in client.of("tool_call_update")}
    assert outcomes["r1"] == ("completed", "alpha")
    assert outcomes["r2"][0] == "failed"
    assert "secret.txt" in outcomes["r2"][1]
    assert outcomes["w1"][0] == "completed"
    assert (ws.project / "b.txt").read_text(encoding="utf-8") == "beta"


async def test_an_edit_is_made_on_the_editors_unsaved_buffer_and_written_through_the_client(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with_a_secret(ws, "alpha\nbeta\n")
    server.add(
        calls(
            ("e1", "edit_file", {"path": "a.txt", "old_text": "unsaved", "new_text": "edited"}),
            ("e2", "edit_file", {"path": "link.txt", "old_text": "s3cret", "new_text": "leaked"}),
        )
    )
    server.add(calls(("w1", "write_file", {"path": "a.txt", "content": "tail\n", "append": True})))
    server.add(text("done"))
    project = ws.project.resolve()
    buffered = str(project / "a.txt")
    client = RecordingClient(buffers={buffered: "alpha\nbeta\nunsaved line\n"})
    async with hive_acp(ws.use(server), client=client, fs=True) as (conn, _):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=say("edit it"))
    outcomes = {u.tool_call_id: (u.status, u.raw_output) for u in client.of("tool_call_update")}
    assert outcomes["e1"][0] == "completed", outcomes
    assert "through the editor" in outcomes["e1"][1]
    # The text only the editor's buffer held was found and edited; the write went to the editor, not the disk.
    assert client.writes == [
        (buffered, "alpha\nbeta\nedited line\n"),
        (buffered, "alpha\nbeta\nedited line\ntail\n"),
    ]
    assert client.buffers[buffered] == "alpha\nbeta\nedited line\ntail\n"
    # The edit is shown to the editor as a diff against its buffer, not against the file on disk.
    [start] = [u for u in client.of("tool_call") if u.tool_call_id == "e1"]
    [diff] = start.content
    assert (diff.path, diff.old_text, diff.new_text) == (
        buffered,
        "alpha\nbeta\nunsaved line\n",
        "alpha\nbeta\nedited line\n",
    )
    assert (ws.project / "a.txt").read_text(encoding="utf-8") == "alpha\nbeta\n"
    # The same rules: the link to a file edits may not touch is refused before the editor is asked for it.
    assert outcomes["e2"][0] == "failed"
    assert "secret.txt" in outcomes["e2"][1]
    assert str(project / "secret.txt") not in client.reads
    assert (ws.project / "secret.txt").read_text(encoding="utf-8") == "s3cret"


WORKSPACE_WRITE = 'sandbox:\n  mode: "workspace-write"\n'


async def test_a_command_runs_in_the_clients_terminal_when_the_sandbox_is_off(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(calls(("x1", "execute_command", {"command": "echo from-the-editor; echo oops >&2; exit 3"})))
    server.add(text("ran"))
    ws.allow_all().sandbox_off()
    ws.env["HIVE_TEST_UNLISTED_SECRET"] = "do-not-pass"
    async with hive_acp(ws.use(server), terminal=True) as (conn, client):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=say("run it"))
    assert done.stop_reason == "end_turn"
    [(terminal_id, terminal)] = client.terminals.items()
    assert terminal.command[1:] == ["-c", "echo from-the-editor; echo oops >&2; exit 3"]
    assert terminal.command[0].endswith("sh")
    assert terminal.cwd == str(ws.project)
    assert "PATH" in terminal.env
    assert (
        "HIVE_TEST_UNLISTED_SECRET" not in terminal.env
    )  # hive's allow-list of variables, as in its own runs
    assert [method for method, _ in client.terminal_calls] == ["wait_for_exit", "output", "release"]
    shown = [
        content.terminal_id
        for update in cast("list[ToolCallProgress]", client.of("tool_call_update"))
        for content in update.content or []
        if isinstance(content, TerminalToolCallContent)
    ]
    assert shown == [terminal_id]
    [ended] = [u for u in client.of("tool_call_update") if u.status is not None]
    assert ended.status == "completed"
    assert ended.raw_output.splitlines()[0] == "Exit code: 3"
    assert "from-the-editor" in ended.raw_output
    assert "oops" in ended.raw_output
    assert "Exit code: 3" in str(model_requests(server)[1].body)


async def test_a_command_hives_sandbox_confines_is_not_sent_to_the_client(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    from hive_core.sandbox import SandboxSettings
    from hive_core.sandbox import sandbox_status

    if sandbox_status(SandboxSettings(mode="workspace-write")).confinement is None:
        pytest.skip("no sandbox runs on this machine")
    server.add(calls(("x1", "execute_command", {"command": "echo confined"})))
    server.add(text("ran"))
    ws.allow_all()
    (ws.project / ".hive" / "config.yaml").write_text(WORKSPACE_WRITE, encoding="utf-8")
    async with hive_acp(ws.use(server), terminal=True) as (conn, client):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=say("run it"))
    assert client.terminals == {}
    [ended] = [u for u in client.of("tool_call_update") if u.status is not None]
    assert ended.status == "completed"
    assert "confined" in ended.raw_output


async def test_a_command_past_its_timeout_is_killed_in_the_clients_terminal(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    marker = "29.5172"
    command = f"echo started; sleep {marker}"
    server.add(calls(("x1", "execute_command", {"command": command, "timeout_ms": 1000})))
    server.add(text("stopped"))
    ws.allow_all().sandbox_off()
    async with hive_acp(ws.use(server), terminal=True) as (conn, client):
        session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=say("run it"))
    assert [method for method, _ in client.terminal_calls] == ["wait_for_exit", "kill", "output", "release"]
    assert not _sleeping(marker)
    [ended] = [u for u in client.of("tool_call_update") if u.status is not None]
    assert ended.status == "failed"
    assert "still running after 1000 ms" in ended.raw_output
    assert "started" in ended.raw_output
