"""Every coding-agent CLI's request is judged where it runs: the working directory it names is part of the call.

For each CLI's own request shape (Codex's ``requestApproval``, ACP's ``rawInput`` keys, Claude Code's search
tools, Pi's and OpenCode's tool inputs, Copilot's permission request), the same ``cat secret.txt`` is allowed in
the project, but in another directory it is judged as reading that directory's ``secret.txt``: denied when the
rules deny that file, asked about otherwise, even when the rules allow the whole directory.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.permissions import PermissionPolicy
from hive_core.permissions.loading import load_permission_rules
from hive_providers.backends.acp.services import AcpClientServices
from hive_providers.backends.claude.control import PermissionResponder
from hive_providers.backends.codex import CodexBackend
from hive_providers.backends.copilot.turn import CopilotTurn
from hive_providers.backends.kit.judging import JudgingContext
from hive_providers.backends.kit.judging import judge_call
from hive_providers.backends.kit.judging import verdict_of
from hive_providers.backends.kit.judging import working_directory
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.opencode.questions import read_permission
from hive_providers.backends.pi.approvals import ToolJudge
from hive_providers.backends.pi.rpc import ApprovalDialog
from hive_providers.backends.registry import resolve_backend

pytestmark = pytest.mark.anyio


@dataclass
class Places:
    """A project and a directory beside it, each with its own ``secret.txt``; the rules deny the other
    directory's secret and allow the rest of it."""

    project: Path
    elsewhere: Path
    policy: PermissionPolicy
    asked: list[ApprovalRequest] = field(default_factory=list[ApprovalRequest])

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """The approval service: records what it was asked, and refuses."""
        self.asked.append(request)
        return ApprovalDecision(approved=False, reason="no")


@pytest.fixture
def places(tmp_path: Path) -> Places:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    for directory in (project, elsewhere):
        (directory / "docs").mkdir(parents=True)
        (directory / "secret.txt").write_text("s\n")
        (directory / "docs" / "readme.txt").write_text("r\n")
    (project / ".hive").mkdir()
    (project / ".hive" / "permissions.yaml").write_text(
        "permissions:\n"
        "  external_directory:\n"
        f"    - {{pattern: '{elsewhere}/secret.txt', action: deny, priority: 10}}\n"
        f"    - {{pattern: '{elsewhere}/**', action: allow}}\n"
        f"    - {{pattern: '{elsewhere}', action: allow}}\n"
    )
    policy = PermissionPolicy(load_permission_rules(project), project)
    return Places(project, elsewhere, policy)


# -- the judging itself ------------------------------------------------------------------------------------------


def test_a_command_is_judged_in_its_directory(places: Places) -> None:
    def verdict(command: str, cwd: object) -> str:
        judged = verdict_of(
            places.policy, "execute_command", {"command": command}, cwd=cwd, project=places.project
        )
        return judged.action

    assert verdict("cat secret.txt", None) == "allow"
    assert verdict("cat secret.txt", str(places.project)) == "allow"
    assert verdict("cat secret.txt", "docs") == "allow"  # inside the project
    assert verdict("cat secret.txt", str(places.elsewhere)) == "deny"  # reads elsewhere/secret.txt
    assert verdict("cat secret.txt", "../elsewhere") == "deny"
    # The rules allow the rest of that directory, but outside the project a call is asked about at least.
    assert verdict("cat docs/readme.txt", str(places.elsewhere)) == "ask"
    assert verdict("ls", str(places.elsewhere)) == "ask"
    # A link inside the project that leads out is outside.
    (places.project / "link").symlink_to(places.elsewhere)
    assert verdict("cat secret.txt", "link") == "deny"
    assert verdict("ls", "link") == "ask"
    # What is not a directory name cannot be judged, and several names at once are asked about.
    assert verdict("ls", 7) == "ask"
    assert verdict("ls", ("docs", str(places.elsewhere))) == "ask"


def test_file_tools_join_relative_paths_to_the_directory(places: Places) -> None:
    def verdict(tool: str, arguments: dict[str, Any], cwd: object) -> str:
        return verdict_of(places.policy, tool, arguments, cwd=cwd, project=places.project).action

    assert verdict("read_file", {"path": "secret.txt"}, None) == "allow"
    assert verdict("read_file", {"path": "secret.txt"}, str(places.elsewhere)) == "deny"
    assert verdict("grep_files", {"pattern": "x"}, None) == "allow"
    assert verdict("grep_files", {"pattern": "x"}, str(places.elsewhere)) == "ask"


def test_the_working_directory_keys_of_a_tool_input() -> None:
    assert working_directory({"command": "ls"}) is None
    for key in ("cwd", "workdir", "working_dir", "workingDirectory", "dir_path", "directory"):
        assert working_directory({key: "/x"}) == "/x"
    assert working_directory({"cwd": "/x", "workdir": "/x"}) == "/x"
    assert working_directory({"cwd": "/x", "workdir": "/y"}) == ("/x", "/y")
    assert working_directory({"cwd": ["/x"]}) == ["/x"]


# -- each CLI's request shape -----------------------------------------------------------------------------------

Judge = Callable[[Places, str, dict[str, Any]], Awaitable[bool]]
"""Send one CLI request for ``command`` with the extra fields given; whether hive let it run."""


async def _codex(places: Places, command: str, extra: dict[str, Any]) -> bool:
    options = BackendOptions(cwd=places.project, policy=places.policy, approvals=places)
    backend = CodexBackend(resolve_backend("codex"), options)
    tracker = ToolCallTracker(lambda event: None)
    params = {"threadId": "t", "turnId": "u", "itemId": "c1", "command": command, **extra}
    answer = await backend._approve("item/commandExecution/requestApproval", params, tracker)  # pyright: ignore[reportPrivateUsage]
    return answer["decision"] != "decline"


def _acp(key: str) -> Judge:
    async def judge(places: Places, command: str, extra: dict[str, Any]) -> bool:
        tracker = ToolCallTracker(lambda event: None)
        services = AcpClientServices(
            emit=lambda event: None,
            tracker=tracker,
            cwd=places.project,
            policy=places.policy,
            approvals=places,
            questions=None,
            sandbox=None,
        )
        raw = {"command": command, **({key: extra["cwd"]} if "cwd" in extra else {})}
        answer = await services.request_permission(
            {
                "toolCall": {"toolCallId": "c1", "kind": "execute", "title": command, "rawInput": raw},
                "options": [
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                ],
            }
        )
        return answer["outcome"]["optionId"] == "yes"

    return judge


async def _claude_grep(places: Places, command: str, extra: dict[str, Any]) -> bool:
    # Claude Code's Bash names no directory; its search tools search the one in `path`.
    responder = PermissionResponder(
        tracker=ToolCallTracker(lambda event: None),
        policy=places.policy,
        approvals=places,
        questions=None,
        project=places.project,
    )
    tool_input: dict[str, Any] = {"pattern": command.split()[-1]}
    if "cwd" in extra:
        tool_input["path"] = extra["cwd"]
    answer = await responder.can_use_tool({"tool_name": "Grep", "input": tool_input, "tool_use_id": "c1"})
    return answer["behavior"] == "allow"


async def _pi(places: Places, command: str, extra: dict[str, Any]) -> bool:
    judge = ToolJudge(
        JudgingContext(
            tracker=ToolCallTracker(lambda event: None),
            cwd=places.project,
            policy=places.policy,
            approvals=places,
        )
    )
    # An extension's command tool that takes a working directory.
    dialog = ApprovalDialog("r1", "c1", "run", {"command": command, **extra})
    answer = await judge.judge(dialog)
    return json.loads(answer["value"])["approved"] is True


async def _opencode(places: Places, command: str, extra: dict[str, Any]) -> bool:
    metadata = {"command": command, **({"workdir": extra["cwd"]} if "cwd" in extra else {})}
    permission = read_permission(
        {"id": "per_1", "sessionID": "s", "permission": "bash", "patterns": [command], "metadata": metadata}
    )
    assert permission is not None
    judged = await judge_call(
        "c1",
        permission.tool,
        permission.arguments,
        policy=places.policy,
        approvals=places,
        tracker=ToolCallTracker(lambda event: None),
        cwd=permission.directory,
        project=places.project,
    )
    return judged.runs


async def _copilot(places: Places, command: str, extra: dict[str, Any]) -> bool:
    sent: list[tuple[str, dict[str, Any]]] = []

    async def send(method: str, params: dict[str, Any]) -> Any:
        sent.append((method, params))
        return {}

    turn = CopilotTurn(
        emit=lambda event: None,
        session_id="s",
        send=send,
        policy=places.policy,
        approvals=places,
        questions=None,
        taken=set(),
        question_numbers=lambda: 1,
        project=places.project,
    )
    work: list[Awaitable[None]] = []
    request = {"kind": "shell", "toolCallId": "c1", "fullCommandText": command, **extra}
    turn.on_event(
        {"type": "permission.requested", "data": {"requestId": "p1", "permissionRequest": request}},
        work.append,
    )  # pyright: ignore[reportArgumentType]
    await work[0]
    [(_, params)] = sent
    return params["result"]["kind"] == "approve-once"


JUDGES: dict[str, Judge] = {
    "codex app-server": _codex,
    **{f"acp {key}": _acp(key) for key in ("cwd", "workdir", "dir_path", "directory")},
    "pi": _pi,
    "opencode": _opencode,
    "copilot": _copilot,
}


@pytest.mark.parametrize("cli", JUDGES.keys())
async def test_a_command_in_another_directory_is_judged_there(places: Places, cli: str) -> None:
    judge = JUDGES[cli]
    with anyio.fail_after(10):
        assert await judge(places, "cat secret.txt", {})
        assert await judge(places, "cat secret.txt", {"cwd": str(places.project)})
        assert places.asked == []

        assert not await judge(places, "cat secret.txt", {"cwd": str(places.elsewhere)})
        assert places.asked == []  # denied by the rule on elsewhere/secret.txt: nobody is asked

        assert not await judge(places, "cat docs/readme.txt", {"cwd": str(places.elsewhere)})
    [asked] = places.asked  # allowed by the rules, but outside the project: asked
    assert str(places.elsewhere) in asked.reason


async def test_claude_codes_search_tools_are_judged_in_the_directory_they_search(places: Places) -> None:
    with anyio.fail_after(10):
        # (Without a directory, Grep is judged by the tools rules alone, as before.)
        assert not await _claude_grep(places, "grep x", {"cwd": str(places.elsewhere / "secret.txt")})
        assert places.asked == []
        assert not await _claude_grep(places, "grep x", {"cwd": str(places.elsewhere)})
    [asked] = places.asked
    assert str(places.elsewhere) in asked.reason


async def test_a_codex_file_change_that_asks_for_a_root_outside_is_asked_about(places: Places) -> None:
    options = BackendOptions(cwd=places.project, policy=places.policy, approvals=places)
    backend = CodexBackend(resolve_backend("codex"), options)
    tracker = ToolCallTracker(lambda event: None)
    tracker.correlate({"toolCallId": "f1", "kind": "edit", "title": "x", "rawInput": {"path": "notes.md"}})
    params = {"threadId": "t", "turnId": "u", "itemId": "f1", "grantRoot": str(places.elsewhere)}
    with anyio.fail_after(10):
        answer = await backend._approve("item/fileChange/requestApproval", params, tracker)  # pyright: ignore[reportPrivateUsage]
    assert answer == {"decision": "decline"}
    [asked] = places.asked
    assert str(places.elsewhere) in asked.reason


async def test_an_acp_terminal_outside_the_project_is_asked_about_even_where_the_rules_allow(
    places: Places,
) -> None:
    services = AcpClientServices(
        emit=lambda event: None,
        tracker=ToolCallTracker(lambda event: None),
        cwd=places.project,
        policy=places.policy,
        approvals=places,
        questions=None,
        sandbox=None,
    )
    with anyio.fail_after(10), pytest.raises(RequestError, match=r"rejected|refused|denied|not"):
        await services.create_terminal({"sessionId": "s", "command": "ls", "cwd": str(places.elsewhere)})
    [asked] = places.asked
    assert str(places.elsewhere) in asked.reason


async def test_a_changed_command_is_judged_again_where_it_runs(places: Places) -> None:
    class Changes:
        async def request(self, request: ApprovalRequest) -> ApprovalDecision:
            return ApprovalDecision(approved=True, modified_arguments={"command": "cat secret.txt"})

    with anyio.fail_after(10):
        judged = await judge_call(
            "c1",
            "execute_command",
            {"command": "cat docs/readme.txt"},
            policy=places.policy,
            approvals=Changes(),
            tracker=ToolCallTracker(lambda event: None),
            cwd=str(places.elsewhere),
            project=places.project,
        )
    # Approved as asked, but the change reads elsewhere/secret.txt, which the rules deny.
    assert judged.outcome == "denied", judged
