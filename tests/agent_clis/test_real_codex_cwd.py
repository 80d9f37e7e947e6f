"""The real Codex CLI asks about a command in another directory, and hive judges it there.

The scripted model calls Codex's shell tool with ``touch hive_tool_ran.txt`` and a ``workdir``: Codex sends
``item/commandExecution/requestApproval`` with that ``cwd``. A project rule allows the ``touch`` (so in the
project it runs without asking anyone); in a directory outside the project the same command is asked about, and,
refused, never runs there.

Skipped, saying why, when Codex is not installed (``.ci/agent-clis`` installs it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

import anyio
import msgspec
import pytest
from agent_clis_harness import DEFAULT_COMMAND
from agent_clis_harness import MODEL
from agent_clis_harness import TOOL_FILE
from agent_clis_harness import Project
from agent_clis_harness import assert_nothing_left
from agent_clis_harness import require_cli
from agent_clis_turns import Approvals
from agent_clis_turns import checked
from agent_clis_turns import end_of

from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import agent_cli_responder
from hive_conformance.model_server.agent_cli import read_conversation
from hive_conformance.script import Round
from hive_conformance.script import ScriptPart
from hive_conformance.script import ScriptToolCall
from hive_core.permissions import PermissionPolicy
from hive_core.permissions.loading import load_permission_rules
from hive_core.runners import collect_turn
from hive_providers.backends.codex import CodexBackend
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import ModelEndpoint
from hive_providers.backends.registry import resolve_backend

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

WAIT: Final = 120.0
"""Seconds a turn may take before the test fails (a bound, not a synchronisation)."""
_DIRECTORY_KEYS: Final = ("workdir", "cwd", "working_directory", "dir_path", "directory")


def _in_directory(directory: Path | None) -> Callable[[RecordedRequest], Round | None]:
    """The agent-CLI responder, with the shell call it makes given ``directory`` (``None``: none) as its working
    directory."""
    plain = agent_cli_responder(command=DEFAULT_COMMAND)

    def respond(request: RecordedRequest) -> Round | None:
        answer = plain(request)
        if answer is None or directory is None:
            return answer
        tools = read_conversation(request).tools
        parts: list[ScriptPart] = []
        for part in answer.parts:
            if isinstance(part, ScriptToolCall):
                properties = tools.get(part.name, {}).get("properties", {})
                key = next((key for key in _DIRECTORY_KEYS if key in properties), None)
                assert key is not None, f"Codex's {part.name} tool takes no working directory: {properties}"
                arguments = {**json.loads("".join(part.arguments)), key: str(directory)}
                part = msgspec.structs.replace(part, arguments=[json.dumps(arguments)])
            parts.append(part)
        return msgspec.structs.replace(answer, parts=parts)

    return respond


@pytest.fixture
def project(tmp_path: Path) -> Project:
    created = Project.create(tmp_path)
    (created.project / ".hive").mkdir()
    (created.project / ".hive" / "permissions.yaml").write_text(
        "permissions:\n"
        f"  bash:\n    - {{pattern: '{DEFAULT_COMMAND}', action: allow}}\n"
        f"  edit:\n    - {{pattern: '{TOOL_FILE}', action: allow}}\n"
    )
    return created


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    directory = tmp_path / "elsewhere"
    directory.mkdir()
    return directory


async def _turn(project: Project, directory: Path | None, approvals: Approvals) -> None:
    with ScriptedModelServer(model=MODEL, responder=_in_directory(directory)) as server:
        options = BackendOptions(
            cwd=project.project,
            executable=str(require_cli("codex")),
            endpoint=ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL),
            home=project.root / "home",
            policy=PermissionPolicy(load_permission_rules(project.project, trusted=True), project.project),
            approvals=approvals,
            startup_timeout=60.0,
            cancel_grace=3.0,
        )
        codex = CodexBackend(resolve_backend("codex"), options)
        try:
            with anyio.fail_after(WAIT):
                events = checked(await collect_turn(codex, "RUNTOOL go"))
        finally:
            await codex.aclose()
    assert end_of(events).stop_reason == "completed", events


async def test_a_command_codex_runs_in_another_directory_is_judged_there(
    project: Project, elsewhere: Path
) -> None:
    require_cli("codex")

    # In the project the rule allows it: nobody is asked, and it runs.
    in_project = Approvals(approve=False, reason="not here")
    await _turn(project, None, in_project)
    assert in_project.requests == []
    assert project.tool_ran

    # The same command in a directory outside the project is asked about; refused, it does not run there.
    outside = Approvals(approve=False, reason="not there")
    await _turn(project, elsewhere, outside)
    [asked] = outside.requests
    assert asked.tool_name == "execute_command"
    assert str(elsewhere) in asked.reason, asked
    assert not (elsewhere / TOOL_FILE).exists(), "Codex ran the refused command outside the project"
    assert_nothing_left(os.getpid())
