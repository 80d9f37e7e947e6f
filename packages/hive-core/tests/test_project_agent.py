"""The agent at work in a real project: built-in tools, the permission rules, and approvals over the wire.

A scripted model reads, edits and runs commands in a temporary project; every call the rules do not allow is
denied or asked, and the refusal the client sees on the wire is the right one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from core_harness import Wire
from core_harness import assert_ended
from core_harness import assert_verified
from core_harness import message
from core_harness import of_type

from hive_core import Agent
from hive_core import HitlBridge
from hive_core import SessionRunner
from hive_core import collect_turn
from hive_core.builtin_tools import BUILTIN_TOOLS
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.permissions import load_permission_rules
from hive_core.testing import ScriptedChatClient
from hive_core.testing import call
from hive_core.testing import reply
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import ToolEndEvent
from hive_protocol import TurnEndEvent

pytestmark = pytest.mark.anyio


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(
        "def greet():\r\n    return 'hello'\r\n", encoding="utf-8", newline=""
    )
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token.txt").write_text("s3cret", encoding="utf-8")
    (tmp_path / "config.json").write_text('{"debug": false}\n', encoding="utf-8")
    return tmp_path


def agent_for(project: Path, client: ScriptedChatClient, **kw: object) -> Agent:
    policy = PermissionPolicy(load_permission_rules(project, trusted=True), project)
    return Agent(client, tools=BUILTIN_TOOLS, policy=policy, working_dir=project, clock=lambda: 0.0, **kw)  # type: ignore[arg-type]


async def test_reads_edits_and_runs_commands_inside_the_rules(project: Path) -> None:
    client = ScriptedChatClient(
        [
            call(("read_file", {"path": "src/app.py"})),
            call(("edit_file", {"path": "src/app.py", "old_text": "'hello'", "new_text": "'hello, world'"})),
            call(("execute_command", {"command": "git --version >/dev/null 2>&1; make ran"})),
            reply("Done."),
        ]
    )
    events = await collect_turn(agent_for(project, client).session(), "greet the world")

    ends = of_type(events, ToolEndEvent)
    assert [(e.tool, e.success, e.refusal) for e in ends] == [
        ("read_file", True, None),
        ("edit_file", True, None),
        ("execute_command", False, "approval_unavailable"),
    ]
    assert "return 'hello'" in (ends[0].output or "")
    # The edit kept the file's CRLF line endings.
    assert (project / "src" / "app.py").read_bytes() == b"def greet():\r\n    return 'hello, world'\r\n"
    # `make` is not on the default allow list of shell commands and there is no approver: refused, not run.
    assert_ended(events, "completed")


async def test_allowed_commands_run_and_denied_paths_are_refused(project: Path) -> None:
    rules = PermissionRules.default()
    client = ScriptedChatClient(
        [
            call(("execute_command", {"command": "git --version && ls src"})),
            call(("read_file", {"path": "secrets/token.txt"})),
            call(("read_file", {"path": "../outside.txt"})),
            call(("execute_command", {"command": "rm -rf /"})),
            reply("ok"),
        ]
    )
    policy = PermissionPolicy(rules, project)
    agent = Agent(client, tools=BUILTIN_TOOLS, policy=policy, working_dir=project, clock=lambda: 0.0)
    events = await collect_turn(agent.session(), "look around")

    ends = of_type(events, ToolEndEvent)
    assert ends[0].success, ends[0].output
    assert "app.py" in (ends[0].output or "")
    assert (ends[1].success, ends[1].refusal) == (False, "denied")
    assert (ends[1].output or "").startswith("Permission denied: ")
    assert "s3cret" not in (ends[1].output or "")
    # Outside the project only external_directory rules apply; none match, so the default (ask) needs an
    # approver, and there is none.
    assert (ends[2].success, ends[2].refusal) == (False, "approval_unavailable")
    assert (ends[3].success, ends[3].refusal) == (False, "denied")
    assert_verified(events, turns=1)


async def test_an_asked_edit_waits_for_the_client_and_runs_when_approved(project: Path) -> None:
    bridge = HitlBridge()
    client = ScriptedChatClient(
        [
            call(("write_file", {"path": "config.json", "content": '{"debug": true}\n'}, "w1")),
            call(("delete_file", {"path": "config.json"}, "d1")),
            reply("Configured."),
        ]
    )
    session = agent_for(project, client, approvals=bridge).session()

    def answer(event: object, wire: Wire) -> None:
        if isinstance(event, HitlRequestEvent):
            wire.send(HitlResponseRequest(id=event.id, approved=event.call_id == "w1", reason="keep it"))

    wire = Wire(SessionRunner(session, session_id="p1", bridge=bridge), react=answer)
    async with wire.running():
        wire.send(message("turn debug on"))
        await wire.wait_for(TurnEndEvent)
    events = wire.events

    asks = of_type(events, HitlRequestEvent)
    assert [(a.call_id, a.tool_name, a.target, a.level) for a in asks] == [
        ("w1", "write_file", "config.json", "medium"),
        ("d1", "delete_file", "config.json", "medium"),
    ]
    ends = of_type(events, ToolEndEvent)
    assert [(e.call_id, e.success, e.refusal) for e in ends] == [
        ("w1", True, None),
        ("d1", False, "rejected"),
    ], ends
    assert ends[1].output == "Approval rejected: keep it"
    assert (project / "config.json").read_text(encoding="utf-8") == '{"debug": true}\n'
    assert_verified(events[1:], turns=1)


async def test_planning_mode_reads_but_never_writes(project: Path) -> None:
    client = ScriptedChatClient(
        [
            call(
                ("read_file", {"path": "src/app.py"}), ("write_file", {"path": "src/new.py", "content": "x"})
            ),
            reply("Here is the plan."),
        ]
    )
    agent = agent_for(project, client, planning=True)
    events = await collect_turn(agent.session(), "plan it")

    ends = {e.tool: e for e in of_type(events, ToolEndEvent)}
    assert ends["read_file"].success
    assert (ends["write_file"].success, ends["write_file"].refusal) == (False, "denied")
    assert not (project / "src" / "new.py").exists()
    assert_verified(events, turns=1)


async def test_planning_mode_keeps_the_plan_under_the_default_rules(project: Path) -> None:
    client = ScriptedChatClient(
        [call(("manage_todo", {"action": "add", "task": "read the code"})), reply("Here is the plan.")]
    )
    agent = agent_for(project, client, planning=True)
    events = await collect_turn(agent.session(), "plan it")

    (end,) = of_type(events, ToolEndEvent)
    assert (end.success, end.refusal) == (True, None)
    assert "read the code" in (project / ".hive" / "todo.json").read_text(encoding="utf-8")
    assert_verified(events, turns=1)


async def test_planning_mode_runs_tools_the_rules_mark_read_only(project: Path) -> None:
    from hive_core import tool

    @tool
    def inspect_build(target: str) -> str:
        """Reports on a build target without changing anything."""
        return f"{target}: up to date"

    (project / ".hive").mkdir()
    (project / ".hive" / "permissions.yaml").write_text(
        "permissions:\n  read_only_tools: [inspect_*]\n  tools:\n    - {pattern: inspect_*, action: allow}\n",
        encoding="utf-8",
    )
    client = ScriptedChatClient([call(("inspect_build", {"target": "app"})), reply("ok")])
    policy = PermissionPolicy(load_permission_rules(project, trusted=True), project)
    agent = Agent(client, tools=[inspect_build], policy=policy, working_dir=project, planning=True)
    events = await collect_turn(agent.session(), "check")
    (end,) = of_type(events, ToolEndEvent)
    assert (end.success, end.output) == (True, "app: up to date")
