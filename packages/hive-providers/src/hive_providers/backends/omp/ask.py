"""OMP's ``ask`` dialog: its questions as hive's, and hive's answers in the one shape OMP accepts.

Once ``set_ask_dialog`` is on, every question of one call of OMP's ``ask`` tool arrives as one
``extension_ui_request`` with ``method: "ask"`` and ``questions: [{id, question, header?, options: [{label,
description?}], multi?, recommended?}]``. The reply is one ``extension_ui_response`` with ``answers``: one
``{id, selectedOptions, customInput?}`` per question, in the request's order. OMP validates it and fails the
tool on any mismatch (an unknown label, a label twice, two answers to a single-choice question, an option and free
text together on one), so hive never sends such a shape: a single-choice answer selects an option only when its
text is exactly that option's label; a multi-select answer selects the labels its values are (a value that is
``"A, B"`` splits into distinct labels, the longest label matched first); everything else is ``customInput``.
A question left without an answer, or no answers at all, is a decline: ``{cancelled: true}`` (never ``timedOut``,
which makes OMP pick the recommended options itself). The run then ends ``aborted``, a normal end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Final

from hive_protocol import Question
from hive_protocol import QuestionOption

from .wire import UI_REQUESTS
from .wire import AskRequest

__all__ = ["ASK_METHOD", "CANCEL_METHOD", "AskDialog", "AskQuestion", "answer_frame", "cancelled", "read_ask"]

ASK_METHOD: Final = "ask"
"""The ``extension_ui_request`` method of OMP's ask dialog."""
CANCEL_METHOD: Final = "cancel"
"""The method of OMP's own notice that it settled a dialog itself (``targetId``): it wants no answer."""
_SEPARATOR: Final = ", "


@dataclass(frozen=True)
class AskQuestion:
    """One question of an ask dialog: OMP's id and labels, and the question as hive shows it."""

    id: str
    """OMP's id for it, echoed by its answer."""
    labels: tuple[str, ...]
    """The offered labels, in order."""
    question: Question
    """The question as a ``question_request`` carries it."""


@dataclass(frozen=True)
class AskDialog:
    """One ask dialog."""

    request_id: str
    """The dialog's id, echoed by the answer."""
    questions: tuple[AskQuestion, ...]
    """Its questions, in order."""


def read_ask(request: Mapping[str, object]) -> AskDialog | None:
    """The ask dialog an ``extension_ui_request`` carries; ``None`` when it is none, or is one hive cannot show
    (no question, a question without an id or text, or ids twice): such a dialog is declined."""
    asked = UI_REQUESTS.decode(request)
    if not isinstance(asked, AskRequest) or not asked.id:
        return None
    questions: list[AskQuestion] = []
    for entry in asked.questions or ():
        if not entry.id or not entry.question:
            return None
        offered = [
            QuestionOption(label=option.label, description=option.description or None)
            for option in entry.options or ()
            if option.label
        ]
        questions.append(
            AskQuestion(
                id=entry.id,
                labels=tuple(option.label for option in offered),
                question=Question(
                    question=entry.question,
                    header=entry.header or None,
                    multi_select=entry.multi is True,
                    options=offered,
                    allow_free_text=True,  # OMP always offers "Other (type your own)"
                ),
            )
        )
    if not questions or len({question.id for question in questions}) != len(questions):
        return None
    return AskDialog(request_id=asked.id, questions=tuple(questions))


def answer_frame(dialog: AskDialog, answers: Mapping[str, list[str]] | None) -> dict[str, Any]:
    """The ``extension_ui_response`` for hive's answers (question text to values); cancelled when there are none
    or a question went unanswered."""
    if answers is None:
        return cancelled(dialog.request_id)
    written: list[dict[str, Any]] = []
    for asked in dialog.questions:
        values = [value.strip() for value in answers.get(asked.question.question, []) if value.strip()]
        if not values:
            return cancelled(dialog.request_id)
        written.append(_answer(asked, values))
    return {"type": "extension_ui_response", "id": dialog.request_id, "answers": written}


def cancelled(request_id: str) -> dict[str, Any]:
    """The ``extension_ui_response`` that declines a dialog."""
    return {"type": "extension_ui_response", "id": request_id, "cancelled": True}


def _answer(asked: AskQuestion, values: list[str]) -> dict[str, Any]:
    if not asked.question.multi_select:
        if len(values) == 1 and values[0] in asked.labels:
            return {"id": asked.id, "selectedOptions": [values[0]]}
        return {"id": asked.id, "selectedOptions": [], "customInput": _SEPARATOR.join(values)}
    selected: list[str] = []
    custom: list[str] = []
    for value in values:
        labels = [value] if value in asked.labels else _split_labels(value, asked.labels)
        if labels is None:
            custom.append(value)
            continue
        selected.extend(label for label in labels if label not in selected)
    answer: dict[str, Any] = {"id": asked.id, "selectedOptions": selected}
    if custom:
        answer["customInput"] = _SEPARATOR.join(custom)
    return answer


def _split_labels(text: str, labels: tuple[str, ...]) -> list[str] | None:
    """``text`` as distinct labels joined with ``", "`` (the longest label that fits taken first), or ``None``."""
    by_length = sorted(set(labels), key=len, reverse=True)
    chosen: list[str] = []
    rest = text
    while rest:
        label = next(
            (label for label in by_length if rest == label or rest.startswith(label + _SEPARATOR)), None
        )
        if label is None or label in chosen:
            return None
        chosen.append(label)
        rest = rest[len(label) + len(_SEPARATOR) :] if rest != label else ""
    return chosen or None
