""":class:`OpenCodeServeBackend` against recorded ``opencode serve`` transcripts, replayed by a fake server.

The fake (:mod:`opencode_fake`) is a real process on 127.0.0.1 started by the backend as it starts OpenCode; it
logs every request, so each test checks both the hive events (judged by :func:`hive_protocol.verify`) and what
the backend answered: text without doubles, tokens, tool calls, permissions (once / always / reject, the rules
first), questions (answered, declined, an answer OpenCode refuses, a question settled already, labels not
offered), subagents, malformed and foreign events, a server that dies with a question pending, resume and fork,
and OpenCode 2.0.32's form wire (``form.created``, the form routes, ``session.execution.*``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import msgspec
import pytest
from backend_harness import clean
from backend_harness import end_of
from backend_harness import fake_cli_options
from backend_harness import fake_program
from backend_harness import of
from backend_harness import text_of
from question_fakes import NeverAnswers

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.approvals import Verdict
from hive_core.runners import SessionRunner
from hive_core.testing import Answerer
from hive_protocol import AgentWorkEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import UserMessageRequest
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.opencode import OpenCodeServeBackend
from hive_providers.backends.registry import resolve_backend

pytestmark = pytest.mark.anyio

HERE: Final = Path(__file__).parent
TRANSCRIPTS: Final = HERE / "opencode_transcripts"
WAIT: Final = 30.0
"""Seconds a turn may take before the test fails (a bound, not a synchronisation)."""


class Policy:
    """Gives every call one verdict."""

    def __init__(self, action: str = "ask") -> None:
        self.action = action

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        if self.action == "deny":
            return Verdict.deny("commands are off")
        if self.action == "allow":
            return Verdict.allow("fine")
        return Verdict.ask(f"{tool_name} needs approval")

    def is_read_only(self, tool_name: str) -> bool:
        return False


class Approvals:
    def __init__(self, approve: bool, *, always: bool = False) -> None:
        self.approve = approve
        self.always = always
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return ApprovalDecision(approved=self.approve, always_approve=self.always)


class Fake:
    """One fake server's transcript, request log and the backend driving it."""

    def __init__(self, tmp: Path, transcript: Path, **options: Any) -> None:
        self.log = tmp / "requests.jsonl"
        program = fake_program(tmp, "opencode", HERE / "opencode_fake.py")
        environment = {"OPENCODE_FAKE_TRANSCRIPT": str(transcript), "OPENCODE_FAKE_LOG": str(self.log)}
        forms = options.pop("forms", False)
        self.backend = OpenCodeServeBackend(
            resolve_backend("opencode"),
            fake_cli_options(tmp, program, environment, startup_timeout=20.0, **options),
            forms=forms,
        )

    def requests(self, method: str = "POST") -> list[tuple[str, Any]]:
        if not self.log.exists():
            return []
        entries = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [(e["path"], e["body"]) for e in entries if e["method"] == method]

    def answers(self) -> list[tuple[str, Any]]:
        return [
            (p, b)
            for p, b in self.requests()
            if p.startswith(("/question/", "/permission/", "/api/session/"))
        ]

    async def turn(self, prompt: str = "go") -> list[Event]:
        events: list[Event] = []
        try:
            with anyio.fail_after(WAIT):
                await SessionRunner(self.backend).run_turn(UserMessageRequest(content=prompt), events.append)
        finally:
            await self.backend.aclose()
        return clean(events)


def derived(tmp: Path, name: str, change: Callable[[list[dict[str, Any]]], None]) -> Path:
    """A copy of transcript ``name`` with ``change`` applied to its lines (header first)."""
    lines = [json.loads(line) for line in (TRANSCRIPTS / name).read_text().splitlines()]
    change(lines)
    path = tmp / name
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


async def test_a_text_turn_streams_each_word_once_and_counts_tokens(tmp_path: Path) -> None:
    fake = Fake(tmp_path, TRANSCRIPTS / "text.jsonl")
    events = await fake.turn("hello")
    assert text_of(events) == "MOCK_REPLY ok"
    end = end_of(events)
    assert (end.stop_reason, end.input_tokens, end.output_tokens) == ("completed", 8051, 5)
    assert fake.backend.session_id == "ses_dcd82423cffe17lofoqqbDa61x"
    [(path, body)] = [(p, b) for p, b in fake.requests() if p.endswith("/prompt_async")]
    assert path == "/session/ses_dcd82423cffe17lofoqqbDa61x/prompt_async"
    assert body == {"parts": [{"type": "text", "text": "hello"}]}


@pytest.mark.parametrize(
    ("policy", "approve", "always", "reply"),
    [
        ("ask", True, False, {"reply": "once"}),
        ("ask", True, True, {"reply": "always"}),
        ("allow", False, False, {"reply": "once"}),
    ],
    ids=["approved-once", "approved-always", "allowed-by-rules"],
)
async def test_an_allowed_permission(
    tmp_path: Path, policy: str, approve: bool, always: bool, reply: dict[str, str]
) -> None:
    approvals = Approvals(approve, always=always)
    fake = Fake(tmp_path, TRANSCRIPTS / "permission_once.jsonl", policy=Policy(policy), approvals=approvals)
    events = await fake.turn("RUNTOOL go")
    [start] = of(events, ToolStartEvent)
    [end] = of(events, ToolEndEvent)
    assert (start.tool, start.input) == ("execute_command", {"command": "touch hive_tool_ran.txt"})
    assert (end.call_id, end.success) == (start.call_id, True)
    assert fake.answers() == [("/permission/per_2327dde70001DHuYuc2tR9cbPr/reply", reply)]
    if policy == "ask":
        [asked] = approvals.requests
        assert (asked.call_id, asked.tool_name) == (start.call_id, "execute_command")
    else:
        assert approvals.requests == []
    assert text_of(events) == "MOCK_REPLY done"


@pytest.mark.parametrize(
    ("policy", "refusal", "reply"),
    [
        ("ask", "rejected", {"reply": "reject"}),
        ("deny", "denied", {"reply": "reject", "message": "commands are off"}),
    ],
)
async def test_a_refused_permission(tmp_path: Path, policy: str, refusal: str, reply: dict[str, str]) -> None:
    fake = Fake(
        tmp_path, TRANSCRIPTS / "permission_reject.jsonl", policy=Policy(policy), approvals=Approvals(False)
    )
    events = await fake.turn("RUNTOOL go")
    [start] = of(events, ToolStartEvent)
    [end] = of(events, ToolEndEvent)
    assert start.input == {"command": "touch hive_tool_ran.txt"}
    assert (end.success, end.refusal) == (False, refusal)
    assert fake.answers() == [("/permission/per_2327ded2b001HuW2eAiGl9h5as/reply", reply)]
    assert end_of(events).stop_reason == "completed"


async def test_a_question_is_answered_with_its_labels(tmp_path: Path) -> None:
    questions = Answerer({"Which database?": ["SQLite"]})
    fake = Fake(tmp_path, TRANSCRIPTS / "question_answered.jsonl", questions=questions)
    events = await fake.turn("ASKME go")
    [asked] = questions.requests
    assert asked.id == "que_2327dfdb7001KivM5e5X1Rmm5o"
    [question] = asked.questions
    assert (question.question, question.header, question.multi_select) == (
        "Which database?",
        "Database",
        False,
    )
    assert [(o.label, o.description) for o in question.options] == [
        ("SQLite", "Use SQLite"),
        ("PostgreSQL", "Use PostgreSQL"),
    ]
    assert question.allow_free_text is True  # OpenCode's default: "custom" unless it says otherwise
    [start] = of(events, ToolStartEvent)
    assert (start.tool, asked.call_id) == ("question", start.call_id)
    assert fake.answers() == [("/question/que_2327dfdb7001KivM5e5X1Rmm5o/reply", {"answers": [["SQLite"]]})]
    assert text_of(events).startswith("MOCK_REPLY answered: User has answered your questions")


@pytest.mark.parametrize(
    ("answers", "responses", "sent"),
    [
        (None, {}, ["reject"]),
        # Refused by OpenCode (400): the question stays pending, so it is declined.
        (
            {"Which database?": ["SQLite"]},
            {"POST /question/.*/reply": [[400, {"name": "BadRequest"}]]},
            ["reply", "reject"],
        ),
        # Settled already, or never known (404): nothing more to say.
        (
            {"Which database?": ["SQLite"]},
            {"POST /question/.*/reply": [[404, {"_tag": "QuestionNotFoundError"}]]},
            ["reply"],
        ),
        # Two answers to a single choice cannot be given.
        ({"Which database?": ["SQLite", "PostgreSQL"]}, {}, ["reject"]),
    ],
    ids=["declined", "refused-400", "settled-404", "two-for-one"],
)
async def test_a_question_not_answered(
    tmp_path: Path, answers: dict[str, list[str]] | None, responses: dict[str, Any], sent: list[str]
) -> None:
    def configure(lines: list[dict[str, Any]]) -> None:
        lines[0]["responses"] = responses

    transcript = derived(tmp_path, "question_rejected.jsonl", configure)
    fake = Fake(tmp_path, transcript, questions=Answerer(answers))
    events = await fake.turn("ASKME go")
    assert [p.rsplit("/", 1)[1] for p, _ in fake.answers()] == sent
    [end] = of(events, ToolEndEvent)
    assert end.success is False
    assert end_of(events).stop_reason == "completed"


async def test_a_label_not_offered_is_declined_when_free_text_is_not_allowed(tmp_path: Path) -> None:
    def no_free_text(lines: list[dict[str, Any]]) -> None:
        for line in lines:
            if line.get("type") == "question.asked":
                line["properties"]["questions"][0]["custom"] = False

    transcript = derived(tmp_path, "question_rejected.jsonl", no_free_text)
    questions = Answerer({"Which database?": ["Redis"]})
    fake = Fake(tmp_path, transcript, questions=questions)
    await fake.turn("ASKME go")
    assert questions.requests[0].questions[0].allow_free_text is False
    assert [p.rsplit("/", 1)[1] for p, _ in fake.answers()] == ["reject"]


async def test_free_text_is_sent_where_allowed(tmp_path: Path) -> None:
    fake = Fake(
        tmp_path, TRANSCRIPTS / "question_answered.jsonl", questions=Answerer({"Which database?": ["Redis"]})
    )
    await fake.turn("ASKME go")
    assert fake.answers() == [("/question/que_2327dfdb7001KivM5e5X1Rmm5o/reply", {"answers": [["Redis"]]})]


async def test_without_a_question_service_questions_are_declined(tmp_path: Path) -> None:
    fake = Fake(tmp_path, TRANSCRIPTS / "question_rejected.jsonl")
    await fake.turn("ASKME go")
    assert [p.rsplit("/", 1)[1] for p, _ in fake.answers()] == ["reject"]


async def test_a_server_that_dies_with_a_question_pending_fails_the_turn(tmp_path: Path) -> None:
    def die(lines: list[dict[str, Any]]) -> None:
        lines[0]["die_after"] = "question.asked"

    transcript = derived(tmp_path, "question_answered.jsonl", die)
    fake = Fake(tmp_path, transcript, questions=NeverAnswers())
    events = await fake.turn("ASKME go")
    [error] = of(events, ErrorEvent)
    assert "opencode serve" in error.message, error.message
    assert "exit status 3" in error.message, error.message
    [end] = of(events, ToolEndEvent)
    assert end.success is False
    assert fake.backend.server is None or not fake.backend.server.running


async def test_malformed_and_foreign_events_change_nothing(tmp_path: Path) -> None:
    fake = Fake(tmp_path, TRANSCRIPTS / "malformed.jsonl")
    events = await fake.turn()
    assert text_of(events) == "MOCK_REPLY ok"
    assert of(events, ToolStartEvent) == []
    assert of(events, ErrorEvent) == []
    assert fake.answers() == []
    assert end_of(events).stop_reason == "completed"


async def test_a_subagent_is_agent_work_and_its_text_stays_out(tmp_path: Path) -> None:
    fake = Fake(tmp_path, TRANSCRIPTS / "subagent.jsonl")
    events = await fake.turn()
    assert text_of(events) == "PARENT_TEXT done"
    snapshots = of(events, AgentWorkEvent)
    assert snapshots, events
    assert {item.id for snapshot in snapshots for item in snapshot.items} == {
        "opencode:ses_child00000000000000000001"
    }
    [last] = snapshots[-1].items
    assert (last.status, last.title, last.summary, last.tool_calls) == (
        "completed",
        "Explore the repo (@explore subagent)",
        "CHILD_TEXT found it",
        1,
    )
    assert snapshots[0].items[0].blocks_completion is True
    assert [s.tool for s in of(events, ToolStartEvent)] == ["task"]
    end = end_of(events)
    assert (end.input_tokens, end.output_tokens, end.cached_input_tokens) == (35, 5, 5)


async def test_resume_reuses_the_session_and_fork_copies_it(tmp_path: Path) -> None:
    session = "ses_dcd82423cffe17lofoqqbDa61x"
    fake = Fake(tmp_path, TRANSCRIPTS / "text.jsonl", resume=session)
    assert fake.backend.session_id == session
    await fake.turn()
    assert not any(p == "/session" for p, _ in fake.requests())
    assert f"/session/{session}" in [p for p, _ in fake.requests("GET")]

    forked_dir = tmp_path / "fork"
    forked_dir.mkdir()
    forked = Fake(forked_dir, TRANSCRIPTS / "text.jsonl", resume=session, fork=True)
    assert forked.backend.session_id is None
    events = await forked.turn()
    assert f"/session/{session}/fork" in [p for p, _ in forked.requests()]
    assert forked.backend.session_id == f"{session}_fork"
    assert end_of(events).stop_reason == "completed"


async def test_resuming_an_unknown_session_is_a_clear_error(tmp_path: Path) -> None:
    fake = Fake(tmp_path, TRANSCRIPTS / "text.jsonl", resume="ses_unknown")
    try:
        with anyio.fail_after(WAIT), pytest.raises(BackendStartError, match="ses_unknown"):
            await fake.backend(UserMessageRequest(content="go"), lambda event: None)
    finally:
        await fake.backend.aclose()


async def test_forms_v2_answers_single_choice_as_a_string_and_multi_select_as_a_list(tmp_path: Path) -> None:
    questions = Answerer({"Which database?": ["SQLite"], "Which features?": ["auth", "my own"]})
    fake = Fake(tmp_path, TRANSCRIPTS / "forms_v2.jsonl", questions=questions, forms=True)
    events = await fake.turn()
    [asked] = questions.requests  # the MCP form is left alone
    assert asked.id == "frm_q1"
    assert [(q.question, q.multi_select) for q in asked.questions] == [
        ("Which database?", False),
        ("Which features?", True),
    ]
    assert fake.answers() == [
        (
            "/api/session/ses_form000000000000000000001/form/frm_q1/reply",
            {"answers": {"q0": "SQLite", "q1": ["auth", "my own"]}},
        )
    ]
    assert end_of(events).stop_reason == "completed"
    assert text_of(events) == "MOCK_REPLY answered"


@pytest.mark.parametrize(
    ("status", "sent"),
    [(400, ["reply", "cancel"]), (409, ["reply"])],
    ids=["invalid-400-declines", "settled-409"],
)
async def test_forms_v2_refused_answers(tmp_path: Path, status: int, sent: list[str]) -> None:
    def configure(lines: list[dict[str, Any]]) -> None:
        lines[0]["responses"] = {"POST /api/session/.*/form/.*/reply": [[status, {"name": "FormError"}]]}

    transcript = derived(tmp_path, "forms_v2.jsonl", configure)
    questions = Answerer({"Which database?": ["SQLite"]})
    fake = Fake(tmp_path, transcript, questions=questions, forms=True)
    await fake.turn()
    assert [p.rsplit("/", 1)[1] for p, _ in fake.answers()] == sent
    if status == 400:
        assert fake.answers()[1][1] == {"message": "The user declined to answer this question"}


async def test_forms_v2_interrupted_is_terminal(tmp_path: Path) -> None:
    fake = Fake(
        tmp_path,
        TRANSCRIPTS / "forms_v2_interrupted.jsonl",
        questions=Answerer({"Which database?": ["Redis"]}),
        forms=True,
    )
    events = await fake.turn()
    assert [p.rsplit("/", 1)[1] for p, _ in fake.answers()] == ["cancel"]  # Redis is not offered
    [end] = of(events, ToolEndEvent)
    assert end.success is False
    assert end_of(events).stop_reason == "cancelled"


async def test_aclose_leaves_no_process(tmp_path: Path) -> None:
    fake = Fake(tmp_path, TRANSCRIPTS / "text.jsonl")
    await fake.turn()
    server = fake.backend.server
    assert server is None
    log = tmp_path / "home" / "opencode-serve.log"
    assert "listening on http://127.0.0.1:" in log.read_text()
    assert os.environ.get("OPENCODE_SERVER_PASSWORD") is None


def test_recorded_events_decode_to_their_structs_and_the_rest_to_unknown() -> None:
    from hive_providers.backends.kit.wire import Unknown
    from hive_providers.backends.opencode import wire

    lines = [json.loads(line) for line in (TRANSCRIPTS / "text.jsonl").read_text().splitlines()]
    events = [line for line in lines if isinstance(line.get("type"), str) and "properties" in line]
    decoded = [wire.decode_event(event) for event in events]
    known = {type(typed) for typed in decoded if not isinstance(typed, Unknown)}
    assert {wire.SessionStatus, wire.MessageUpdated, wire.MessagePartUpdated} <= known, known
    part = {"id": "p", "sessionID": "s", "messageID": "m", "type": "text", "text": "hi", "time": {"start": 1}}
    assert wire.PARTS.decode(part) == wire.TextPart(
        id="p", session_id="s", message_id="m", text="hi", time={"start": 1}
    )
    echo = wire.PARTS.decode({key: value for key, value in part.items() if key != "time"})
    assert isinstance(echo, wire.TextPart)
    assert echo.time is msgspec.UNSET
    assert wire.PARTS.decode({"type": "step-start"}) == Unknown("step-start", {"type": "step-start"})
    newer = {"type": "lsp.updated", "properties": {}}
    assert wire.decode_event(newer) == Unknown("lsp.updated", newer)
    bad = wire.decode_event({"type": "message.part.delta", "properties": {"partID": None, "delta": 7}})
    assert isinstance(bad, Unknown)
    assert bad.kind == "message.part.delta"
    assert bad.problem
