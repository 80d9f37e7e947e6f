"""Pi's RPC mode: the commands hive sends and the question dialog of hive's ``ask_user_question`` extension.

hive's extension (``ask_extension.js``, written to a private directory at run time and loaded with ``-e``) asks
through an ``input`` dialog whose title is :data:`QUESTION_MARKER`, a newline and ``{"toolCallId", "questions"}``
as JSON (Claude's ``AskUserQuestion`` shape); the answer is the dialog's ``value``: ``{"answers": {question:
"label, label"}}`` as JSON, or ``cancelled`` (a decline: the agent is told and goes on). Dialogs of other
extensions are answered cancelled; fire-and-forget requests (``notify``, ``setStatus``, ...) are ignored.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

from hive_protocol import Question
from hive_providers.backends.acp.tool_calls import text_of
from hive_providers.backends.claude.control import question_answers, questions_of

__all__ = [
    "DIALOG_METHODS",
    "QUESTION_MARKER",
    "QuestionDialog",
    "answer_value",
    "cancelled",
    "extension_source",
    "read_dialog",
    "write_extension",
]

QUESTION_MARKER: Final = "hive:ask_user_question:v1"
"""The first line of the title of the extension's question dialog (versioned: a change of shape gets a new one)."""
DIALOG_METHODS: Final = frozenset({"select", "confirm", "input", "editor"})
"""The extension UI methods that wait for an answer."""
_EXTENSION: Final = "ask_extension.js"


class QuestionDialog:
    """One question dialog of the extension: the questions and the tool call that asked them."""

    def __init__(self, request_id: str, tool_call_id: str | None, questions: list[Question]) -> None:
        self.request_id = request_id
        """The dialog's id, echoed by the answer."""
        self.tool_call_id = tool_call_id
        """Pi's id of the ``ask_user_question`` call."""
        self.questions = questions
        """The questions, as hive shows them."""


def read_dialog(request: Mapping[str, Any]) -> QuestionDialog | None:
    """The question dialog an ``extension_ui_request`` carries, or ``None`` when it is another dialog."""
    request_id = text_of(request.get("id"))
    title = text_of(request.get("title")) or ""
    if request_id is None or request.get("method") != "input" or not title.startswith(QUESTION_MARKER + "\n"):
        return None
    try:
        body: object = json.loads(title[len(QUESTION_MARKER) + 1 :])
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    payload: dict[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
    return QuestionDialog(request_id, text_of(payload.get("toolCallId")), questions_of(payload))


def answer_value(
    request_id: str, questions: list[Question], answers: Mapping[str, list[str]]
) -> dict[str, Any]:
    """The ``extension_ui_response`` for hive's answers; cancelled when a question went unanswered."""
    written = question_answers(questions, answers)
    if written is None:
        return cancelled(request_id)
    return {"type": "extension_ui_response", "id": request_id, "value": json.dumps({"answers": written})}


def cancelled(request_id: str) -> dict[str, Any]:
    """The ``extension_ui_response`` that cancels a dialog."""
    return {"type": "extension_ui_response", "id": request_id, "cancelled": True}


def extension_source() -> str:
    """The extension's source, shipped as package data."""
    return files("hive_providers.backends.pi").joinpath(_EXTENSION).read_text(encoding="utf-8")


def write_extension(directory: Path) -> Path:
    """Write the extension under ``directory`` (a private one: Pi runs what it loads) and return its path; the
    file name carries a hash of the source, so a changed extension never meets an old copy."""
    source = extension_source()
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / f"hive-ask-{digest}.js"
    if not path.exists():
        path.write_text(source, encoding="utf-8")
    return path
