"""The real Codex CLI, offline, driven in process through :class:`CodexBackend` on ``codex app-server``, against
the scripted model server (Responses API, agent-CLI responder): a command ``touch`` that Codex asks about
(``approvalPolicy: untrusted``) runs when approved and not when rejected; a new backend resumes the thread
(``thread/resume``) and the model is sent the earlier turn; a cancel mid-text (``turn/interrupt``) and a cancel
while the approval waits end the turn ``cancelled`` with every tool closed, and the session goes on; no process
is left once the backend is closed. Every turn's events pass :func:`hive_protocol.verify`.

Skipped, saying why, when Codex is not installed (``.ci/agent-clis`` installs it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import pytest
from agent_clis_harness import DEFAULT_COMMAND
from agent_clis_harness import MODEL
from agent_clis_harness import SLOW_PROMPT
from agent_clis_harness import TOOL_FILE
from agent_clis_harness import TOOL_PROMPT
from agent_clis_harness import ModelServers
from agent_clis_harness import Project
from agent_clis_harness import assert_nothing_left
from agent_clis_harness import model_requests
from agent_clis_harness import request_text
from agent_clis_harness import require_cli
from agent_clis_harness import wait_until
from agent_clis_turns import Approvals
from agent_clis_turns import AskEverything
from agent_clis_turns import CancelLater
from agent_clis_turns import cancelled_at_first_text
from agent_clis_turns import checked
from agent_clis_turns import end_of
from agent_clis_turns import reply_text
from agent_clis_turns import the_call
from agent_clis_turns import turn_events

from hive_core.runners import SessionRunner
from hive_core.runners import collect_turn
from hive_protocol import Event
from hive_providers.backends.codex import CodexBackend
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import ModelEndpoint
from hive_providers.backends.registry import resolve_backend

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

WAIT: Final = 120.0
"""Seconds a turn may take before the test fails (a bound, not a synchronisation)."""
RESUME_PROMPT: Final = "hello again"


def backend(
    project: Project, server_url: str, approvals: Approvals, *, resume: str | None = None
) -> CodexBackend:
    options = BackendOptions(
        cwd=project.project,
        executable=str(require_cli("codex")),
        endpoint=ModelEndpoint(base_url=f"{server_url}/v1", model=MODEL),
        home=project.root / "home",
        resume=resume,
        policy=AskEverything(),
        approvals=approvals,
        startup_timeout=60.0,
        cancel_grace=3.0,
    )
    return CodexBackend(resolve_backend("codex"), options)


async def run(backend: CodexBackend, prompt: str) -> list[Event]:
    with anyio.fail_after(WAIT):
        return checked(await collect_turn(backend, prompt))


async def test_an_approved_command_runs_and_a_new_backend_resumes_the_thread(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    require_cli("codex")
    server = model_servers("codex")
    project = Project.create(tmp_path)
    approvals = Approvals(approve=True)
    first = backend(project, server.url, approvals)
    try:
        events = await run(first, TOOL_PROMPT)
        pid = first.connection.pid if first.connection is not None else None
    finally:
        await first.aclose()
    assert project.tool_ran, events
    start, end = the_call(events)
    assert (start.tool, start.input) == ("execute_command", {"command": DEFAULT_COMMAND})
    assert end.success is True
    [asked] = approvals.requests
    assert (asked.call_id, asked.tool_name, asked.arguments) == (
        start.call_id,
        "execute_command",
        {"command": DEFAULT_COMMAND},
    )
    turn_end = end_of(events)
    assert turn_end.stop_reason == "completed"
    assert turn_end.input_tokens, turn_end
    assert turn_end.output_tokens, turn_end
    assert "MOCK_REPLY done" in reply_text(events)
    thread = first.session_id
    assert thread, "no thread id after the turn"
    assert pid is not None
    assert_nothing_left(os.getpid())

    (project.project / TOOL_FILE).unlink()
    since = len(server.requests)
    second = backend(project, server.url, Approvals(approve=None), resume=thread)
    try:
        again = await run(second, RESUME_PROMPT)
    finally:
        await second.aclose()
    assert end_of(again).stop_reason == "completed", again
    assert second.session_id == thread
    assert second.notes == []
    assert "MOCK_REPLY ok" in reply_text(again)
    texts = [request_text(r) for r in model_requests(server, since)]
    assert any(RESUME_PROMPT in t and TOOL_PROMPT in t for t in texts), (
        "the resumed turn does not carry the first"
    )
    assert not project.tool_ran
    assert_nothing_left(os.getpid())


async def test_a_rejected_command_does_not_run(tmp_path: Path, model_servers: ModelServers) -> None:
    require_cli("codex")
    server = model_servers("codex")
    project = Project.create(tmp_path)
    approvals = Approvals(approve=False, reason="not this time")
    codex = backend(project, server.url, approvals)
    try:
        events = await run(codex, TOOL_PROMPT)
    finally:
        await codex.aclose()
    assert not project.tool_ran, "Codex ran the rejected command"
    assert len(approvals.requests) == 1
    _, end = the_call(events)
    assert (end.success, end.refusal) == (False, "rejected")
    assert end_of(events).stop_reason == "completed"
    assert "MOCK_REPLY done" in reply_text(events)
    assert_nothing_left(os.getpid())


async def test_cancel_mid_text_interrupts_the_turn_and_the_thread_goes_on(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    require_cli("codex")
    server = model_servers("codex")
    project = Project.create(tmp_path)
    codex = backend(project, server.url, Approvals(approve=None))
    try:
        events = await cancelled_at_first_text(SessionRunner(codex), SLOW_PROMPT)
        pid = codex.connection.pid if codex.connection is not None else None
        after = await run(codex, "hello")
    finally:
        await codex.aclose()
    checked(events)
    assert end_of(events).stop_reason == "cancelled", events
    # 80 chunks 0.1 s apart: the cancelled turn ended long before the last.
    assert "chunk79" not in reply_text(events)
    assert end_of(after).stop_reason == "completed", after
    assert pid is not None, "the interrupt did not keep the app-server: it was killed"
    assert_nothing_left(os.getpid())


async def test_cancel_while_the_approval_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    require_cli("codex")
    server = model_servers("codex")
    project = Project.create(tmp_path)
    cancel = CancelLater()
    codex = backend(project, server.url, Approvals(approve=None, on_request=cancel))
    cancel.runner = SessionRunner(codex)
    try:
        events = await turn_events(cancel.runner, TOOL_PROMPT)
        after = await run(codex, "hello")
    finally:
        await codex.aclose()
    checked(events)
    assert end_of(events).stop_reason == "cancelled", events
    _, end = the_call(events)
    assert end.success is False
    assert not project.tool_ran, "Codex ran the command of a cancelled turn"
    assert end_of(after).stop_reason == "completed", after
    assert_nothing_left(os.getpid())


# -- thread fork, and the codex exec fallback -------------------------------------------------------------------

FIRST_PROMPT: Final = "the first turn says hello"
FORK_PROMPT: Final = "the forked turn goes on"
ORIGINAL_PROMPT: Final = "the original goes on"


def no_app_server(project: Project) -> Path:
    """A ``codex`` that rejects ``app-server`` (as a build without it does) and runs the real one otherwise."""
    wrapper = project.root / "codex-without-app-server"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = app-server ]; then echo "error: unrecognized subcommand \'app-server\'" >&2; exit 2; fi\n'
        f'exec {require_cli("codex")} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def variant(
    project: Project,
    server_url: str,
    *,
    executable: Path | None = None,
    resume: str | None = None,
    fork: bool = False,
    mode: str | None = None,
) -> CodexBackend:
    options = BackendOptions(
        cwd=project.project,
        executable=str(executable or require_cli("codex")),
        endpoint=ModelEndpoint(base_url=f"{server_url}/v1", model=MODEL),
        home=project.root / "home",
        resume=resume,
        fork=fork,
        mode=mode,
        policy=AskEverything(),
        approvals=Approvals(approve=None),
        startup_timeout=60.0,
        cancel_grace=3.0,
    )
    return CodexBackend(resolve_backend("codex"), options)


async def one_turn(backend: CodexBackend, prompt: str) -> list[Event]:
    try:
        events = await run(backend, prompt)
    finally:
        await backend.aclose()
    assert end_of(events).stop_reason == "completed", events
    return events


def sent_since(server: Any, since: int) -> list[str]:
    return [request_text(r) for r in model_requests(server, since)]


async def test_a_forked_thread_carries_the_earlier_turn_and_leaves_the_original_as_it_was(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    require_cli("codex")
    server = model_servers("codex")
    project = Project.create(tmp_path)
    first = variant(project, server.url)
    await one_turn(first, FIRST_PROMPT)
    original = first.session_id
    assert original

    since = len(server.requests)
    forked = variant(project, server.url, resume=original, fork=True)
    await one_turn(forked, FORK_PROMPT)
    assert forked.session_id
    assert forked.session_id != original
    assert forked.notes == []
    assert any(FIRST_PROMPT in t and FORK_PROMPT in t for t in sent_since(server, since)), (
        "the forked turn does not carry the first"
    )

    since = len(server.requests)
    again = variant(project, server.url, resume=original)
    await one_turn(again, ORIGINAL_PROMPT)
    assert again.session_id == original
    assert again.notes == []
    texts = sent_since(server, since)
    assert any(FIRST_PROMPT in t and ORIGINAL_PROMPT in t for t in texts), texts
    assert not any(FORK_PROMPT in t for t in texts), "the fork's turn leaked into the original thread"
    assert_nothing_left(os.getpid())


async def test_without_app_server_turns_run_with_exec_read_only_resume_and_fork(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    require_cli("codex")
    server = model_servers("codex")
    project = Project.create(tmp_path)
    wrapper = no_app_server(project)
    codex = variant(project, server.url, executable=wrapper)
    try:
        events = await run(codex, TOOL_PROMPT)
        assert codex.uses_exec
        thread = codex.session_id
        assert thread
        since = len(server.requests)
        again = await run(codex, RESUME_PROMPT)
    finally:
        await codex.aclose()
    # exec cannot ask: the read-only sandbox kept the command from writing, and the model was told it failed.
    assert not project.tool_ran, "codex exec wrote in the read-only sandbox"
    assert end_of(events).stop_reason == "completed", events
    assert "MOCK_REPLY done" in reply_text(events)
    assert len([n for n in codex.notes if "approvals" in n]) == 1, codex.notes
    assert any("unrecognized subcommand 'app-server'" in n for n in codex.notes), codex.notes
    assert end_of(again).stop_reason == "completed", again
    assert "MOCK_REPLY ok" in reply_text(again)
    assert codex.session_id == thread
    assert any(RESUME_PROMPT in t and TOOL_PROMPT in t for t in sent_since(server, since)), (
        "exec resume does not carry the first turn"
    )
    assert_nothing_left(os.getpid())

    since = len(server.requests)
    forked = variant(project, server.url, executable=wrapper, resume=thread, fork=True)
    await one_turn(forked, FORK_PROMPT)
    assert forked.session_id
    assert forked.session_id != thread
    assert any(TOOL_PROMPT in t and FORK_PROMPT in t for t in sent_since(server, since))
    assert_nothing_left(os.getpid())


async def test_exec_in_the_bypass_mode_runs_the_command_and_reports_it(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    require_cli("codex")
    server = model_servers("codex")
    project = Project.create(tmp_path)
    codex = variant(project, server.url, executable=no_app_server(project), mode="yolo")
    events = await one_turn(codex, TOOL_PROMPT)
    assert project.tool_ran
    start, end = the_call(events)
    assert (start.tool, start.input, end.success) == ("execute_command", {"command": DEFAULT_COMMAND}, True)
    assert not [n for n in codex.notes if "approvals" in n]
    turn_end = end_of(events)
    assert turn_end.input_tokens
    assert turn_end.output_tokens
    assert_nothing_left(os.getpid())


async def test_a_cancelled_exec_turn_ends_cancelled_and_leaves_no_process(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    require_cli("codex")
    server = model_servers("codex")
    project = Project.create(tmp_path)
    codex = variant(project, server.url, executable=no_app_server(project))
    runner = SessionRunner(codex)
    events: list[Event] = []
    started = anyio.Event()
    since = len(server.requests)

    async def cancel_soon() -> None:
        # exec sends no text deltas: cancel once the model was asked (its slow reply takes 8 s).
        await anyio.to_thread.run_sync(
            lambda: wait_until(lambda: len(server.requests) > since, what="the model request")
        )
        started.set()
        runner.cancel()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(cancel_soon)
            events = await turn_events(runner, SLOW_PROMPT)
    finally:
        await codex.aclose()
    assert started.is_set()
    checked(events)
    assert end_of(events).stop_reason == "cancelled", events
    assert "chunk79" not in reply_text(events)
    assert_nothing_left(os.getpid())
