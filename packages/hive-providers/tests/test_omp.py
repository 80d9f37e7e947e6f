"""OMP through :class:`OmpBackend`, against rpc-ui transcripts written from OMP's source (``omp_transcripts``)
replayed by a fake ``omp`` (``omp_fake_cli.py``) that checks every line hive sends: questions answered (single
choice, multi-select, free text), declined (the run ends ``aborted``: a normal end), timed out, closed by OMP's own
cancel frame, dialogs of other extensions, a build that rejects ``set_ask_dialog`` (JSON mode and a versioned
warning), JSON mode without a question service, and bad input (malformed frames, unknown ids, an error status,
OMP dying with a question pending, the caller cancelling while it waits). Each turn runs under a
:class:`~hive_core.runners.SessionRunner` and its stream is judged by :func:`hive_protocol.verify`; the answer
shapes and label matching are also checked directly."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import msgspec
import pytest
from backend_harness import end_of
from backend_harness import fake_cli_options
from backend_harness import fake_program
from backend_harness import of
from backend_harness import text_of

from hive_core.questions import QuestionBridge
from hive_core.runners import SessionRunner
from hive_protocol import PROTOCOL_VERSION
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import SessionStartedEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import UserMessageRequest
from hive_protocol import verify
from hive_providers.backends.kit.errors import BackendUnavailable
from hive_providers.backends.kit.specs import ModelEndpoint
from hive_providers.backends.omp import OmpBackend
from hive_providers.backends.omp.ask import answer_frame
from hive_providers.backends.omp.ask import read_ask
from hive_providers.backends.registry import resolve_backend

pytestmark = pytest.mark.anyio

_HERE: Final = Path(__file__).parent
_TRANSCRIPTS: Final = _HERE / "omp_transcripts"
_FAKE: Final = _HERE / "omp_fake_cli.py"
_ASK: Final = "ASKME pick a database"
_VERSION: Final = "17.3.1"
_WAIT: Final = 30.0

Reply = Callable[[QuestionRequestEvent], dict[str, list[str] | str] | None]


class _Session:
    """One hive session on the fake OMP: the backend, its runner and question bridge, and every event written."""

    def __init__(
        self,
        tmp: Path,
        transcript: str,
        *,
        reply: Reply | None = None,
        ask: bool = True,
        question_timeout: float = _WAIT,
        cancel_on_question: bool = False,
    ) -> None:
        program = fake_program(tmp, "omp", _FAKE)
        self.log = tmp / "fake-omp.log"
        self.reply = reply
        self.cancel_on_question = cancel_on_question
        self.questions = QuestionBridge(timeout=question_timeout) if ask else None
        self.asked: list[QuestionRequestEvent] = []
        self.backend = OmpBackend(
            resolve_backend("omp"),
            fake_cli_options(
                tmp,
                program,
                {
                    "FAKE_OMP_TRANSCRIPT": str(_TRANSCRIPTS / f"{transcript}.jsonl"),
                    "FAKE_OMP_LOG": str(self.log),
                    "FAKE_OMP_VERSION": _VERSION,
                },
                questions=self.questions,
                startup_timeout=_WAIT,
            ),
        )
        self.runner = SessionRunner(self.backend, questions=self.questions)
        self.events: list[Event] = [
            SessionStartedEvent(session_id="omp-test", protocol_version=PROTOCOL_VERSION)
        ]
        if self.questions is not None:
            self.questions.attach(self._emit)

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, QuestionRequestEvent):
            self.asked.append(event)
            if self.cancel_on_question:
                assert self.runner.cancel()
            elif self.reply is not None:
                assert self.questions is not None
                self.questions.answer(QuestionResponseRequest(id=event.id, answers=self.reply(event)))

    async def turn(self, prompt: str = _ASK) -> list[Event]:
        start = len(self.events)
        with anyio.fail_after(_WAIT):
            await self.runner.run_turn(UserMessageRequest(content=prompt), self._emit)
        return self.events[start:]

    def runs(self) -> list[dict[str, Any]]:
        """What the fake saw, one entry per process (its problem is ``None`` when hive sent what it expected)."""
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def assert_clean(self) -> None:
        runs = self.runs()
        assert runs, "the fake omp never ran"
        assert [run["problem"] for run in runs] == [None] * len(runs), runs
        assert verify([msgspec.json.encode(event) for event in self.events]) == []
        pid = self.backend.last_pid
        assert pid is not None
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _answer(**by_question: list[str] | str | None) -> Reply:
    def reply(event: QuestionRequestEvent) -> dict[str, list[str] | str] | None:
        if by_question.get("decline") is not None:
            return None
        return {q.question: value for q in event.questions if (value := by_question.get(_key(q.question)))}

    return reply


def _key(question: str) -> str:
    return {"Which database?": "db", "Which features?": "features"}[question]


async def test_question_answered_and_the_run_ends_when_the_session_settles(tmp_path: Path) -> None:
    session = _Session(tmp_path, "ask_answered", reply=_answer(db="SQLite"))
    turn = await session.turn()
    assert len(session.asked) == 1
    question = session.asked[0].questions[0]
    assert (question.question, question.multi_select, question.allow_free_text) == (
        "Which database?",
        False,
        True,
    )
    assert [(o.label, o.description) for o in question.options] == [
        ("Postgres", None),
        ("SQLite", "Embedded"),
    ]
    starts = of(turn, ToolStartEvent)
    assert [s.tool for s in starts] == ["ask"]
    assert session.asked[0].call_id == starts[0].call_id
    # The background work after prompt_result was read: agent_end did not end the run.
    assert text_of(turn) == "Using SQLite.Background job finished."
    end = end_of(turn)
    assert end.stop_reason == "completed"
    assert end.input_tokens == 360  # three assistant messages of 120 input tokens each
    assert session.backend.session_id == "omp-s1"
    assert session.backend.last_command is not None
    assert session.backend.last_command[1:3] == ["--mode", "rpc-ui"]
    session.assert_clean()


@pytest.mark.parametrize(
    "features", [["Auth, SSO", "Search"], ["Auth, SSO, Search"]], ids=["labels", "joined"]
)
async def test_multi_select_and_single_choice_in_one_dialog(tmp_path: Path, features: list[str]) -> None:
    session = _Session(tmp_path, "ask_multi", reply=_answer(db="Postgres", features=features))
    turn = await session.turn()
    assert [q.multi_select for q in session.asked[0].questions] == [False, True]
    assert session.asked[0].questions[1].header == "Features"
    assert text_of(turn) == "Postgres with SSO and search."
    assert end_of(turn).stop_reason == "completed"
    session.assert_clean()


async def test_free_text_answers_are_custom_input(tmp_path: Path) -> None:
    session = _Session(
        tmp_path, "ask_free_text", reply=_answer(db="DuckDB", features=["Billing", "Export to CSV"])
    )
    turn = await session.turn()
    assert text_of(turn) == "DuckDB it is."
    session.assert_clean()


async def test_declined_question_ends_the_run_aborted_as_a_normal_end(tmp_path: Path) -> None:
    session = _Session(tmp_path, "ask_declined", reply=_answer(decline="yes"))
    turn = await session.turn()
    assert len(session.asked) == 1
    assert not of(turn, ErrorEvent), turn
    assert [(e.tool, e.success) for e in of(turn, ToolEndEvent)] == [("ask", False)]
    assert end_of(turn).stop_reason == "tool_terminated"
    session.assert_clean()


async def test_question_timeout_is_a_decline_without_timed_out(tmp_path: Path) -> None:
    # Nothing answers; the question service's own timeout declines: {cancelled: true}, never timedOut.
    session = _Session(tmp_path, "ask_declined", question_timeout=0.3)
    turn = await session.turn()
    assert end_of(turn).stop_reason == "tool_terminated"
    session.assert_clean()


async def test_omps_own_cancel_frame_closes_the_question_unanswered(tmp_path: Path) -> None:
    session = _Session(tmp_path, "omp_cancel")  # answers nothing: only OMP's cancel frame ends the question
    turn = await session.turn()
    assert len(session.asked) == 1
    assert text_of(turn) == "Went with SQLite."
    assert end_of(turn).stop_reason == "completed"
    # The question is closed: a late answer finds nothing waiting (and changes nothing).
    assert session.questions is not None
    late = QuestionResponseRequest(id=session.asked[0].id, answers={"Which database?": "Postgres"})
    assert session.questions.settle(late) == f"no question {session.asked[0].id!r} is waiting for an answer"
    session.assert_clean()


async def test_other_extensions_dialogs_are_cancelled_and_notices_ignored(tmp_path: Path) -> None:
    session = _Session(tmp_path, "other_dialogs", reply=_answer(db="SQLite"))
    turn = await session.turn()
    assert len(session.asked) == 1
    assert text_of(turn) == "Using SQLite."
    session.assert_clean()


async def test_a_build_rejecting_set_ask_dialog_runs_in_json_mode_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session = _Session(tmp_path, "rejects_set_ask_dialog", reply=_answer(db="SQLite"))
    turn = await session.turn()
    assert text_of(turn) == "No questions here."
    assert end_of(turn).stop_reason == "completed"
    assert session.backend.json_fallback
    assert session.backend.refusal == "Unknown command: set_ask_dialog"
    assert f"OMP {_VERSION} rejected set_ask_dialog" in caplog.text
    rpc, json_run = session.runs()
    assert rpc["mode"] == "rpc-ui"
    assert [json.loads(line)["type"] for line in rpc["received"]] == ["set_ask_dialog"]  # no prompt sent
    assert json_run["mode"] == "json"
    assert session.backend.session_id == "omp-json-1"
    session.assert_clean()


async def test_without_a_question_service_it_runs_in_json_mode(tmp_path: Path) -> None:
    session = _Session(tmp_path, "json_mode", ask=False)
    turn = await session.turn("hello")
    assert [s.tool for s in of(turn, ToolStartEvent)] == ["execute_command"]
    assert text_of(turn) == "MOCK_REPLY ok"
    assert [run["mode"] for run in session.runs()] == ["json"]
    assert session.backend.session_id == "omp-json-2"
    session.assert_clean()


async def test_malformed_frames_and_unknown_ids_are_skipped_or_declined(tmp_path: Path) -> None:
    session = _Session(tmp_path, "malformed", reply=_answer(db="SQLite"))
    turn = await session.turn()
    assert len(session.asked) == 1  # the two dialogs hive cannot show were declined, not asked
    assert text_of(turn) == "Using SQLite."
    assert end_of(turn).stop_reason == "completed"
    session.assert_clean()


async def test_an_error_status_is_the_turns_error(tmp_path: Path) -> None:
    session = _Session(tmp_path, "error_status")
    turn = await session.turn("hello")
    errors = of(turn, ErrorEvent)
    assert len(errors) == 1, turn
    assert "401 Unauthorized" in errors[0].message
    session.assert_clean()


async def test_dying_with_a_question_pending_is_a_clear_error(tmp_path: Path) -> None:
    session = _Session(tmp_path, "dies_with_question")  # never answers: the question is pending when OMP dies
    turn = await session.turn()
    assert len(session.asked) == 1
    errors = of(turn, ErrorEvent)
    assert len(errors) == 1, turn
    assert "exited with code 3 during the turn" in errors[0].message
    assert "segmentation fault" in errors[0].message
    assert [e.success for e in of(turn, ToolEndEvent)] == [False]
    assert session.questions is not None
    assert session.questions.settle(QuestionResponseRequest(id=session.asked[0].id, answers=None)) is not None
    session.assert_clean()


async def test_cancel_while_the_question_waits_sends_only_abort(tmp_path: Path) -> None:
    session = _Session(tmp_path, "caller_cancel", cancel_on_question=True)
    turn = await session.turn()
    assert len(session.asked) == 1
    assert end_of(turn).stop_reason == "cancelled"
    assert [e.success for e in of(turn, ToolEndEvent)] == [False]
    (run,) = session.runs()
    assert [json.loads(line)["type"] for line in run["received"]] == [
        "set_ask_dialog",
        "get_state",
        "prompt",
        "abort",
    ]
    session.assert_clean()


def test_fork_is_unavailable_before_anything_starts(tmp_path: Path) -> None:
    session = _Session(tmp_path, "json_mode", ask=False)
    options = replace(session.backend.options, resume="omp-s1", fork=True)
    with pytest.raises(BackendUnavailable, match="cannot copy a session"):
        OmpBackend(session.backend.spec, options)
    assert not session.log.exists()
    OmpBackend(session.backend.spec, replace(options, resume=None))  # nothing to copy: a fresh session


def test_offline_configuration_is_written_to_the_private_home(tmp_path: Path) -> None:
    session = _Session(tmp_path, "json_mode", ask=False)
    session.backend.options.endpoint = ModelEndpoint(base_url="http://127.0.0.1:9/v1", model="m1")
    env = session.backend.environment()
    models = tmp_path / "home" / ".omp" / "agent" / "models.yml"
    assert env["PI_CODING_AGENT_DIR"] == str(models.parent)
    assert env["HOME"] == str(tmp_path / "home")
    assert '    baseUrl: "http://127.0.0.1:9/v1"' in models.read_text()
    assert session.backend.command(rpc=False)[-4:-2] == ["--provider", "local"]


# -- the answer shapes, directly ----------------------------------------------------------------------------------

_DIALOG: Final = {
    "type": "extension_ui_request",
    "id": "ui-1",
    "method": "ask",
    "questions": [
        {"id": "db", "question": "Which database?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]},
        {
            "id": "f",
            "question": "Which features?",
            "options": [{"label": "A"}, {"label": "A, B"}, {"label": "C"}],
            "multi": True,
        },
    ],
}


_CASES: Final[list[tuple[list[str], list[str], list[dict[str, Any]]]]] = [
    (
        ["SQLite"],
        ["A, B, C"],
        [{"id": "db", "selectedOptions": ["SQLite"]}, {"id": "f", "selectedOptions": ["A, B", "C"]}],
    ),
    (
        ["sqlite"],
        ["A", "A"],
        [
            {"id": "db", "selectedOptions": [], "customInput": "sqlite"},
            {"id": "f", "selectedOptions": ["A"]},
        ],
    ),
    (
        ["Postgres", "SQLite"],
        ["C, C"],
        [
            {"id": "db", "selectedOptions": [], "customInput": "Postgres, SQLite"},
            {"id": "f", "selectedOptions": [], "customInput": "C, C"},
        ],
    ),
    (
        ["Postgres"],
        ["D", "C"],
        [
            {"id": "db", "selectedOptions": ["Postgres"]},
            {"id": "f", "selectedOptions": ["C"], "customInput": "D"},
        ],
    ),
]


@pytest.mark.parametrize(
    ("db", "features", "expected"),
    _CASES,
    ids=["labels", "not-a-label", "two-on-single-and-a-label-twice", "label-and-text"],
)
def test_answers_never_take_a_shape_omp_rejects(
    db: list[str], features: list[str], expected: list[Any]
) -> None:
    dialog = read_ask(_DIALOG)
    assert dialog is not None
    frame = answer_frame(dialog, {"Which database?": db, "Which features?": features})
    assert frame == {"type": "extension_ui_response", "id": "ui-1", "answers": expected}


def test_a_missing_answer_is_a_decline() -> None:
    dialog = read_ask(_DIALOG)
    assert dialog is not None
    declined = {"type": "extension_ui_response", "id": "ui-1", "cancelled": True}
    assert answer_frame(dialog, {"Which database?": ["SQLite"]}) == declined
    assert answer_frame(dialog, {"Which database?": ["SQLite"], "Which features?": [" "]}) == declined
    assert answer_frame(dialog, None) == declined


def test_unreadable_dialogs_are_none() -> None:
    assert read_ask({**_DIALOG, "questions": []}) is None
    assert read_ask({**_DIALOG, "questions": [{"question": "no id"}]}) is None
    assert read_ask({**_DIALOG, "questions": [_DIALOG["questions"][0], _DIALOG["questions"][0]]}) is None
    assert read_ask({**_DIALOG, "method": "select"}) is None


def test_ui_requests_decode_by_method_and_the_rest_to_unknown() -> None:
    from hive_providers.backends.kit.wire import Unknown
    from hive_providers.backends.omp import wire

    ask = wire.UI_REQUESTS.decode(_DIALOG)
    assert isinstance(ask, wire.AskRequest)
    assert ask.id == "ui-1"
    assert ask.questions is not None
    assert ask.questions[1].multi is True
    assert ask.questions[0].options == [wire.AskOption(label="Postgres"), wire.AskOption(label="SQLite")]
    cancel = {"type": "extension_ui_request", "id": "ui-x", "method": "cancel", "targetId": "ui-1"}
    assert wire.UI_REQUESTS.decode(cancel) == wire.CancelNotice(target_id="ui-1")
    notice = {"type": "extension_ui_request", "id": "n", "method": "notify", "message": "hi"}
    assert wire.UI_REQUESTS.decode(notice) == Unknown("notify", notice)
    assert read_ask({**_DIALOG, "questions": "nope"}) is None  # unreadable: declined, as before
