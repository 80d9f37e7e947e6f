"""OpenCode's questions and permission requests, read from their events and answered in their encodings.

Two question wires share one path (:class:`AskedQuestions` -> ``question_request`` -> the answer's encoding):

* OpenCode 1.18 (live): ``question.asked`` ``{id: que_…, sessionID, questions: [{question, header, options:
  [{label, description}], multiple?, custom?}], tool?: {messageID, callID}}``; answered with ``POST
  /question/{id}/reply`` ``{"answers": [[label, …], …]}`` (one list per question, in order; free text is a list
  item), declined with ``POST /question/{id}/reject``. A reply to an unknown or settled id is 404.
* OpenCode 2.0.32 forms (the seed's wire, fixtures only): ``form.created`` with ``metadata.kind: "question"`` and
  fields ``q0``, ``q1``… (``string`` single choice, ``multiselect``); answered with ``POST
  /api/session/{id}/form/{formID}/reply`` ``{"answers": {"q0": "label", "q1": ["a", "b"]}}``, declined with
  ``…/cancel`` ``{"message": …}``. A 400 (``FormInvalidAnswerError``) leaves the form pending, so the question is
  then declined; a 409 (``FormAlreadySettledError``) means it was settled already. Forms of another kind (MCP
  elicitation) are left untouched.

Permission requests (``permission.asked`` ``{id: per_…, permission: bash|edit|webfetch|…, patterns, metadata,
always, tool?}``) are judged as the hive tool they stand for (``bash`` as ``execute_command`` with its command,
``edit`` as ``edit_file`` with its path) and answered ``POST /permission/{id}/reply`` ``{"reply":
"once"|"always"|"reject", "message"?}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Final

from hive_core.questions import Answers
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE
from hive_protocol import Question
from hive_protocol import QuestionOption
from hive_providers.backends.kit.json_values import as_array
from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.judging import working_directory
from hive_providers.backends.kit.tool_calls import text_of

__all__ = [
    "DECLINED_MESSAGE",
    "AskedQuestions",
    "PermissionAsked",
    "form_answers",
    "question_answers",
    "read_form",
    "read_permission",
    "read_question",
]

DECLINED_MESSAGE: Final = "The user declined to answer this question"
"""The reason a declined 2.0.32 form is cancelled with (what the agent is told)."""

_PERMISSION_TOOLS: Final[Mapping[str, str]] = {
    "bash": EXECUTE_COMMAND,
    "edit": EDIT_FILE,
    "write": WRITE_FILE,
    "read": READ_FILE,
    "webfetch": "web_fetch",
    "external_directory": READ_FILE,
}


@dataclass(frozen=True, kw_only=True)
class AskedQuestions:
    """One question request of either wire, read into hive's terms."""

    request_id: str
    """OpenCode's id for it (``que_…`` or ``frm_…``): what the answer route names."""
    session_id: str | None
    """The session that asked."""
    call_id: str | None
    """OpenCode's id of the tool call that asked (``tool.callID``), when it says."""
    questions: list[Question]
    """The questions, in order."""
    fields: list[str]
    """The form field of each question (2.0.32: ``q0``, ``q1``…; 1.18: empty)."""


@dataclass(frozen=True, kw_only=True)
class PermissionAsked:
    """One ``permission.asked``."""

    request_id: str
    """Its id (``per_…``)."""
    session_id: str | None
    """The session that asked."""
    call_id: str | None
    """OpenCode's id of the tool call it is about."""
    permission: str
    """What it asks for (``bash``, ``edit``…)."""
    tool: str
    """The hive tool it is judged as."""
    arguments: dict[str, Any]
    """The arguments it is judged with."""
    directory: object = None
    """Where the call runs, when its metadata says (``workdir``, ``cwd``...); ``None`` for the project."""


def _question(raw: Mapping[str, Any], *, multiple: bool | None = None) -> Question | None:
    text = text_of(raw.get("question")) or text_of(raw.get("title")) or text_of(raw.get("label"))
    if text is None:
        return None
    options: list[QuestionOption] = []
    for entry in as_list(raw.get("options")):
        if isinstance(entry, str) and entry:
            options.append(QuestionOption(label=entry))
        elif (label := text_of(as_mapping(entry).get("label"))) is not None:
            options.append(
                QuestionOption(label=label, description=text_of(as_mapping(entry).get("description")))
            )
    multi = multiple if multiple is not None else raw.get("multiple") is True
    return Question(
        question=text,
        header=text_of(raw.get("header")),
        multi_select=multi,
        options=options,
        # OpenCode lets the user type their own answer unless the question says otherwise.
        allow_free_text=raw.get("custom") is not False or not options,
    )


def read_question(props: Mapping[str, Any]) -> AskedQuestions | None:
    """A 1.18 ``question.asked``'s properties; ``None`` when malformed (no id, no readable question)."""
    request_id = text_of(props.get("id"))
    entries = as_array(props.get("questions"))
    if request_id is None or entries is None:
        return None
    questions = [q for q in (_question(as_mapping(entry)) for entry in entries) if q is not None]
    if not questions or len(questions) != len(entries):
        return None
    return AskedQuestions(
        request_id=request_id,
        session_id=text_of(props.get("sessionID")),
        call_id=text_of(as_mapping(props.get("tool")).get("callID")),
        questions=questions,
        fields=[],
    )


def read_form(props: Mapping[str, Any]) -> AskedQuestions | None:
    """A 2.0.32 ``form.created``'s properties (or its ``form``); ``None`` when malformed or not a question form
    (MCP elicitation forms are left to whoever opened them)."""
    form = as_mapping(props.get("form")) or dict(props)
    request_id = text_of(form.get("id"))
    if request_id is None or text_of(as_mapping(form.get("metadata")).get("kind")) not in (None, "question"):
        return None
    fields = as_list(form.get("fields"))
    if not fields:
        return None
    names: list[str] = []
    questions: list[Question] = []
    for entry in map(as_mapping, fields):
        name = text_of(entry.get("id")) or text_of(entry.get("name"))
        kind = text_of(entry.get("type"))
        question = _question(entry, multiple=kind == "multiselect")
        if name is None or kind not in ("string", "multiselect") or question is None:
            return None
        names.append(name)
        questions.append(question)
    return AskedQuestions(
        request_id=request_id,
        session_id=text_of(form.get("sessionID")),
        call_id=text_of(as_mapping(form.get("tool")).get("callID")) or text_of(form.get("callID")),
        questions=questions,
        fields=names,
    )


def _chosen(question: Question, answers: Answers) -> list[str] | None:
    """The values answering ``question``: ``[]`` when unanswered, ``None`` when the answer cannot be given
    (several values to a single choice, a label not offered where free text is not allowed)."""
    values = [value for value in answers.get(question.question, []) if value]
    labels = {option.label for option in question.options}
    if not question.multi_select and len(values) > 1:
        return None
    if not question.allow_free_text and any(value not in labels for value in values):
        return None
    return values


def question_answers(asked: AskedQuestions, answers: Answers) -> list[list[str]] | None:
    """The 1.18 ``answers`` body (one list per question, in order); ``None`` when an answer cannot be given, so
    the question is declined instead."""
    encoded: list[list[str]] = []
    for question in asked.questions:
        values = _chosen(question, answers)
        if values is None:
            return None
        encoded.append(values)
    return encoded if any(encoded) else None


def form_answers(asked: AskedQuestions, answers: Answers) -> dict[str, str | list[str]] | None:
    """The 2.0.32 form ``answers`` (single choice one string, multi-select a list; unanswered left out);
    ``None`` when an answer cannot be given."""
    encoded: dict[str, str | list[str]] = {}
    for name, question in zip(asked.fields, asked.questions, strict=True):
        values = _chosen(question, answers)
        if values is None:
            return None
        if values:
            encoded[name] = values if question.multi_select else values[0]
    return encoded or None


def read_permission(props: Mapping[str, Any]) -> PermissionAsked | None:
    """A ``permission.asked``'s properties as the hive tool call it is judged as; ``None`` when malformed."""
    request_id, permission = text_of(props.get("id")), text_of(props.get("permission"))
    if request_id is None or permission is None:
        return None
    metadata = as_mapping(props.get("metadata"))
    patterns = [p for p in as_list(props.get("patterns")) if isinstance(p, str)]
    tool = _PERMISSION_TOOLS.get(permission, permission)
    arguments: dict[str, Any]
    if tool == EXECUTE_COMMAND:
        arguments = {"command": text_of(metadata.get("command")) or " ".join(patterns)}
    elif tool in (EDIT_FILE, WRITE_FILE, READ_FILE):
        path = (
            text_of(metadata.get("filepath"))
            or text_of(metadata.get("filePath"))
            or text_of(metadata.get("path"))
        )
        arguments = {"path": path or (patterns[0] if patterns else "")}
        if isinstance(diff := metadata.get("diff"), str):
            arguments["diff"] = diff
    elif tool == "web_fetch":
        arguments = {"url": text_of(metadata.get("url")) or (patterns[0] if patterns else "")}
    else:
        arguments = {"patterns": patterns, **metadata}
    return PermissionAsked(
        request_id=request_id,
        session_id=text_of(props.get("sessionID")),
        call_id=text_of(as_mapping(props.get("tool")).get("callID")),
        permission=permission,
        tool=tool,
        arguments=arguments,
        directory=working_directory(metadata),
    )
