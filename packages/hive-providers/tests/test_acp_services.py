"""What hive serves an ACP agent: permission answers by the engine then the human, chosen by kind; files and
terminals under hive's rules and sandbox; Reasonix questions (AcpClientServices, fed raw params)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError

from hive_core.hitl import HitlBridge
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.questions import Answers
from hive_core.questions import QuestionBridge
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import sandbox_status
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import QuestionOption
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import verify
from hive_providers.backends.acp.permissions import REFUSED
from hive_providers.backends.acp.permissions import Option
from hive_providers.backends.acp.questions import is_question
from hive_providers.backends.acp.services import AcpClientServices
from hive_providers.backends.kit.permission_arguments import permission_arguments
from hive_providers.backends.kit.tool_calls import ToolCallTracker

pytestmark = pytest.mark.anyio

ALLOW_ONCE = {"optionId": "yes-1", "name": "Allow", "kind": "allow_once"}
ALLOW_ALWAYS = {"optionId": "yes-all", "name": "Always", "kind": "allow_always"}
REJECT_ONCE = {"optionId": "no-1", "name": "Reject", "kind": "reject_once"}
REJECT_ALWAYS = {"optionId": "no-all", "name": "Never", "kind": "reject_always"}
# Rejections first and odd ids: an answer picked by position or by id would be wrong.
OPTIONS = [REJECT_ALWAYS, REJECT_ONCE, ALLOW_ALWAYS, ALLOW_ONCE]

Decide = Callable[[HitlRequestEvent], HitlResponseRequest | None]


class Session:
    """The services of one turn, with a scripted human answering over hive's own bridges."""

    def __init__(
        self,
        project: Path,
        *,
        decide: Decide | None = None,
        answer: Callable[[QuestionRequestEvent], Answers | None] | None = None,
        policy: bool = True,
        approvals: bool = True,
        sandbox: SandboxSettings | None = None,
    ) -> None:
        self.events: list[Event] = []
        self.asked: list[HitlRequestEvent] = []
        self.questions: list[QuestionRequestEvent] = []
        self._decide = decide or approve
        self._answer = answer
        self.hitl = HitlBridge(timeout=5)
        self.hitl.attach(self._sink)
        self.question_bridge = QuestionBridge(timeout=5)
        self.question_bridge.attach(self._sink)
        self.tracker = ToolCallTracker(self.events.append)
        self.policy = PermissionPolicy(PermissionRules.default(), project)
        self.services = AcpClientServices(
            emit=self.events.append,
            tracker=self.tracker,
            cwd=project,
            policy=self.policy if policy else None,
            approvals=self.hitl if approvals else None,
            questions=self.question_bridge if answer is not None else None,
            sandbox=sandbox,
        )

    def _sink(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, HitlRequestEvent):
            self.asked.append(event)
            response = self._decide(event)
            if response is not None:
                self.hitl.answer(response)
        elif isinstance(event, QuestionRequestEvent):
            self.questions.append(event)
            assert self._answer is not None
            answers = self._answer(event)
            self.question_bridge.answer(
                QuestionResponseRequest(id=event.id, answers=dict(answers) if answers else None)
            )

    def update(self, **fields: Any) -> None:
        self.tracker.upsert({"sessionUpdate": "tool_call_update", **fields})

    def announce(self, call_id: str, **fields: Any) -> None:
        self.tracker.upsert(
            {"sessionUpdate": "tool_call", "toolCallId": call_id, "status": "pending", **fields}
        )

    def verified(self) -> list[Event]:
        """The stream with the turn closed, checked by hive_protocol.verify."""
        self.tracker.close_all("turn over")
        stream = [*self.events, TurnEndEvent(stop_reason="completed")]
        assert verify(stream) == []
        return stream


def approve(event: HitlRequestEvent) -> HitlResponseRequest:
    return HitlResponseRequest(id=event.id, approved=True)


def approve_always(event: HitlRequestEvent) -> HitlResponseRequest:
    return HitlResponseRequest(id=event.id, approved=True, always_approve=True)


def reject(event: HitlRequestEvent) -> HitlResponseRequest:
    return HitlResponseRequest(id=event.id, approved=False, reason="not that")


def selected(option_id: str) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


CANCELLED = {"outcome": {"outcome": "cancelled"}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("hunter2\n")
    (root / ".env").write_text("TOKEN=x\n")
    (root / "src" / "lines.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    return root


def permission(call_id: str, options: list[dict[str, Any]] | None = None, **tool_call: Any) -> dict[str, Any]:
    return {"sessionId": "s", "toolCall": {"toolCallId": call_id, **tool_call}, "options": options or OPTIONS}


# -- permissions ------------------------------------------------------------------------------------------------


async def test_an_allowed_command_is_answered_allow_once_without_asking(project: Path) -> None:
    session = Session(project)
    session.announce("c1", title="ls", kind="execute", rawInput={"command": "ls -la"})
    result = await session.services.request_permission(permission("c1"))
    assert result == selected("yes-1")
    assert session.asked == []
    session.verified()


async def test_a_denied_command_is_rejected_without_asking_and_its_end_says_denied(project: Path) -> None:
    session = Session(project)
    session.announce("c1", kind="execute", rawInput={"command": "sudo ls"})
    result = await session.services.request_permission(permission("c1"))
    assert result == selected("no-1")
    assert session.asked == []
    session.update(toolCallId="c1", status="failed")
    [end] = [event for event in session.events if isinstance(event, ToolEndEvent)]
    assert (end.success, end.refusal) == (False, "denied")
    session.verified()


@pytest.mark.parametrize(
    ("decide", "expected", "refusal"),
    [(approve, "yes-1", None), (approve_always, "yes-all", None), (reject, "no-1", "rejected")],
)
async def test_an_asked_command_goes_to_the_human_inside_its_call(
    project: Path, decide: Decide, expected: str, refusal: str | None
) -> None:
    session = Session(project, decide=decide)
    session.announce("c1", title="touch", kind="execute", rawInput={"command": "touch x"})
    result = await session.services.request_permission(permission("c1"))
    assert result == selected(expected)
    [asked] = session.asked
    assert asked.call_id == "c1"
    assert asked.tool_name == "execute_command"
    assert asked.arguments == {"command": "touch x"}
    session.update(toolCallId="c1", status="completed" if refusal is None else "failed")
    stream = session.verified()
    kinds = [type(event).__name__ for event in stream]
    assert kinds == ["ToolStartEvent", "HitlRequestEvent", "ToolEndEvent", "TurnEndEvent"]
    end = stream[2]
    assert isinstance(end, ToolEndEvent)
    assert end.refusal == refusal


async def test_without_approvals_an_ask_is_rejected(project: Path) -> None:
    session = Session(project, approvals=False)
    session.announce("c1", kind="execute", rawInput={"command": "touch x"})
    assert await session.services.request_permission(permission("c1")) == selected("no-1")
    assert session.tracker.calls[0].refusal == "approval_unavailable"


async def test_without_a_policy_every_request_is_asked(project: Path) -> None:
    session = Session(project, policy=False)
    session.announce("c1", kind="execute", rawInput={"command": "ls"})
    assert await session.services.request_permission(permission("c1")) == selected("yes-1")
    assert len(session.asked) == 1


@pytest.mark.parametrize(
    ("decide", "options", "expected"),
    [
        (reject, [ALLOW_ONCE, ALLOW_ALWAYS], CANCELLED),
        (reject, [ALLOW_ONCE, REJECT_ALWAYS], CANCELLED),
        (approve, [REJECT_ONCE, ALLOW_ALWAYS], selected("yes-all")),
        (approve_always, [ALLOW_ONCE, REJECT_ONCE], selected("yes-1")),
        (approve, [{"optionId": "ok", "name": "OK", "kind": "allow_sometimes"}, REJECT_ONCE], CANCELLED),
        (approve, [{"optionId": "x"}, {"name": "no id", "kind": "allow_once"}], CANCELLED),
    ],
)
async def test_options_are_chosen_by_kind_only(
    project: Path, decide: Decide, options: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    session = Session(project, decide=decide)
    session.announce("c1", kind="execute", rawInput={"command": "touch x"})
    assert await session.services.request_permission(permission("c1", options)) == expected


async def test_a_permission_under_another_id_belongs_to_the_running_call(project: Path) -> None:
    session = Session(project)
    session.announce("call_a", kind="execute", rawInput={"command": "touch a"}, status="in_progress")
    await session.services.request_permission(
        permission("perm-77", kind="execute", rawInput={"command": "touch a"})
    )
    assert [event.call_id for event in session.events if isinstance(event, ToolStartEvent)] == ["call_a"]
    assert session.asked[0].call_id == "call_a"
    session.update(toolCallId="perm-77", status="completed")  # the agent's later updates may use either id
    session.verified()


async def test_a_permission_for_an_unknown_call_starts_it_before_asking(project: Path) -> None:
    session = Session(project)
    await session.services.request_permission(
        permission(
            "p1", title="Write notes", kind="edit", rawInput={"path": "/elsewhere/notes.md", "content": "x"}
        )
    )
    stream = session.verified()
    assert [type(event).__name__ for event in stream[:2]] == ["ToolStartEvent", "HitlRequestEvent"]
    start, asked = stream[0], stream[1]
    assert isinstance(start, ToolStartEvent)
    assert isinstance(asked, HitlRequestEvent)
    assert (start.tool, start.call_id, asked.call_id) == ("edit_file", "p1", "p1")
    assert asked.arguments == {"path": "/elsewhere/notes.md", "content": "x"}


@pytest.mark.parametrize(
    ("path", "asks"),
    [("src/app.py", False), ("README.md", True), (".env", True), ("/outside/project/file.txt", True)],
)
async def test_an_edit_is_judged_like_hives_own_write_file(project: Path, path: str, asks: bool) -> None:
    session = Session(project, decide=reject)
    target = path if path.startswith("/") else str(project / path)
    session.announce("e1", kind="edit", rawInput={"file_path": target, "new_string": "x"})
    result = await session.services.request_permission(permission("e1"))
    own = session.policy.evaluate("write_file", {"path": target, "content": "x"})
    assert (own.action == "ask") is asks
    assert result == (selected("no-1") if asks else selected("yes-1"))
    assert len(session.asked) == (1 if asks else 0)


async def test_an_edit_named_only_by_its_location_is_judged_by_it(project: Path) -> None:
    session = Session(project, decide=reject)
    session.announce("e1", kind="edit", locations=[{"path": str(project / "src" / "a.py")}])
    assert await session.services.request_permission(permission("e1")) == selected("yes-1")


# -- files ------------------------------------------------------------------------------------------------------


async def test_read_honours_line_and_limit(project: Path) -> None:
    session = Session(project)
    path = str(project / "src" / "lines.txt")
    read = session.services.read_text_file
    assert await read({"path": path, "line": 2, "limit": 2}) == {"content": "two\nthree\n"}
    assert await read({"path": path, "line": 4}) == {"content": "four\nfive\n"}
    assert await read({"path": path, "limit": 1}) == {"content": "one\n"}
    assert await read({"path": path, "line": "2", "limit": None}) == {
        "content": "one\ntwo\nthree\nfour\nfive\n"
    }
    assert await read({"path": "src/lines.txt", "line": 5}) == {"content": "five\n"}
    assert session.asked == []


async def test_a_denied_read_is_refused_with_a_clear_error(project: Path) -> None:
    session = Session(project)
    with pytest.raises(RequestError) as caught:
        await session.services.read_text_file({"path": str(project / "secrets" / "key.txt")})
    assert caught.value.code == REFUSED
    assert "Permission denied" in str(caught.value)
    assert "Secrets directory" in str(caught.value)
    assert session.asked == []


@pytest.mark.parametrize("decide", [approve, reject])
async def test_an_asked_read_runs_only_when_approved_inside_a_call_of_hives_own(
    project: Path, decide: Decide
) -> None:
    session = Session(project, decide=decide)
    read = session.services.read_text_file({"path": str(project / ".env")})
    if decide is approve:
        assert await read == {"content": "TOKEN=x\n"}
    else:
        with pytest.raises(RequestError, match=r"Permission denied: reading .*not that"):
            await read
    [asked] = session.asked
    assert asked.call_id == "hive-read_file-1"
    stream = session.verified()
    assert [type(event).__name__ for event in stream] == [
        "ToolStartEvent",
        "HitlRequestEvent",
        "ToolEndEvent",
        "TurnEndEvent",
    ]


async def test_an_asked_read_inside_a_running_call_uses_that_call(project: Path) -> None:
    session = Session(project)
    session.announce("r1", kind="read", status="in_progress")
    await session.services.read_text_file({"path": str(project / ".env")})
    assert session.asked[0].call_id == "r1"
    assert len([event for event in session.events if isinstance(event, ToolStartEvent)]) == 1
    session.verified()


async def test_reading_a_missing_file_is_an_error(project: Path) -> None:
    session = Session(project)
    with pytest.raises(RequestError, match="no file at"):
        await session.services.read_text_file({"path": str(project / "src" / "nope.txt")})
    with pytest.raises(RequestError):
        await session.services.read_text_file({"path": 3})


async def test_write_creates_parent_directories(project: Path) -> None:
    session = Session(project, decide=reject)
    target = project / "src" / "a" / "b" / "c.txt"
    assert await session.services.write_text_file({"path": str(target), "content": "hi\n"}) == {}
    assert target.read_text() == "hi\n"
    assert session.asked == []


@pytest.mark.parametrize("decide", [approve, reject])
async def test_a_write_outside_the_project_is_asked_like_write_file(
    project: Path, tmp_path: Path, decide: Decide
) -> None:
    session = Session(project, decide=decide)
    target = tmp_path / "outside" / "new.txt"
    assert session.policy.evaluate("write_file", {"path": str(target), "content": "x"}).action == "ask"
    write = session.services.write_text_file({"path": str(target), "content": "x"})
    if decide is approve:
        await write
        assert target.read_text() == "x"
    else:
        with pytest.raises(RequestError) as caught:
            await write
        assert caught.value.code == REFUSED
        assert not target.exists()
    [asked] = session.asked
    assert (asked.tool_name, asked.arguments) == ("write_file", {"path": str(target), "content": "x"})
    session.verified()


async def test_what_the_human_approved_for_a_running_call_is_not_asked_again(
    project: Path, tmp_path: Path
) -> None:
    session = Session(project)
    target = tmp_path / "outside" / "notes.md"
    session.announce("e1", kind="edit", status="in_progress", rawInput={"path": str(target), "content": "x"})
    assert await session.services.request_permission(permission("e1")) == selected("yes-1")
    await session.services.write_text_file({"path": str(target), "content": "x"})
    assert (await session.services.read_text_file({"path": str(target)}))["content"] == "x"
    assert len(session.asked) == 1
    await session.services.write_text_file({"path": str(tmp_path / "outside" / "other.md"), "content": "y"})
    assert len(session.asked) == 2  # another file: asked
    session.update(toolCallId="e1", status="completed")
    await session.services.write_text_file({"path": str(target), "content": "z"})
    assert len(session.asked) == 3  # the call is over: asked again
    session.verified()


async def test_an_approved_command_runs_in_a_terminal_without_a_second_ask(project: Path) -> None:
    session = Session(project)
    session.announce("x1", kind="execute", status="in_progress", rawInput={"command": "touch src/made"})
    await session.services.request_permission(permission("x1"))
    status, _ = await run(session, command="touch", args=["src/made"])
    assert status["exitCode"] == 0
    assert (project / "src" / "made").exists()
    assert len(session.asked) == 1


async def test_a_write_without_text_content_is_invalid(project: Path) -> None:
    session = Session(project)
    with pytest.raises(RequestError, match="Invalid params"):
        await session.services.write_text_file({"path": str(project / "src" / "x"), "content": 5})


async def test_an_unknown_method_is_method_not_found(project: Path) -> None:
    session = Session(project)
    with pytest.raises(RequestError) as caught:
        await session.services.handle("elicitation/create", {})
    assert caught.value.code == -32601
    assert await session.services.handle(
        "fs/read_text_file", {"path": str(project / "src" / "lines.txt"), "limit": 1}
    )


# -- terminals --------------------------------------------------------------------------------------------------


async def run(session: Session, **params: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Create a terminal, wait for it, read its output, release it."""
    services = session.services
    with anyio.fail_after(20):
        created = await services.create_terminal({"sessionId": "s", **params})
        status = await services.wait_for_terminal_exit(created)
        output = await services.terminal_output(created)
        assert await services.release_terminal(created) == {}
    return status, output


async def test_a_terminal_runs_a_shell_line_and_reports_output_and_exit(project: Path) -> None:
    session = Session(project)
    status, output = await run(session, command="echo hello; echo oops >&2; exit 3")
    assert status == {"exitCode": 3, "signal": None}
    assert output == {"output": "hello\noops\n", "truncated": False, "exitStatus": status}


async def test_a_terminal_runs_a_program_with_arguments_cwd_and_env(project: Path) -> None:
    session = Session(project)
    (project / "src" / "sub").mkdir()
    status, output = await run(
        session,
        command="sh",
        args=["-c", 'printf "%s|%s" "$PWD" "$GREETING"', "x y"],
        cwd="src/sub",
        env=[{"name": "GREETING", "value": "hi there"}, {"name": 5}],
    )
    assert status["exitCode"] == 0
    assert output["output"] == f"{project / 'src' / 'sub'}|hi there"
    [asked] = session.asked
    assert asked.tool_name == "execute_command"
    assert asked.arguments is not None
    assert asked.arguments["command"].startswith(f"cd {project / 'src' / 'sub'} && sh -c")


async def test_terminal_output_keeps_the_last_bytes_within_the_limit(project: Path) -> None:
    session = Session(project)
    status, output = await run(session, command="printf 'é%.0s' $(seq 1 50); printf END", outputByteLimit=10)
    assert status["exitCode"] == 0
    assert output["truncated"] is True
    # 10 bytes end in "END" after 3.5 two-byte characters: the split one is dropped, not garbled.
    assert output["output"] == "éééEND"


async def test_a_denied_command_never_runs(project: Path) -> None:
    session = Session(project)
    marker = project / "src" / "ran"
    with pytest.raises(RequestError) as caught:
        await session.services.create_terminal({"command": f"sudo touch {marker}"})
    assert caught.value.code == REFUSED
    assert not marker.exists()
    assert session.asked == []


async def test_a_rejected_command_never_runs(project: Path) -> None:
    session = Session(project, decide=reject)
    marker = project / "src" / "ran"
    with pytest.raises(RequestError, match="not that"):
        await session.services.create_terminal({"command": "touch", "args": [str(marker)]})
    assert not marker.exists()
    assert session.asked[0].arguments == {"command": f"touch {marker}"}
    session.verified()


def running(token: str) -> list[int]:
    """Processes whose command line holds ``token`` (zombies have none)."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as source:
                    if token.encode() in source.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


async def gone(token: str) -> None:
    with anyio.fail_after(10):
        while running(token):  # noqa: ASYNC110 - a process's end has no event to wait on
            await anyio.sleep(0.05)


async def test_kill_ends_the_command_and_its_children(project: Path) -> None:
    session = Session(project)
    services = session.services
    with anyio.fail_after(20):
        created = await services.create_terminal({"command": "sleep 301.25 & sleep 302.25"})
        while not (running("301.25") and running("302.25")):  # noqa: ASYNC110 - nor its start
            await anyio.sleep(0.05)
        assert await services.kill_terminal(created) == {}
        status = await services.wait_for_terminal_exit(created)
        await gone("301.25")
        await gone("302.25")
        assert status["exitCode"] is None
        assert status["signal"] == "SIGKILL"
        assert "exitStatus" in await services.terminal_output(created)
        await services.release_terminal(created)
    with pytest.raises(RequestError):
        await services.terminal_output(created)


async def test_release_and_aclose_kill_what_still_runs(project: Path) -> None:
    session = Session(project)
    services = session.services
    with anyio.fail_after(20):
        first = await services.create_terminal({"command": "sleep 303.25"})
        await services.create_terminal({"command": "sleep 304.25 & wait"})
        while not (running("303.25") and running("304.25")):  # noqa: ASYNC110 - nor its start
            await anyio.sleep(0.05)
        await services.release_terminal(first)
        await gone("303.25")
        assert running("304.25")
        await services.aclose()
        await gone("304.25")


async def test_background_children_die_with_release_after_the_command_exits(project: Path) -> None:
    session = Session(project)
    services = session.services
    with anyio.fail_after(20):
        created = await services.create_terminal({"command": "sleep 305.25 >/dev/null 2>&1 & echo started"})
        assert (await services.wait_for_terminal_exit(created))["exitCode"] == 0
        await services.release_terminal(created)
        await gone("305.25")


@pytest.mark.skipif(
    sandbox_status(SandboxSettings()).confinement is None, reason="no sandbox on this machine"
)
async def test_a_terminal_command_runs_in_hives_sandbox(project: Path, tmp_path: Path) -> None:
    session = Session(project)
    outside = tmp_path / "escaped.txt"
    status, _ = await run(session, command=f"echo x > {outside}; touch src/inside")
    assert status["exitCode"] != 0 or not outside.exists()
    assert not outside.exists()
    assert (project / "src" / "inside").exists()
    assert (
        len(session.asked) == 1
    )  # the redirect outside the project is asked about, then stopped by the sandbox


# -- questions --------------------------------------------------------------------------------------------------

QUESTION_OPTIONS = [
    {"optionId": "q1:1", "name": "Postgres", "kind": "allow_once"},
    {"optionId": "q1:2", "name": "SQLite, small", "kind": "allow_once"},
    {"optionId": "q1:cancel", "name": "Cancel", "kind": "reject_once"},
]


def ask(options: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return permission(
        "ask-3f2a-1-q1",
        QUESTION_OPTIONS if options is None else options,
        title="Which database?",
        kind="other",
        rawInput={
            "question": "Which database?",
            "header": "Database",
            "options": [{"label": "Postgres", "description": "the big one"}],
        },
    )


async def test_a_reasonix_question_becomes_a_question_request(project: Path) -> None:
    session = Session(project, answer=lambda request: {"Which database?": ["SQLite, small"]})
    session.announce("call_ask", title="ask", kind="other", status="in_progress")
    assert await session.services.request_permission(ask()) == selected("q1:2")
    [question] = session.questions
    assert question.id == "ask-3f2a-1-q1"
    assert question.call_id == "call_ask"
    [asked] = question.questions
    assert asked.question == "Which database?"
    assert asked.header == "Database"
    assert (asked.multi_select, asked.allow_free_text) == (False, False)
    assert asked.options == [
        QuestionOption(label="Postgres", description="the big one"),
        QuestionOption(label="SQLite, small"),
    ]
    assert session.asked == []
    assert len(session.tracker.calls) == 1  # the question is no tool call of its own
    session.verified()


async def test_the_question_is_read_from_the_ask_calls_questions_list(project: Path) -> None:
    session = Session(project, answer=lambda request: {"Which cache?": ["Redis"]})
    raw: dict[str, Any] = {
        "questions": [
            {"header": "DB", "question": "Which database?", "multiSelect": False, "options": []},
            {
                "header": "Cache",
                "question": "Which cache?",
                "multiSelect": True,
                "options": [{"label": "Redis", "description": "in memory"}],
            },
        ]
    }
    options = [
        {"optionId": "q2:1", "name": "Redis", "kind": "allow_once"},
        {"optionId": "q2:cancel", "name": "Cancel", "kind": "reject_once"},
    ]
    params = permission("ask-9-1-q2", options, title="ask", rawInput=raw)
    assert await session.services.request_permission(params) == selected("q2:1")
    [asked] = session.questions[0].questions
    assert (asked.question, asked.header, asked.multi_select) == ("Which cache?", "Cache", False)
    assert asked.options == [QuestionOption(label="Redis", description="in memory")]


@pytest.mark.parametrize(
    "answers",
    [
        None,
        {},
        {"Which database?": []},
        {"Which database?": ["MySQL"]},
        {"Which database?": ["Postgres", "SQLite, small"]},
        {"Other question": ["Postgres"]},
    ],
)
async def test_anything_but_one_offered_label_declines(project: Path, answers: Answers | None) -> None:
    session = Session(project, answer=lambda request: answers)
    assert await session.services.request_permission(ask()) == selected("q1:cancel")


async def test_a_declined_question_without_a_cancel_option_is_cancelled(project: Path) -> None:
    session = Session(project, answer=lambda request: None)
    assert await session.services.request_permission(ask(QUESTION_OPTIONS[:2])) == CANCELLED


async def test_a_question_with_no_question_service_is_declined(project: Path) -> None:
    session = Session(project)
    assert await session.services.request_permission(ask()) == selected("q1:cancel")
    assert session.events == []


@pytest.mark.parametrize(
    ("call_id", "ids", "expected"),
    [
        ("ask-1-q1", ["q1:1", "q1:cancel"], True),
        ("ask-1-q1", ["q1:1", "q1:2"], True),
        ("x-1", ["q2:1", "q2:cancel"], True),
        ("x-1", ["q2:1", "q2:2"], False),
        ("ask-1", ["allow", "reject"], False),
        ("ask-1", ["q1:cancel"], False),
        ("ask-1", [], False),
    ],
)
def test_what_counts_as_a_question(call_id: str, ids: list[str], expected: bool) -> None:
    options = [Option(option_id=option_id, name=option_id, kind=None) for option_id in ids]
    assert is_question({"toolCallId": call_id}, options) is expected


PERMISSION_CASES: list[tuple[dict[str, Any], dict[str, Any], tuple[str, dict[str, Any]]]] = [
    (
        {"kind": "execute", "rawInput": {"command": ["bash", "-lc", "ls -la"]}},
        {},
        ("execute_command", {"command": "ls -la"}),
    ),
    (
        {"kind": "execute", "rawInput": {"cmd": ["git", "status"]}},
        {},
        ("execute_command", {"command": "git status"}),
    ),
    ({"kind": "execute", "title": "npm test"}, {}, ("execute_command", {"command": "npm test"})),
    (
        {"kind": "other", "title": "Bash", "rawInput": {}},
        {"rawInput": {"command": "ls"}},
        ("execute_command", {"command": "ls"}),
    ),
    ({"kind": "read", "locations": [{"path": "/p/a.txt"}]}, {}, ("read_file", {"path": "/p/a.txt"})),
    (
        {"kind": "edit", "rawInput": {"filePath": "/p/a", "newText": "x"}},
        {},
        ("edit_file", {"path": "/p/a", "content": "x"}),
    ),
    ({"kind": "delete", "rawInput": {"path": "/p/a"}}, {}, ("delete_file", {"path": "/p/a"})),
    (
        {"kind": "move", "rawInput": {"from": "/p/a", "to": "/p/b"}},
        {},
        ("move_file", {"source": "/p/a", "destination": "/p/b"}),
    ),
    ({"kind": "fetch", "rawInput": {"url": "https://x"}}, {}, ("web_fetch", {"url": "https://x"})),
    ({"title": "Mystery", "rawInput": "not a mapping"}, {}, ("mystery", {})),
]


@pytest.mark.parametrize(("announced", "asked", "expected"), PERMISSION_CASES)
def test_permission_arguments_are_read_as_hives_own_tool_calls(
    announced: dict[str, Any], asked: dict[str, Any], expected: tuple[str, dict[str, Any]]
) -> None:
    tracker = ToolCallTracker(lambda event: None)
    call_id = tracker.upsert({"sessionUpdate": "tool_call", "toolCallId": "c1", **announced})
    assert call_id is not None
    call = tracker.get(call_id)
    assert call is not None
    assert permission_arguments(call, {"toolCallId": "c1", **asked}) == expected
