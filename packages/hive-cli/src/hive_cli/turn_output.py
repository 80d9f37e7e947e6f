"""How one turn is printed by ``hive -p`` and ``hive run`` alike: text (the renderer), ``-o json`` (one document
at the end) or ``-o jsonl`` (a record per event between ``start`` and ``done`` or ``error``)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any

from hive_core.questions import Answers
from hive_protocol import Event
from hive_protocol import QuestionRequestEvent

from .output import OutputFormat
from .output import done_record
from .output import error_record
from .output import jsonl_record
from .output import print_document
from .output import print_records
from .output import question_outcome
from .output import question_record
from .output import start_record
from .output import turn_document
from .questioner import TerminalQuestioner
from .render import TextRenderer

if TYPE_CHECKING:
    from hive_core.spending import SessionSpending

    from .opening import OpenSession
from .summary import TurnSummary
from .summary import exit_code

__all__ = ["TurnOutput", "attached_prompt"]


@dataclass
class TurnOutput:
    """The printing side of one machine-readable or text turn."""

    output: OutputFormat
    """``text``, ``json`` or ``jsonl``."""
    renderer: TextRenderer
    """What prints the turn in text mode."""
    show_thinking: bool
    """Whether the reasoning is part of the output."""
    session_id: str | None = None
    """The session the turn runs in, once one is open."""
    started: float = field(default_factory=time.monotonic)
    """When the command started (for ``duration_ms``)."""
    asked: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    """The agent's questions and how each ended, for ``-o json``."""
    spending: SessionSpending | None = None
    """The session's spending, once one is open on hive's own loop."""

    def begin(self, session_id: str | None, spending: SessionSpending | None = None) -> None:
        """The session is open: ``start`` in ``-o jsonl``, the turn's header in text. ``spending`` is the
        session's (hive's own loop; ``None`` for a coding-agent CLI), whose turn cost ``-o json`` shows."""
        self.session_id = session_id
        self.spending = spending
        if self.output == "jsonl":
            print_records([start_record(session_id)])
        elif self.output == "text":
            self.renderer.begin_turn()

    def watch_questions(self, questioner: TerminalQuestioner | None) -> None:
        """Report the agent's questions and their outcomes in the machine outputs."""
        if questioner is None or self.output == "text":
            return

        def on_request(request: QuestionRequestEvent) -> None:
            record = question_record(request)
            if self.output == "jsonl":
                print_records([record])
            self.asked[request.id] = {key: value for key, value in record.items() if key != "type"}

        def on_settled(request: QuestionRequestEvent, answers: Answers | None, reason: str | None) -> None:
            outcome = question_outcome(request, answers, reason)
            if self.output == "jsonl":
                print_records([outcome])
            self.asked.setdefault(request.id, {"id": request.id}).update(
                (key, value) for key, value in outcome.items() if key not in ("type", "id")
            )

        questioner.on_request = on_request
        questioner.on_settled = on_settled

    def __call__(self, event: Event) -> None:
        """The turn's sink: each event rendered, or written as its ``-o jsonl`` record."""
        if self.output == "jsonl":
            record = jsonl_record(event, show_thinking=self.show_thinking)
            if record is not None:
                print_records([record])
        elif self.output == "text":
            self.renderer(event)

    @property
    def duration_ms(self) -> int:
        """Milliseconds since the command started."""
        return int((time.monotonic() - self.started) * 1000)

    def ended(self, summary: TurnSummary) -> int:
        """The turn ended by itself: its document or ``done``; return the exit code (:func:`exit_code`)."""
        code = exit_code(summary)
        if self.output == "json":
            print_document(self._document(summary, code))
        elif self.output == "jsonl":
            print_records([done_record(summary, session_id=self.session_id)])
        return code

    def failed(
        self,
        message: str,
        *,
        stop_reason: str,
        code: int,
        summary: TurnSummary | None = None,
        shown: bool = False,
    ) -> int:
        """The turn failed, timed out or was cancelled (or never started): a document that keeps what it had, an
        ``error`` record, or one ``hive:`` line (unless the renderer ``shown`` it already); return ``code``."""
        if self.output == "json":
            document = self._document(summary or TurnSummary(), code, error=message, stop_reason=stop_reason)
            print_document(document)
        elif self.output == "jsonl":
            print_records([error_record(message, stop_reason=stop_reason, exit_code=code)])
        elif not shown:
            sys.stderr.write(f"hive: {message}\n")
        return code

    def _document(
        self, summary: TurnSummary, code: int, *, error: str | None = None, stop_reason: str | None = None
    ) -> dict[str, Any]:
        return turn_document(
            summary,
            session_id=self.session_id,
            duration_ms=self.duration_ms,
            exit_code=code,
            show_thinking=self.show_thinking,
            questions=list(self.asked.values()),
            error=error,
            stop_reason=stop_reason,
            cost_usd=self.spending.turn_cost() if self.spending is not None else None,
        )


async def attached_prompt(session: OpenSession, prompt: str, printer: TurnOutput) -> str | int:
    """A one-shot's ``prompt`` with its ``@path`` mentions attached as at the interactive prompt (with no terminal, a
    file the rules ask about is left out, said on stderr); when an attachment is refused, the failure is printed
    (nothing was sent) and its exit code returned instead."""
    # Imported here: attaching loads the permission engine and the file tools, which a one-shot on the local model
    # imports while the model loads, not before.
    from .attachments import AttachmentError
    from .attachments import attach_for

    try:
        attached = await attach_for(session, prompt)
    except AttachmentError as exc:
        session.end(failed=True)
        if printer.output == "jsonl":  # `start` is the first record, always
            printer.begin(session.session_id, session.spending)
        return printer.failed(f"{exc} (nothing sent)", stop_reason="error", code=1)
    for line in attached.left_out:
        sys.stderr.write(f"hive: {line}\n")
    return attached.text
