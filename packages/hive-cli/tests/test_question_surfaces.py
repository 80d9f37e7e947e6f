"""An agent's questions on every surface of the CLI: ``-o jsonl`` records, the ``-o json`` document, the decline
(with its reason) when there is no terminal to ask at, and the terminal questioner's own timeout.

The coding agent is the providers' fake ACP agent replaying the recorded Reasonix ask (its ``ask`` tool's question
arrives as a permission request hive turns into a ``question_request``), put on ``PATH`` as ``reasonix``.
"""

from __future__ import annotations

import io
import math
import os
from typing import cast

import anyio
import pytest
from agent_cli_harness import ASK_TRANSCRIPT
from agent_cli_harness import FakeCli
from cli_harness import Workspace

from hive_cli.output import jsonl_record
from hive_cli.output import question_outcome
from hive_cli.output import question_record
from hive_cli.questioner import DECLINED_AT_TERMINAL
from hive_cli.questioner import NO_TERMINAL
from hive_cli.questioner import QUESTION_TIMEOUT_KEY
from hive_cli.questioner import TerminalQuestioner
from hive_cli.questioner import question_timeout
from hive_core.config import LoadedConfig
from hive_core.questions import DEFAULT_QUESTION_TIMEOUT
from hive_core.questions import Answers
from hive_protocol import Question
from hive_protocol import QuestionOption
from hive_protocol import QuestionRequestEvent

PROMPT = "ASKME which database should I use?"
QUESTION = Question(
    question="Which database?",
    header="Storage",
    multi_select=False,
    options=[QuestionOption(label="SQLite", description="a file"), QuestionOption(label="PostgreSQL")],
    allow_free_text=False,
)


def _reasonix(ws: Workspace) -> tuple[FakeCli, dict[str, str]]:
    cli = FakeCli.install(ws, "reasonix")
    env = cli.env("cli-hello")
    env["HIVE_TEST_TRANSCRIPT"] = str(ASK_TRANSCRIPT)
    return cli, env


def _declined_on_the_wire(cli: FakeCli) -> None:
    """The CLI was told the question was declined: Reasonix's cancel option, not an answer."""
    [answer] = [m for m in cli.log() if "result" in m and "outcome" in m["result"]]
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "q1:cancel"}


def test_jsonl_records_the_question_and_its_decline_without_a_terminal(ws: Workspace) -> None:
    cli, env = _reasonix(ws)
    result = ws.run("-p", PROMPT, "--agent", "reasonix", "-o", "jsonl", env=env)
    assert result.code == 0, result
    records = result.records()
    kinds = [record["type"] for record in records]
    assert kinds[0] == "start"
    assert kinds[-1] == "done"
    [asked] = [record for record in records if record["type"] == "question"]
    [settled] = [record for record in records if record["type"] == "question_answer"]
    assert kinds.index("question") < kinds.index("question_answer") < kinds.index("text"), kinds
    assert asked["id"] == "ask-1-q1"
    [question] = asked["questions"]
    assert question["question"] == "Which database?"
    assert "SQLite" in [option["label"] for option in question["options"]]
    assert question["multi_select"] is False
    assert settled == {"type": "question_answer", "id": "ask-1-q1", "declined": NO_TERMINAL}
    _declined_on_the_wire(cli)
    assert "Which database?" not in result.stderr  # nothing was asked on a terminal there is none of


def test_the_json_document_holds_the_questions_asked(ws: Workspace) -> None:
    cli, env = _reasonix(ws)
    result = ws.run("-p", PROMPT, "--agent", "reasonix", "-o", "json", env=env)
    assert result.code == 0, result
    document = result.line_document()
    [asked] = document["questions"]
    assert asked["id"] == "ask-1-q1"
    assert asked["declined"] == NO_TERMINAL
    assert "answers" not in asked
    assert asked["questions"][0]["question"] == "Which database?"
    assert "MOCK_REPLY done" in document["content"]
    _declined_on_the_wire(cli)


def test_a_plain_one_shot_run_declines_too_and_never_hangs(ws: Workspace) -> None:
    cli, env = _reasonix(ws)
    result = ws.run("run", PROMPT, "--agent", "reasonix", env=env, timeout=60)
    assert result.code == 0, result
    _declined_on_the_wire(cli)


# -- the records -------------------------------------------------------------------------------------------------


def test_the_records_of_a_question_and_its_outcomes() -> None:
    request = QuestionRequestEvent(id="q1", call_id="c1", questions=[QUESTION])
    record = question_record(request)
    assert record == {
        "type": "question",
        "id": "q1",
        "call_id": "c1",
        "questions": [
            {
                "question": "Which database?",
                "header": "Storage",
                "options": [{"label": "SQLite", "description": "a file"}, {"label": "PostgreSQL"}],
                "multi_select": False,
                "allow_free_text": False,
            }
        ],
    }
    assert jsonl_record(request, show_thinking=False) == record  # a question_request on a served stream
    answered = question_outcome(request, {"Which database?": ["SQLite"]}, None)
    assert answered == {"type": "question_answer", "id": "q1", "answers": {"Which database?": ["SQLite"]}}
    assert question_outcome(request, None, None)["declined"] == "declined"


# -- the terminal questioner: reasons, timeout -------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _watched(questioner: TerminalQuestioner) -> list[tuple[str, Answers | None, str | None]]:
    seen: list[tuple[str, Answers | None, str | None]] = []
    questioner.on_request = lambda request: seen.append(("asked", None, request.id))
    questioner.on_settled = lambda request, answers, reason: seen.append(("settled", answers, reason))
    return seen


@pytest.mark.anyio
async def test_the_questioner_says_why_it_declined() -> None:
    request = QuestionRequestEvent(id="q1", questions=[QUESTION])
    absent = TerminalQuestioner(stdin=io.StringIO("1\n"), stderr=io.StringIO(), interactive=False)
    seen = _watched(absent)
    assert await absent.ask(request) is None
    assert seen == [("asked", None, "q1"), ("settled", None, NO_TERMINAL)]
    empty = TerminalQuestioner(stdin=io.StringIO("\n"), stderr=io.StringIO(), interactive=True)
    seen = _watched(empty)
    assert await empty.ask(request) is None
    assert seen[-1] == ("settled", None, DECLINED_AT_TERMINAL)
    chosen = TerminalQuestioner(stdin=io.StringIO("2\n"), stderr=io.StringIO(), interactive=True)
    seen = _watched(chosen)
    assert await chosen.ask(request) == {"Which database?": ["PostgreSQL"]}
    assert seen[-1] == ("settled", {"Which database?": ["PostgreSQL"]}, None)


@pytest.mark.anyio
async def test_a_question_nobody_answers_at_the_terminal_times_out_as_a_decline() -> None:
    read, write = os.pipe()  # a terminal nobody types at: the read blocks
    stdin = os.fdopen(read, "r")
    try:
        shown = io.StringIO()
        questioner = TerminalQuestioner(stdin=stdin, stderr=shown, interactive=True, timeout=0.3)
        seen = _watched(questioner)
        with anyio.fail_after(10):
            assert await questioner.ask(QuestionRequestEvent(id="q1", questions=[QUESTION])) is None
        assert seen[-1] == ("settled", None, "no answer within 0.3 s")
        assert "no answer within 0.3 s" in shown.getvalue()
    finally:
        os.write(write, b"\n")  # would end a read left behind (none is: the event loop reads, no thread)
        os.close(write)
        stdin.close()


class _Config:
    def __init__(self, value: object) -> None:
        self.value = value

    def get(self, key: str) -> object:
        assert key == QUESTION_TIMEOUT_KEY
        return self.value


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, DEFAULT_QUESTION_TIMEOUT), (90, 90.0), (2.5, 2.5), (0, None), ("soon", DEFAULT_QUESTION_TIMEOUT)],
)
def test_the_configured_question_timeout(value: object, expected: float | None) -> None:
    assert question_timeout(cast("LoadedConfig", _Config(value))) == expected
    assert not math.isnan(DEFAULT_QUESTION_TIMEOUT)
