"""Durable approval waits: a ``hitl_request`` outlives the process that sent it.

:class:`DurableHitlBridge` is a :class:`~hive_core.HitlBridge` that writes each request to the session's log
(``approval_wait``, the event exactly as sent, before it is sent) and each answer (``approval_closed``). A
process that dies while a call waits leaves the wait open: the turn is *suspended*, not interrupted.

:class:`SuspendedTurn` finishes such a turn in the next process serving the same session id: it re-sends each
waiting request unchanged (same ``id``), runs the waiting calls in the loop's own tool round
(:func:`~hive_core.tool_round.run_tool_round`: guards, gate and tool, with the tools the turn offered, so an
approval runs the call and a rejection refuses it), records the round's results, and lets the model finish the
turn. The wait's timeout counts from the original send: a wait whose time ran out while no
process served it is rejected at once, without asking. Since the loop always starts a turn with a user message,
the model is asked to go on with :data:`RESUMED_NOTE` as that message.

What a server does with ``--session-id ID`` (``run --server``), in this order:

1. ``store.create(project_path=..., session_id=ID, exist_ok=True)``; ``session = agent.session(store.restore(ID))``
   where the agent's ``approvals`` is ``bridge = DurableHitlBridge(store, ID)``;
   ``recorder = TranscriptRecorder(session, store, ID)`` is the processor.
2. ``suspended = SuspendedTurn.load(store, ID)``.
3. Send ``session_started`` and ``bridge.attach(emit)`` (``SessionRunner.serve`` does both).
4. If ``suspended`` is not ``None``: run ``suspended.resume(recorder, bridge, turn_sink)`` as the session's first
   turn (under the runner's turn guarantees and cancel scope), started with ``await group.start(...)``, which
   returns once every waiting request was re-sent; only then start reading requests. Turns that arrive
   meanwhile queue behind it; a ``hitl_response`` read afterwards finds its wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Final

import anyio
import msgspec
from anyio.abc import TaskStatus

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.hitl import DEFAULT_APPROVAL_TIMEOUT
from hive_core.hitl import HitlBridge
from hive_core.hitl import hitl_id
from hive_core.messages import ToolCallPart
from hive_core.tool_round import ToolOffer
from hive_core.tool_round import run_tool_round
from hive_core.tools import EventSink
from hive_core.tools import ToolOutcome
from hive_core.turn_request import TurnRequest
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import TurnEndEvent
from hive_protocol import TurnOptions
from hive_protocol import UserMessageRequest

from .recorder import TranscriptRecorder
from .records import ApprovalClosed
from .records import ApprovalOutcome
from .records import ApprovalWait
from .records import PendingApproval
from .records import TurnResume
from .replay import Suspension
from .replay import replay
from .store import SessionStore

__all__ = ["RESUMED_NOTE", "DurableHitlBridge", "SuspendedTurn"]

RESUMED_NOTE: Final = (
    "[hive restarted while this turn waited for approval; the results of the waiting tool calls are above. "
    "Continue the task from there.]"
)
"""The user message that lets the model finish a resumed turn."""


@dataclass
class _Resumed:
    deadline: float
    timeout: float
    sent: anyio.Event = field(default_factory=anyio.Event)


class DurableHitlBridge(HitlBridge):
    """A :class:`~hive_core.HitlBridge` whose waits are written to a session's log and survive a crash.

    Use one instance as the agent's ``approvals`` and as the runner's ``bridge``, as with a plain bridge. A
    wait closed by cancelling the turn or by the client going away (end of input) is recorded as closed; only
    a process that dies leaves it open.
    """

    def __init__(
        self,
        store: SessionStore,
        session_id: str,
        *,
        timeout: float = DEFAULT_APPROVAL_TIMEOUT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(timeout=timeout)
        self.store = store
        """Where the waits are written."""
        self.session_id = session_id
        """The session whose log holds them."""
        self.clock = clock
        """Wall clock (Unix seconds) that resumed waits count their remaining time by."""
        self._open: set[str] = set()
        self._resumed: dict[str, _Resumed] = {}

    def attach(self, emit: EventSink) -> None:
        """Publish requests through ``emit``, each written to the log before it is sent."""
        super().attach(self._recording(emit))

    def _recording(self, emit: EventSink) -> EventSink:
        def record(event: Event) -> None:
            if isinstance(event, HitlRequestEvent):
                resumed = self._resumed.get(event.id)
                if resumed is not None:
                    resumed.sent.set()  # a re-send: the log has it since its first send
                elif event.id not in self._open:
                    self.store.append(self.session_id, ApprovalWait(request=event, timeout=self.timeout))
                    self._open.add(event.id)
            emit(event)

        return record

    def resume(self, pending: Iterable[PendingApproval]) -> None:
        """Expect these waits to be asked again: they keep their id and the time left from their first send."""
        for item in pending:
            self._resumed[item.request.id] = _Resumed(item.expires_at, item.timeout)
            self._open.add(item.request.id)

    async def resent(self) -> None:
        """Wait until every resumed wait was re-sent, or settled without asking."""
        for resumed in list(self._resumed.values()):
            await resumed.sent.wait()

    def release(self, request_id: str, outcome: ApprovalOutcome = "superseded") -> None:
        """A resumed call ended without its wait being asked again (the rules changed, or it was cancelled).

        Closes the wait in the log with ``outcome``; a wait already closed is left alone.
        """
        resumed = self._resumed.pop(request_id, None)
        if resumed is not None:
            resumed.sent.set()
        self._close(request_id, outcome, None)

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask (or, for a resumed wait, ask again with the time it has left), recording how the wait closed."""
        request_id = hitl_id(request.call_id)
        resumed = self._resumed.get(request_id)
        try:
            if resumed is None:
                decision = await super().request(request)
                outcome: ApprovalOutcome = "approved" if decision.approved else "rejected"
            else:
                decision, outcome = await self._ask_again(request, resumed)
        except anyio.get_cancelled_exc_class():
            self._close(request_id, "cancelled", None)
            raise
        finally:
            if resumed is not None:
                resumed.sent.set()
                self._resumed.pop(request_id, None)
        self._close(request_id, outcome, decision.reason)
        return decision

    async def _ask_again(
        self, request: ApprovalRequest, resumed: _Resumed
    ) -> tuple[ApprovalDecision, ApprovalOutcome]:
        expired = ApprovalDecision(
            approved=False, reason=f"no answer to the approval request within {resumed.timeout:g}s"
        )
        remaining = resumed.deadline - self.clock()
        if remaining <= 0:
            return expired, "expired"
        with anyio.move_on_after(remaining):
            decision = await super().request(request)
            return decision, "approved" if decision.approved else "rejected"
        return expired, "expired"

    def _close(self, request_id: str, outcome: ApprovalOutcome, reason: str | None) -> None:
        if request_id in self._open:
            self._open.discard(request_id)
            self.store.append(
                self.session_id, ApprovalClosed(request_id=request_id, outcome=outcome, reason=reason)
            )


class SuspendedTurn:
    """A turn that a process left waiting for approval, loaded from the log; :meth:`resume` finishes it."""

    def __init__(self, suspension: Suspension) -> None:
        self.suspension = suspension
        """What the log says about the turn."""

    @classmethod
    def load(cls, store: SessionStore, session_id: str) -> SuspendedTurn | None:
        """The session's suspended turn, or ``None`` when its last turn is not waiting for approval."""
        suspension = replay(store.entries(session_id)).suspension
        return None if suspension is None else cls(suspension)

    @property
    def pending(self) -> list[PendingApproval]:
        """The waits to re-send, oldest first."""
        return self.suspension.pending

    async def resume(
        self,
        recorder: TranscriptRecorder,
        bridge: DurableHitlBridge,
        emit: EventSink,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Finish the turn: events go to ``emit`` (the runner's turn sink), ending with ``turn_end``.

        ``recorder`` records the rest of the turn; its session's conversation is replaced by the logged one
        (with the waiting round still open). ``bridge`` must be attached already, and be the agent's approval
        service. ``task_status.started()`` is called once every waiting request was re-sent (or settled without
        asking), so ``await group.start(suspended.resume, ...)`` returns when requests may be read.
        """
        if bridge.session_id != recorder.session_id:
            raise ValueError(
                f"the bridge records session {bridge.session_id!r} but the recorder {recorder.session_id!r}"
            )
        suspension = self.suspension
        session = recorder.session
        started = session.agent.clock()
        recorder.rebase(suspension.messages)
        recorder.store.append(
            recorder.session_id, TurnResume(request_ids=[item.request.id for item in suspension.pending])
        )
        bridge.resume(suspension.pending)
        request = suspension.request
        # The suspended round's calls are in the history: a tool selector keeps offering what they call.
        offer = session.agent.offer(
            request.options or TurnOptions(), TurnRequest.of(request).prompt, suspension.messages
        )
        outcomes: list[ToolOutcome] = []

        def settled(call: ToolCallPart) -> None:
            bridge.release(hitl_id(call.id))  # closes the wait of a call that ended without asking again

        async def run_round(log: EventSink) -> None:
            outcomes.extend(
                await run_tool_round(
                    session, suspension.calls, offer.names, log, known=suspension.results, on_settled=settled
                )
            )

        with recorder.recording(emit) as log:
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(run_round, log)
                    await bridge.resent()
                    task_status.started()
            except anyio.get_cancelled_exc_class():
                for item in suspension.pending:
                    bridge.release(item.request.id, "cancelled")
                raise
            if any(outcome.terminate for outcome in outcomes):
                log(
                    TurnEndEvent(
                        stop_reason="tool_terminated",
                        duration_ms=int((session.agent.clock() - started) * 1000),
                    )
                )
                return
            await session(
                UserMessageRequest(
                    content=RESUMED_NOTE, model=request.model, options=_going_on(request.options, offer)
                ),
                log,
            )


def _going_on(options: TurnOptions | None, offer: ToolOffer) -> TurnOptions | None:
    # The turn's first round made the required call; the model goes on as after any tool round: offered the
    # same tools, free to choose.
    if options is None or offer.choice in ("auto", "none"):
        return options
    return msgspec.structs.replace(options, tool_names=list(offer.names), tool_mode="auto")
