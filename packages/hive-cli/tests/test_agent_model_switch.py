"""``/model`` in the interactive mode of a session a coding-agent CLI serves, on a real pseudo-terminal.

A switch restarts the CLI on the new model in its own session: the real Pi (``$HIVE_AGENT_CLIS_BIN``, skipped when
it is not installed) run offline against the scripted model server, whose recorded requests show the model named
and the conversation carried on. A CLI that cannot switch (it takes no model from hive, or cannot resume its
session) is told so and left as it was: the fake ACP CLI, and a backend a package declares with an entry point.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from agent_cli_harness import FAKE_AGENT
from agent_cli_harness import TRANSCRIPTS
from agent_cli_harness import FakeCli
from agent_cli_harness import agent_clis_bin
from cli_harness import Terminal
from cli_harness import Workspace

from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import OK_REPLY
from hive_conformance.model_server.agent_cli import agent_cli_responder

REMEMBERED: Final = "PINEAPPLE-7319"
"""A word of the first turn that the second turn's model request must still carry."""

_APIS: Final = ("openai_chat", "openai_responses", "anthropic_messages", "gemini")


def _model_requests(server: ScriptedModelServer, start: int, end: int | None = None) -> list[RecordedRequest]:
    """The requests to a model API (not model lists) from index ``start`` to ``end``."""
    return [r for r in server.requests[start:end] if r.endpoint in _APIS and r.body is not None]


@pytest.fixture
def agent_server() -> Iterator[ScriptedModelServer]:
    """A scripted model that answers a coding-agent CLI (``MOCK_REPLY ok`` to a plain message)."""
    with ScriptedModelServer(model="local-model", responder=agent_cli_responder()) as server:
        yield server


REAL_CLIS: Final = [
    pytest.param("pi", "pi", "Pi", id="pi"),
    pytest.param("opencode-acp", "opencode", "OpenCode (ACP)", id="opencode-acp"),
    # Kimi Code resumes on the model its session was recorded with: hive points it at the endpoint's model.
    pytest.param("kimi", "kimi", "Kimi Code", id="kimi"),
]
"""Real CLIs (backend, program, title) that resume their session offline: Pi on its own RPC, two over ACP."""


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "program", "title"), REAL_CLIS)
def test_model_restarts_the_cli_on_the_new_model_and_the_conversation_goes_on(
    ws: Workspace, agent_server: ScriptedModelServer, backend: str, program: str, title: str
) -> None:
    executable = agent_clis_bin() / program
    if not os.access(executable, os.X_OK):
        pytest.skip(
            f"{backend}: {executable} is not installed (run .ci/agent-clis and set HIVE_AGENT_CLIS_BIN)"
        )
    home = ws.root / "home"
    home.mkdir()
    ws.env.update(
        PATH=f"{executable.parent}{os.pathsep}{ws.env.get('PATH', '')}", HOME=str(home), NO_COLOR="1"
    )
    endpoint = f"{agent_server.url}/v1"
    with Terminal(
        ["--agent", backend, "--model-endpoint", endpoint, "-m", "local-model"], env=ws.env, cwd=ws.project
    ) as term:
        banner = term.expect("> ")
        assert f"agent {backend} (local-model)" in banner
        term.enter(
            "/model",
            f"agent {backend} ({title}) runs on model local-model",
            "/model NAME restarts it on NAME",
        )
        term.type(f"Remember the word {REMEMBERED}.\r")
        term.expect(OK_REPLY)
        term.expect("> ")
        [session] = ws.sessions()
        since = len(agent_server.requests)
        term.enter(
            "/model other-model",
            f"model: agent {backend} (other-model) for the next turns",
            f"{title} restarts on other-model in its session",
            f"session {session['id']} goes on",
        )
        term.enter("/model other-model", "already on model other-model")
        term.type("What was the word?\r")
        assert OK_REPLY in term.expect("> ")
        term.type("\x04")
        assert term.wait() == 0
    first = _model_requests(agent_server, 0, since)
    second = _model_requests(agent_server, since)
    assert first, f"{backend} never asked the model"
    assert second, f"{backend} did not ask the model after the switch"
    assert {r.body["model"] for r in first} == {"local-model"}
    assert {r.body["model"] for r in second} == {"other-model"}
    # The CLI resumed its own session: the second turn's request still carries the first turn's words.
    texts = [json.dumps(r.body) for r in second]
    assert any(REMEMBERED in text and "What was the word?" in text for text in texts), texts
    assert [s["id"] for s in ws.sessions()] == [session["id"]]
    assert ws.sessions()[0]["message_count"] == 4


def test_model_refuses_to_restart_a_cli_that_cannot_resume_its_session(ws: Workspace) -> None:
    cli = FakeCli.install(ws, "gemini")
    transcript = ws.root / "cli-hello-no-load.jsonl"
    hello = (Path(__file__).with_name("acp_transcripts") / "cli-hello.jsonl").read_text(encoding="utf-8")
    transcript.write_text(
        hello.replace('"agentCapabilities": {"loadSession": true}', '"agentCapabilities": {}')
    )
    ws.env.update(cli.env("cli-hello"), HIVE_TEST_TRANSCRIPT=str(transcript))
    with ws.prompt("--agent", "gemini") as term:
        described = term.enter("/model", "agent gemini (Gemini CLI) runs on its own default model")
        assert "/model NAME restarts it on NAME" in described  # no turn yet: nothing to lose
        term.enter("hello", "Hello from the fake CLI")
        term.enter(
            "/model other",
            "model unchanged: Gemini CLI cannot resume its session in a new process",
            "/clear, then /model NAME",
        )
        term.enter("/model", "its own default model")
        term.type("\x04")
        assert term.wait() == 0
    methods = cli.methods()
    assert methods.count("initialize") == 1  # the CLI was never restarted
    assert "session/set_model" not in methods


SPEC_MODULE: Final = """\
from hive_providers.backends.kit.specs import LaunchSpec

SPEC = LaunchSpec(
    name="mute",
    title="Mute CLI",
    executables=("mute",),
    model_passing="none",
    ask_mode="default",
    install_hint="it is a test's",
)
"""


def _declare_backend(ws: Workspace, module: str, text: str, entry: str) -> Path:
    """A package declaring the backend ``entry`` (``name = module:ATTRIBUTE``): its entry point is read from a
    .dist-info on the path of the hive processes the workspace starts; returns the folder."""
    site = ws.root / "site"
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[hive.backends]\n{entry}\n")
    (site / f"{module}.py").write_text(text)
    ws.env.update(PYTHONPATH=str(site))
    return site


def test_model_says_a_cli_that_takes_no_model_cannot_switch(ws: Workspace) -> None:
    _declare_backend(ws, "mute_backend_spec", SPEC_MODULE, "mute = mute_backend_spec:SPEC")
    cli = FakeCli.install(ws, "mute")
    ws.env.update(cli.env("cli-hello"))
    with ws.prompt("--agent", "mute", shows=["agent mute"]) as term:
        term.enter(
            "/model",
            "agent mute (Mute CLI) runs on its own default model",
            "Mute CLI takes no model from hive",
        )
        term.enter("/model big-model", "model unchanged: Mute CLI takes no model from hive")
        term.enter("hello", "Hello from the fake CLI")
        term.type("\x04")
        assert term.wait() == 0
    assert cli.methods().count("initialize") == 1
    assert "session/set_model" not in cli.methods()


PICKY_MODULE: Final = """\
from hive_providers.backends.acp.backend import AcpBackend
from hive_providers.backends.kit.errors import BackendUnavailable
from hive_providers.backends.pool import default_pool
from hive_providers.backends.registry import BackendDefinition
from hive_providers.backends.kit.specs import LaunchSpec

SPEC = LaunchSpec(
    name="picky", title="Picky CLI", executables=("picky",), ask_mode="default", install_hint="it is a test's"
)


def make(spec, options):
    if options.model == "unknown-model":
        raise BackendUnavailable("Picky CLI has no model 'unknown-model'")
    return AcpBackend(spec, options, pool=default_pool())


DEFINITION = BackendDefinition(spec=SPEC, factory="picky_backend:make")
"""

PICKY_CLI: Final = """\
#!/bin/sh
if [ "$1" = "--version" ]; then echo "picky 1.0"; exit 0; fi
exec "{python}" "{agent}" "{first}" "{then}" --counter "{counter}" --log "{log}" --wait 30
"""


def test_a_switch_the_cli_cannot_start_leaves_the_session_as_it_was(ws: Workspace) -> None:
    _declare_backend(ws, "picky_backend", PICKY_MODULE, "picky = picky_backend:DEFINITION")
    cli = FakeCli.install(ws)
    log = ws.root / "picky.log.jsonl"
    (cli.bin / "picky").write_text(
        PICKY_CLI.format(
            python=sys.executable,
            agent=FAKE_AGENT,
            first=TRANSCRIPTS / "cli-hello.jsonl",
            then=TRANSCRIPTS / "cli-resume.jsonl",
            counter=ws.root / "picky.count",
            log=log,
        )
    )
    (cli.bin / "picky").chmod(0o755)
    with ws.prompt("--agent", "picky") as term:
        [before] = ws.sessions()
        # No turn yet: the failed open drops the empty session, and a new one takes its place.
        term.enter(
            "/model unknown-model", "model unchanged (agent picky): Picky CLI has no model 'unknown-model'"
        )
        [empty] = ws.sessions()
        term.enter("hello", "Hello from the fake CLI")
        term.enter("/model unknown-model", "model unchanged (agent picky): Picky CLI has no model")
        term.type("again\r")
        term.expect("Welcome back")  # the old session went on: its CLI session resumed
        term.expect("> ")
        term.type("\x04")
        assert term.wait() == 0
    assert before["id"] != empty["id"]
    [after] = ws.sessions()
    assert after["id"] == empty["id"]
    assert after["message_count"] == 4
    sent = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    load = next(m for m in sent if m.get("method") == "session/load")
    assert load["params"]["sessionId"] == "sess_cli_1"
