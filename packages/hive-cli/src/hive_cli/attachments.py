"""``@path`` in a message: the file's content attached after the message, as a fenced block.

Each mention is judged as a ``read_file`` call by the host's policy: a denied file is refused with the reason, a
file the rules ask about is asked at the terminal, and the file is read as ``read_file`` reads it (text only, up
to its size limit). A mention of a missing file, or one the rules deny, is a local error: nothing is sent. A file
the person declines (or that cannot be asked about, with no terminal) is left out: the message still goes, with a
note telling the model the file was not attached. ``@`` inside a word (``a@b.c``) is no mention. The interactive
mode, ``-p`` and ``hive run`` expand mentions alike (:func:`attach_for`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Final

from hive_core import ApprovalService
from hive_core import ToolCallPolicy
from hive_core import ToolContext
from hive_core.approvals import decide
from hive_core.builtin_tools import read_file
from hive_core.permissions import resolve_path
from hive_core.tool_names import READ_FILE
from hive_protocol import Event

if TYPE_CHECKING:
    from .opening import OpenSession

__all__ = ["MENTION_START", "AttachedMessage", "AttachmentError", "attach_files", "attach_for", "mentions"]

MENTION_START: Final = "@"
"""What starts a mention."""

_MENTION: Final = re.compile(r"(?<![^\s(\[{\"'])@(\S+)")
"""``@`` at the start, after a space or an opening bracket or quote: never inside a word (``a@b.c``)."""
_TRAILING: Final = ".,;:!?)]}'\""
"""Punctuation that ends a sentence rather than a path (``see @notes.md.``)."""


class AttachmentError(Exception):
    """A mention that cannot be attached; the message says why, and nothing is sent."""


@dataclass(frozen=True)
class _Attachment:
    path: str
    content: str


@dataclass(frozen=True)
class AttachedMessage:
    """A message with its mentioned files attached."""

    text: str
    """What to send: the message, each file attached, and a note to the model for each one left out."""
    left_out: tuple[str, ...] = field(default=())
    """For the person: one line for each file left out and why (``@.env: not attached (declined)``)."""


def mentions(text: str) -> list[str]:
    """The paths ``text`` mentions with ``@``, in order, each once."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        path = match.group(1).rstrip(_TRAILING)
        if path and path not in found:
            found.append(path)
    return found


def _fence(content: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", content)), default=2)
    return "`" * (longest + 1)


def _ignore(event: Event) -> None:
    del event


async def attach_files(
    text: str, *, root: Path, policy: ToolCallPolicy | None, approvals: ApprovalService | None
) -> AttachedMessage:
    """``text`` followed by a fenced block of each file it mentions; ``text`` itself when it mentions none.

    A file the rules ask about is asked through ``approvals``; declined, or with no one to ask, it is left out
    and the message says so to the model. Raises :class:`AttachmentError` for a missing file, a file the rules
    deny, or one ``read_file`` cannot read (binary, too large).
    """
    attached: list[_Attachment] = []
    declined: list[tuple[str, str]] = []
    for number, path in enumerate(mentions(text), 1):
        target = resolve_path(root, path)
        if not target.is_file():
            what = "a directory, not a file" if target.is_dir() else "no such file"
            raise AttachmentError(f"@{path}: {what}")
        arguments = {"path": path}
        judged = await decide(
            policy, approvals, call_id=f"attach-{number}", tool_name=READ_FILE, arguments=arguments
        )
        if judged.outcome == "denied":
            raise AttachmentError(f"@{path}: refused by the rules: {judged.verdict.reason}")
        if judged.outcome == "unavailable":
            declined.append((path, "the rules ask before reading it, and there is no one to ask"))
            continue
        if judged.outcome == "rejected":
            assert judged.decision is not None
            declined.append((path, judged.decision.reason or "declined"))
            continue
        context = ToolContext(call_id=f"attach-{number}", tool_name=READ_FILE, working_dir=root, emit=_ignore)
        outcome = await read_file.invoke(arguments, context)
        if not outcome.success:
            raise AttachmentError(f"@{path}: {outcome.error or outcome.content}")
        attached.append(_Attachment(path, outcome.content))
    if not attached and not declined:
        return AttachedMessage(text)
    blocks = [text]
    for item in attached:
        fence = _fence(item.content)
        blocks.append(f"{item.path}:\n{fence}\n{item.content.rstrip(chr(10))}\n{fence}")
    # The model is told, so it neither guesses at the file's content nor takes the mention for an attachment.
    blocks.extend(f"[@{path} was not attached: the user did not allow reading it]" for path, _ in declined)
    left_out = tuple(
        f"@{path}: not attached ({reason}); the message is sent without it" for path, reason in declined
    )
    return AttachedMessage("\n\n".join(blocks), left_out)


async def attach_for(session: OpenSession, text: str) -> AttachedMessage:
    """``text`` with its mentions expanded for ``session``: judged by its host's rules, asked at its terminal
    (the :class:`~hive_cli.approver.TerminalApprover` among its prompters; none: nothing can be asked)."""
    if not mentions(text):
        return AttachedMessage(text)
    from .approver import TerminalApprover

    host = session.host
    approver = next((p for p in session.prompters if isinstance(p, TerminalApprover)), None)
    return await attach_files(text, root=host.project_root, policy=host.policy, approvals=approver)
