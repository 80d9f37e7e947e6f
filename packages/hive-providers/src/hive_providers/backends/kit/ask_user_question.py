"""Questions in the shape of Claude Code's ``AskUserQuestion`` tool, which Pi's ask extension of hive's copies.

The input is ``{"questions": [{"question", "header", "multiSelect", "options": [{"label", "description"}]}]}``;
the answers go back as ``{question text: "label, label"}`` (the free text of a question answered in words).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import Final

from hive_protocol import Question
from hive_protocol import QuestionOption
from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.tool_calls import text_of

__all__ = ["DECLINED_QUESTION", "question_answers", "questions_of"]

DECLINED_QUESTION: Final = "The user declined to answer the question."
"""What an agent is told of a question that got no answer."""


def questions_of(tool_input: Mapping[str, Any]) -> list[Question]:
    """The questions of an ``AskUserQuestion`` input (each allows free text: Claude offers "Other")."""
    questions: list[Question] = []
    for entry in map(as_mapping, as_list(tool_input.get("questions"))):
        text = text_of(entry.get("question"))
        if text is None:
            continue
        options = [
            QuestionOption(label=label, description=text_of(option.get("description")))
            for option in map(as_mapping, as_list(entry.get("options")))
            if (label := text_of(option.get("label"))) is not None
        ]
        questions.append(
            Question(
                question=text,
                header=text_of(entry.get("header")),
                multi_select=entry.get("multiSelect") is True,
                options=options,
                allow_free_text=True,
            )
        )
    return questions


def question_answers(questions: list[Question], answers: Mapping[str, list[str]]) -> dict[str, str] | None:
    """Claude's ``answers`` (question text to one string) from hive's, or ``None`` when a question went
    unanswered: several labels are joined with ``", "``; a single-choice question answered with more than one
    value, or with nothing, counts as unanswered."""
    written: dict[str, str] = {}
    for question in questions:
        chosen = [value for value in answers.get(question.question, []) if value]
        if not chosen or (len(chosen) > 1 and not question.multi_select):
            return None
        written[question.question] = ", ".join(chosen)
    return written
