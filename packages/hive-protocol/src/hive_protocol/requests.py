"""Requests: what a client sends to an agent, one JSON object per line."""

from __future__ import annotations

from typing import Any

import msgspec

from .limits import TOO_DEEP
from .limits import nested_too_deep

__all__ = [
    "CancelRequest",
    "ContextUpdateRequest",
    "HitlResponseRequest",
    "QuestionResponseRequest",
    "Request",
    "ShutdownRequest",
    "TurnOptions",
    "UserMessageRequest",
]


class TurnOptions(msgspec.Struct, omit_defaults=True, kw_only=True, frozen=True):
    """Settings for one turn, merged field by field over the agent's configuration.

    A set field replaces the agent's value for this turn only; an unset field keeps it. Nothing carries over to the
    next turn. Unknown tool names, modes or efforts are answered with an ``error`` event, never dropped.
    """

    tool_names: list[str] | None = None
    """The registered tools offered this turn; ``[]`` offers none. Duplicates collapse."""
    tool_mode: str | None = None
    """``auto``, ``none``, ``require_any`` or ``require:<tool name>`` (the named tool must be registered)."""
    reasoning_effort: str | None = None
    """``none``, ``low``, ``medium``, ``high`` or ``extra_high``."""
    temperature: float | None = None
    """Sampling temperature for this turn."""
    max_output_tokens: int | None = None
    """Cap on the tokens the model may write in each round of this turn."""
    instructions: str | None = None
    """Extra system text for this turn only, kept out of the history; whitespace alone counts as unset."""


class _Request(msgspec.Struct, tag_field="type", omit_defaults=True, kw_only=True, frozen=True):
    """Base of every request; ``type`` is the discriminator."""


class UserMessageRequest(_Request, tag="user_message", kw_only=True, frozen=True):
    """Start a turn with a user message. Turns run one at a time, in the order they arrive."""

    content: str
    """The user's message."""
    model: str | None = None
    """A model override for this message, handed to the processor."""
    options: TurnOptions | None = None
    """Per-turn settings; absent means the agent's configuration as it is."""


class ContextUpdateRequest(_Request, tag="context_update", kw_only=True, frozen=True):
    """Tell the agent where the user is working; applies to the messages that follow."""

    working_path: str | None = None
    """The user's working path; later messages are prefixed with it."""
    selected_items: list[str] | None = None
    """Items the user has selected, handed to the host's callback if it has one."""


class HitlResponseRequest(_Request, tag="hitl_response", kw_only=True, frozen=True):
    """Answer a ``hitl_request``: approve or reject the waiting tool call."""

    approved: bool
    """``true`` runs the call, ``false`` refuses it."""
    reason: str | None = None
    """Why; on a rejection the model reads it as the call's result."""
    id: str | None = None
    """The ``hitl_request.id`` answered; may be left out only while exactly one request waits."""
    modified_arguments: dict[str, Any] | None = None
    """Arguments that replace the call's arguments key by key before it runs."""
    always_approve: bool = False
    """Ask the approver to allow such calls from now on without asking (what it covers is the approver's choice)."""

    def __post_init__(self) -> None:
        if nested_too_deep(self.modified_arguments):
            raise ValueError(f"modified_arguments: {TOO_DEEP}")


class QuestionResponseRequest(_Request, tag="question_response", kw_only=True, frozen=True):
    """Answer a ``question_request``."""

    id: str
    """The ``question_request.id`` answered."""
    answers: dict[str, list[str] | str] | None = None
    """Question text to the chosen option labels or free text; absent declines every question."""


class CancelRequest(_Request, tag="cancel", kw_only=True, frozen=True):
    """Cancel the running turn only; queued turns still run. Ignored when no turn runs."""


class ShutdownRequest(_Request, tag="shutdown", kw_only=True, frozen=True):
    """Stop reading; run the turns already queued to their ``turn_end``, then exit."""


Request = (
    UserMessageRequest
    | ContextUpdateRequest
    | HitlResponseRequest
    | QuestionResponseRequest
    | CancelRequest
    | ShutdownRequest
)
"""Any request a client may send."""
