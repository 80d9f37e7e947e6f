"""Approvals answered at the terminal: the ``ask`` verdicts of an interactive or ``-p`` run.

A ``write_file`` or ``edit_file`` approval shows the whole unified diff of what the call would change in the file
on disk (coloured on a terminal, plain under ``--plain`` or ``NO_COLOR``). Keys typed before the question was
drawn are dropped, and nothing is chosen by default: at a terminal that can draw a single key answers
(:func:`~hive_cli.terminal_prompt.choose`), elsewhere a line (``y``, ``a``, ``n [reason]``, ``s``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from typing import TextIO

from hive_cli.cells import clip
from hive_cli.diffs import Change
from hive_cli.diffs import diff_preview
from hive_cli.diffs import proposed_change
from hive_cli.render import Held
from hive_cli.render import no_color
from hive_cli.terminal_prompt import KEYS
from hive_cli.terminal_prompt import Choice
from hive_cli.terminal_prompt import TerminalAsker
from hive_cli.terminal_prompt import can_draw
from hive_cli.terminal_prompt import choose
from hive_cli.terminal_prompt import discard_typeahead
from hive_cli.terminal_prompt import read_line
from hive_core import ApprovalDecision
from hive_core import ApprovalRequest

if TYPE_CHECKING:  # the permissions package loads the shell parser: not on a one-shot run's way to the model
    from hive_core.permissions import SessionGrants

__all__ = ["TerminalApprover"]

_VALUE_CAP = 57

CANCELLED = "the operator cancelled the approval (Esc or Ctrl+C) and stopped the turn"
"""Why a call is rejected when its approval was cancelled rather than answered."""


class TerminalApprover(TerminalAsker):
    """Asks the person at the terminal: approve once, always (a rule no wider than the call), reject (with a
    reason the model reads), or reject and stop; Esc or Ctrl+C rejects and stops.

    Without a terminal on both stdin and stdout nothing is asked: the call is rejected with a reason, so a prompt
    never lands in a piped output stream and a script never hangs. ``on_stop`` is called when the person chooses
    to reject and stop (the host cancels the turn).
    """

    def __init__(
        self,
        *,
        stdin: TextIO | None = None,
        stderr: TextIO | None = None,
        interactive: bool | None = None,
        on_stop: Callable[[], object] | None = None,
        root: Path | None = None,
    ) -> None:
        super().__init__(stdin=stdin, stderr=stderr, interactive=interactive)
        self.grants: SessionGrants | None = None
        """Where an "always" answer is remembered, as rules no wider than the call (the session's grants)."""
        self.on_stop = on_stop
        self.root = root or Path.cwd()
        """Where relative paths of file tools start (the working directory), to read the file a diff is of."""

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask about ``request`` (one question at a time) and return the answer."""
        if not self.interactive:
            return ApprovalDecision(
                approved=False,
                reason="approval needed but there is no terminal to ask (stdin or stdout is redirected); "
                "allow the call in .hive/permissions.yaml to run it unattended",
            )
        async with self._lock:
            with self.screen() as held:
                color = held.color if isinstance(held, Held) else self._stderr.isatty() and not no_color()
                return await self._ask(request, color=color)

    async def _ask(self, request: ApprovalRequest, *, color: bool = False) -> ApprovalDecision:
        discard_typeahead(self._stdin)  # an Enter typed while the reply streamed is no answer
        modal = can_draw(self._stdin, self._stderr)
        change = proposed_change(request.tool_name, request.arguments, self.root)
        self._stderr.write(self._panel(request, change, color=color) + ("\n" if modal else " "))
        self._stderr.flush()
        if modal:
            diff = "\n".join(diff_preview(change, color=False, limit=None)) if change is not None else None
            choice = await choose(
                self._stdin,
                self._stderr,
                diff=diff,
                title=f"{request.tool_name} {change.path}" if change is not None else "",
            )
            self._stderr.write(f"  → {_said(choice)}\n")
            self._stderr.flush()
        else:
            choice = await self._read_choice()
        return self._decide(request, choice)

    async def _read_choice(self) -> Choice:
        while True:
            line = await read_line(self._stdin)
            if line is None:
                return Choice("stop", cancelled=True)
            key, _, reason = line.strip().partition(" ")
            picked = KEYS.get(key.lower()) if len(key) == 1 else None
            if picked is not None and (picked == "reject" or not reason):
                return Choice(picked, reason.strip())
            self._stderr.write("  answer y, a, n (a reason may follow: n use pytest) or s: ")
            self._stderr.flush()

    def _decide(self, request: ApprovalRequest, choice: Choice) -> ApprovalDecision:
        if choice.picked == "once":
            return ApprovalDecision(approved=True)
        if choice.picked == "always":
            if self.grants is not None:
                self._stderr.write(f"  {self.grants.record(request).message}\n")
            return ApprovalDecision(approved=True, always_approve=True)
        if choice.picked == "reject":
            return ApprovalDecision(approved=False, reason=choice.reason or "the operator declined")
        if self.on_stop is not None:
            self.on_stop()
        return ApprovalDecision(
            approved=False,
            reason=CANCELLED if choice.cancelled else "the operator declined and stopped the turn",
        )

    def _panel(self, request: ApprovalRequest, change: Change | None, *, color: bool = False) -> str:
        lines = [
            "",
            f"╭─ approval needed: {request.tool_name} ({request.level or 'medium'} risk)"
            + (f" for subagent {request.subagent}" if request.subagent is not None else ""),
            f"│ {request.reason or 'the rules ask before this call'}",
        ]
        for key, value in request.arguments.items():
            if change is not None and key in ("content", "old_text", "new_text"):
                continue  # the diff below shows them
            text = str(value).replace("\n", "⏎")
            lines.append(f"│   {key}: {clip(text, _VALUE_CAP)}")
        if change is not None:
            width = shutil.get_terminal_size().columns - 2  # after "│ "
            lines.extend(f"│ {line}" for line in diff_preview(change, color=color, width=width, limit=None))
        lines.append(
            "╰─ [y] approve once  [a] always for this session  [n] reject (reason optional)  [s] reject and stop"
        )
        return "\n".join(lines)


def _said(choice: Choice) -> str:
    """The answer as the person reads it back under the question."""
    if choice.cancelled:
        return "rejected, turn stopped"
    if choice.picked == "reject":
        return f"rejected: {choice.reason}" if choice.reason else "rejected"
    return {
        "once": "approved once",
        "always": "approved always for this session",
        "stop": "rejected, turn stopped",
    }[choice.picked]
