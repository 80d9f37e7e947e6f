"""Human approval over the wire: an :class:`ApprovalService` whose human is the runner's client.

Each asked call is published as a ``hitl_request`` (its ``id`` derived from the call id, so a replayed turn asks
with the same id) and waits for the matching ``hitl_response``. A subagent's call is asked under the delegation
call the client saw start, naming the subagent, with the subagent's call id after the delegation's in the ``id``
(``hitl-c1.s1``). Every way of not getting an answer is a
rejection: no client attached, the timeout, the client going away, or the bridge shutting down.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

import anyio
import msgspec

from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest

from .approvals import ApprovalDecision
from .approvals import ApprovalRequest
from .approvals import GrantRecorder
from .tools import EventSink

__all__ = ["DEFAULT_APPROVAL_TIMEOUT", "HitlBridge", "hitl_id"]

DEFAULT_APPROVAL_TIMEOUT = 300.0
"""Seconds an approval waits for its answer before it counts as rejected."""

_TARGET_KEYS = ("path", "command", "url", "base_url", "query", "source", "pattern")


def hitl_id(call_id: str) -> str:
    """The ``hitl_request.id`` of a call: derived, not random, so the same call always asks with the same id."""
    return f"hitl-{call_id}"


@dataclass
class _Wait:
    done: anyio.Event = field(default_factory=anyio.Event)
    decision: ApprovalDecision | None = None


class HitlBridge:
    """Sends ``hitl_request`` events through the attached sink and matches ``hitl_response`` answers to them."""

    def __init__(self, *, timeout: float = DEFAULT_APPROVAL_TIMEOUT) -> None:
        self.timeout = timeout
        """Seconds a request waits for its answer."""
        self.grants: GrantRecorder | None = None
        """Where an approval answered with ``always_approve`` is remembered (the session's grants); without one,
        ``always_approve`` approves that call only."""
        self._emit: EventSink | None = None
        self._waits: dict[str, _Wait] = {}
        self._closed: str | None = None

    @property
    def waiting(self) -> list[str]:
        """Ids of the requests waiting for an answer, oldest first."""
        return [request_id for request_id, wait in self._waits.items() if wait.decision is None]

    def attach(self, emit: EventSink) -> None:
        """Publish requests through ``emit`` from now on (the runner's event sink)."""
        self._emit = emit
        self._closed = None

    def detach(self, reason: str = "the client connection closed before answering") -> None:
        """The client is gone: reject every waiting request and every later one with ``reason``."""
        self._emit = None
        self._closed = reason
        for wait in list(self._waits.values()):
            _settle(wait, ApprovalDecision(approved=False, reason=reason))

    def close(self) -> None:
        """Shut the bridge down: like :meth:`detach`, with its own reason."""
        self.detach("the approval bridge was shut down")

    def answer(self, response: HitlResponseRequest) -> bool:
        """Settle the request ``response`` answers. Without an id it is accepted only while exactly one waits.

        Returns ``False`` (and changes nothing) when it matches no waiting request.
        """
        if response.id is not None:
            wait = self._waits.get(response.id)
        else:
            # An answered request stays registered until its waiter resumes; it no longer waits.
            pending = [wait for wait in self._waits.values() if wait.decision is None]
            wait = pending[0] if len(pending) == 1 else None
        if wait is None or wait.decision is not None:
            return False
        _settle(
            wait,
            ApprovalDecision(
                approved=response.approved,
                reason=response.reason,
                modified_arguments=response.modified_arguments,
                always_approve=response.always_approve,
            ),
        )
        return True

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """Publish ``request`` and wait for its answer (or the fail-closed rejection)."""
        if self._emit is None:
            reason = self._closed or "no client is attached to answer approval requests"
            return ApprovalDecision(approved=False, reason=reason)
        request_id = hitl_id(
            request.call_id
            if request.subagent_call_id is None
            else f"{request.call_id}.{request.subagent_call_id}"
        )
        wait = _Wait()
        self._waits[request_id] = wait  # registered before publishing: the answer cannot outrun its wait
        try:
            self._emit(
                HitlRequestEvent(
                    id=request_id,
                    action=request.reason or request.tool_name,
                    target=_target(request),
                    description=f"Allow {request.tool_name}?"
                    if request.subagent is None
                    else f"Allow {request.tool_name} for subagent {request.subagent}?",
                    tool_name=request.tool_name,
                    arguments=request.arguments,
                    call_id=request.call_id,
                    level=request.level,
                )
            )
            with anyio.move_on_after(self.timeout):
                await wait.done.wait()
            if wait.decision is None:
                return ApprovalDecision(
                    approved=False, reason=f"no answer to the approval request within {self.timeout:g}s"
                )
            if wait.decision.approved and wait.decision.always_approve and self.grants is not None:
                # What runs is the call with the client's changes, so that is what is remembered.
                changed = wait.decision.modified_arguments
                arguments = {**request.arguments, **changed} if changed else request.arguments
                self.grants.record(msgspec.structs.replace(request, arguments=arguments))
            return wait.decision
        finally:
            self._waits.pop(request_id, None)


def _settle(wait: _Wait, decision: ApprovalDecision) -> None:
    if wait.decision is None:
        wait.decision = decision
        wait.done.set()


def _target(request: ApprovalRequest) -> str:
    for key in _TARGET_KEYS:
        value = request.arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return ""
