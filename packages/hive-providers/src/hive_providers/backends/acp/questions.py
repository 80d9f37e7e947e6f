"""ACP questions that arrive as permission requests (Reasonix's ``ask``): one ``question_request`` each.

Reasonix asks its user through ``session/request_permission`` with options ``qN:<i>`` (plus ``qN:cancel``);
:func:`is_question` recognises them, and :class:`PermissionQuestions` answers with the option the person chose,
else the cancel option (or the ``cancelled`` outcome).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any
from typing import Final

from hive_core.questions import QuestionService
from hive_protocol import Question
from hive_protocol import QuestionOption
from hive_protocol import QuestionRequestEvent
from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_calls import text_of

from .permissions import CANCELLED_OUTCOME
from .permissions import Option
from .permissions import selected

__all__ = ["PermissionQuestions", "is_question"]

_QUESTION_OPTION: Final = re.compile(r"^q\d+:")


def is_question(tool_call: Mapping[str, Any], options: list[Option]) -> bool:
    """Whether a permission request is a Reasonix question: options ``qN:<i>`` (plus ``qN:cancel``) under a
    tool call id starting ``ask-``, or with a ``qN:cancel`` option."""
    if not options or not all(_QUESTION_OPTION.match(option.option_id) for option in options):
        return False
    if all(option.option_id.endswith(":cancel") for option in options):
        return False
    call_id = text_of(tool_call.get("toolCallId")) or ""
    return call_id.startswith("ask-") or any(option.option_id.endswith(":cancel") for option in options)


class PermissionQuestions:
    """Answers one turn's questions asked as permission requests; ``questions`` answers them (``None``: they are
    declined)."""

    def __init__(self, *, tracker: ToolCallTracker, questions: QuestionService | None) -> None:
        self._tracker = tracker
        self._questions = questions

    async def answer(self, tool_call: Mapping[str, Any], options: list[Option]) -> dict[str, Any]:
        """The permission answer to the question ``tool_call`` asks with ``options``."""
        request_id = text_of(tool_call.get("toolCallId")) or f"ask-{uuid.uuid4().hex[:12]}"
        raw = _asked(as_mapping(tool_call.get("rawInput")), options)
        text = (
            text_of(raw.get("question")) or text_of(tool_call.get("title")) or "The agent asks you a question"
        )
        offered = [option for option in options if not option.option_id.endswith(":cancel")]
        choices = _choices(offered, raw.get("options"))
        question = Question(
            question=text,
            # Reasonix sends the header as the request's text content.
            header=text_of(raw.get("header")) or _content_text(tool_call.get("content")),
            multi_select=False,
            options=[
                QuestionOption(label=label, description=description) for _, label, description in choices
            ],
            allow_free_text=False,
        )
        answers = None
        if self._questions is not None:
            answers = await self._questions.ask(
                QuestionRequestEvent(id=request_id, call_id=self._asking_call(), questions=[question])
            )
        chosen = answers.get(text) if answers is not None else None
        if chosen is not None and len(chosen) == 1:
            # The label offered, or the agent's own name for the option ("Postgres - the big one").
            match = next((option for option, label, _ in choices if label == chosen[0]), None) or next(
                (option for option in offered if option.name == chosen[0]), None
            )
            if match is not None:
                return selected(match.option_id)
        cancel = next((option for option in options if option.option_id.endswith(":cancel")), None)
        return selected(cancel.option_id) if cancel is not None else CANCELLED_OUTCOME

    def _asking_call(self) -> str | None:
        """The running call of Reasonix's ``ask`` tool, which a question names; its own id differs."""
        for call in reversed(self._tracker.calls):
            if call.running and call.tool in ("ask", "ask_user"):
                return call.call_id
        return None


def _asked(raw: dict[str, Any], options: list[Option]) -> dict[str, Any]:
    """The question's own fields: ``raw`` itself, or its entry in the ask call's ``questions`` list (the N of the
    ``qN:`` option ids, 1-based)."""
    questions = as_list(raw.get("questions"))
    if not questions:
        return raw
    number = int(options[0].option_id[1:].split(":", 1)[0])
    return as_mapping(questions[number - 1]) if 0 < number <= len(questions) else {}


def _choices(offered: list[Option], described: object) -> list[tuple[Option, str, str | None]]:
    """Each offered option with its label and description: from the question's own ``options`` entry (the ``i`` of
    ``qN:i``, 1-based; Reasonix spells the keys ``Label`` and ``Description``), else the option's name."""
    entries = [as_mapping(entry) for entry in as_list(described)]
    choices: list[tuple[Option, str, str | None]] = []
    for option in offered:
        index = option.option_id.rsplit(":", 1)[-1]
        entry = entries[int(index) - 1] if index.isdigit() and 0 < int(index) <= len(entries) else {}
        label = text_of(entry.get("label")) or text_of(entry.get("Label"))
        description = text_of(entry.get("description")) or text_of(entry.get("Description"))
        choices.append((option, label or option.name, description if label else None))
    return choices


def _content_text(content: object) -> str | None:
    for entry in as_list(content):
        block = as_mapping(as_mapping(entry).get("content"))
        if block.get("type") == "text":
            text = text_of(block.get("text"))
            if text is not None:
                return text
    return None
