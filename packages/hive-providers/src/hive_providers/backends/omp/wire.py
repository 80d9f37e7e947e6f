"""OMP's ``extension_ui_request`` dialogs as typed values, decoded once at the edge (its other events are Pi's).

A request's ``method`` picks its struct (:data:`UI_REQUESTS`): the ``ask`` dialog hive answers and OMP's own
``cancel`` notice; the rest (``select``, ``confirm``, ``input``, notices such as ``notify``) and a request whose
fields are not the wire's types are an :class:`~..kit.wire.Unknown`. Extra fields are ignored; a missing or
``null`` field takes its default.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec

from hive_providers.backends.kit.wire import WireUnion

__all__ = ["UI_REQUESTS", "AskOption", "AskRequest", "CancelNotice", "UiRequest", "WireQuestion"]


class AskOption(msgspec.Struct, frozen=True):
    """One offered answer."""

    label: str | None = None
    """Its label: what a selected answer echoes."""
    description: str | None = None
    """What it means."""


class WireQuestion(msgspec.Struct, frozen=True):
    """One question of an ask dialog."""

    id: str | None = None
    """OMP's id for it, echoed by its answer."""
    question: str | None = None
    """The question's text."""
    header: str | None = None
    """A short title."""
    options: list[AskOption] | None = None
    """The offered answers (OMP always offers free text too)."""
    multi: bool | None = None
    """Whether more than one option may be chosen."""


class AskRequest(msgspec.Struct, frozen=True, tag="ask", tag_field="method"):
    """Every question of one call of OMP's ``ask`` tool (once ``set_ask_dialog`` is on)."""

    id: str | None = None
    """The dialog's id, echoed by the answer."""
    questions: list[WireQuestion] | None = None
    """Its questions, in order."""


class CancelNotice(msgspec.Struct, frozen=True, tag="cancel", tag_field="method"):
    """OMP settled a dialog itself: it wants no answer."""

    target_id: str | None = msgspec.field(default=None, name="targetId")
    """The dialog settled."""


UiRequest: TypeAlias = AskRequest | CancelNotice
"""An ``extension_ui_request`` hive reads."""

UI_REQUESTS = WireUnion("method", AskRequest, CancelNotice)
"""The ``extension_ui_request`` methods hive reads."""
