"""Pi's RPC mode: the commands hive sends and the dialogs of hive's two bundled extensions.

Both are written to a private directory at run time and loaded with ``-e``. The ``ask_user_question`` extension
(``ask_extension.js``) asks through an ``input`` dialog whose title is :data:`QUESTION_MARKER`, a newline and
``{"toolCallId", "questions"}`` as JSON (Claude's ``AskUserQuestion`` shape); the answer is the dialog's ``value``:
``{"answers": {question: "label, label"}}`` as JSON, or ``cancelled`` (a decline: the agent is told and goes on).
The approval extension (``approve_extension.js``) holds every tool call in Pi's ``tool_call`` hook on an ``input``
dialog titled :data:`APPROVAL_MARKER`, a newline and ``{"toolCallId", "toolName", "input"}``; the answer is
``{"approved": true, "input"?: {...}}`` (the call runs, with the human's changed arguments merged in) or
``{"approved": false, "reason": "..."}`` (Pi blocks it and the model reads the reason); a cancelled dialog blocks
it too. Dialogs of other extensions are answered cancelled; fire-and-forget requests (``notify``, ``setStatus``,
...) are ignored.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any
from typing import Final

from hive_protocol import Question
from hive_providers.backends.kit.ask_user_question import question_answers
from hive_providers.backends.kit.ask_user_question import questions_of
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.json_values import as_object
from hive_providers.backends.kit.tool_calls import text_of

__all__ = [
    "APPROVAL_EXTENSION",
    "APPROVAL_MARKER",
    "ASK_EXTENSION",
    "DIALOG_METHODS",
    "QUESTION_MARKER",
    "ApprovalDialog",
    "QuestionDialog",
    "answer_value",
    "approval_value",
    "cancelled",
    "extension_source",
    "read_approval",
    "read_dialog",
    "write_extension",
]

QUESTION_MARKER: Final = "hive:ask_user_question:v1"
"""The first line of the title of the extension's question dialog (versioned: a change of shape gets a new one)."""
APPROVAL_MARKER: Final = "hive:approve_tool:v1"
"""The first line of the title of the approval extension's dialog (versioned like :data:`QUESTION_MARKER`)."""
DIALOG_METHODS: Final = frozenset({"select", "confirm", "input", "editor"})
"""The extension UI methods that wait for an answer."""
ASK_EXTENSION: Final = "ask_extension.js"
"""The ``ask_user_question`` extension's file (package data)."""
APPROVAL_EXTENSION: Final = "approve_extension.js"
"""The approval extension's file (package data)."""


class QuestionDialog:
    """One question dialog of the extension: the questions and the tool call that asked them."""

    def __init__(self, request_id: str, tool_call_id: str | None, questions: list[Question]) -> None:
        self.request_id = request_id
        """The dialog's id, echoed by the answer."""
        self.tool_call_id = tool_call_id
        """Pi's id of the ``ask_user_question`` call."""
        self.questions = questions
        """The questions, as hive shows them."""


class ApprovalDialog:
    """One approval dialog of the approval extension: the tool call Pi holds until hive answers."""

    def __init__(
        self, request_id: str, tool_call_id: str | None, tool_name: str, tool_input: dict[str, Any]
    ) -> None:
        self.request_id = request_id
        """The dialog's id, echoed by the answer."""
        self.tool_call_id = tool_call_id
        """Pi's id of the held call."""
        self.tool_name = tool_name
        """Pi's name of the tool (``bash``, ``edit``...)."""
        self.tool_input = tool_input
        """The call's arguments, as Pi validated them."""


def _marked_body(request: Mapping[str, Any], marker: str) -> tuple[str, dict[str, Any]] | None:
    """The id and the JSON object after ``marker`` in an ``input`` dialog's title, or ``None``."""
    request_id = text_of(request.get("id"))
    title = text_of(request.get("title")) or ""
    if request_id is None or request.get("method") != "input" or not title.startswith(marker + "\n"):
        return None
    try:
        body: object = json.loads(title[len(marker) + 1 :])
    except ValueError:
        return None
    payload = as_object(body)
    return None if payload is None else (request_id, payload)


def read_dialog(request: Mapping[str, Any]) -> QuestionDialog | None:
    """The question dialog an ``extension_ui_request`` carries, or ``None`` when it is another dialog."""
    marked = _marked_body(request, QUESTION_MARKER)
    if marked is None:
        return None
    request_id, payload = marked
    return QuestionDialog(request_id, text_of(payload.get("toolCallId")), questions_of(payload))


def read_approval(request: Mapping[str, Any]) -> ApprovalDialog | None:
    """The approval dialog an ``extension_ui_request`` carries, or ``None`` when it is another dialog."""
    marked = _marked_body(request, APPROVAL_MARKER)
    if marked is None:
        return None
    request_id, payload = marked
    return ApprovalDialog(
        request_id,
        text_of(payload.get("toolCallId")),
        text_of(payload.get("toolName")) or "tool",
        as_mapping(payload.get("input")),
    )


def approval_value(
    request_id: str, *, approved: bool, reason: str | None = None, tool_input: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The ``extension_ui_response`` that lets a held call run (with ``tool_input`` merged into its arguments) or
    blocks it with ``reason``."""
    answer: dict[str, Any] = {"approved": approved}
    if approved and tool_input:
        answer["input"] = dict(tool_input)
    if not approved:
        answer["reason"] = reason or "The user rejected this call."
    return {"type": "extension_ui_response", "id": request_id, "value": json.dumps(answer)}


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


def extension_source(name: str = ASK_EXTENSION) -> str:
    """An extension's source, shipped as package data."""
    return files("hive_providers.backends.pi").joinpath(name).read_text(encoding="utf-8")


def write_extension(directory: Path, name: str = ASK_EXTENSION) -> Path:
    """Write the extension ``name`` under ``directory`` (a private one: Pi runs what it loads) and return its path;
    the file name carries a hash of the source, so a changed extension never meets an old copy."""
    source = extension_source(name)
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    stem = name.removesuffix("_extension.js")
    path = directory / f"hive-{stem}-{digest}.js"
    if not path.exists():
        path.write_text(source, encoding="utf-8")
    return path
