"""The request of one turn: the client's ``user_message`` with the context the runner holds for it."""

from __future__ import annotations

from hive_protocol import UserMessageRequest

__all__ = ["TurnRequest"]


class TurnRequest(UserMessageRequest, frozen=True, kw_only=True):
    """A ``user_message`` and the client's working path when it arrived.

    A runner hands its processor one of these after a ``context_update`` named a working path; the loop sends
    the model :attr:`prompt`, and a session records the request as it is, so the title of a session is what the
    user wrote and the working path stays a field of the record.
    """

    working_path: str | None = None
    """The client's working path from its last ``context_update``, if any."""

    @classmethod
    def of(cls, request: UserMessageRequest) -> TurnRequest:
        """``request`` as a turn request: itself when it is one, else the same message without a working path."""
        if isinstance(request, TurnRequest):
            return request
        return cls(content=request.content, model=request.model, options=request.options)

    @property
    def prompt(self) -> str:
        """The user message the model reads: the content, after ``[WorkingPath: …]`` when there is a working path."""
        if self.working_path:
            return f"[WorkingPath: {self.working_path}]\n\n{self.content}"
        return self.content
