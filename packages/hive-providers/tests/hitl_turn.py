"""A turn of the fake ACP agent under hive's default rules, the human answering every approval through the
HITL bridge: the whole road a recorded transcript takes through the backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from typing import TypeVar

import anyio
from acp_fake_agent import read_log
from backend_harness import SPEC
from backend_harness import WAIT
from backend_harness import clean
from backend_harness import end_of
from backend_harness import of
from backend_harness import options

from hive_core.hitl import HitlBridge
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.questions import QuestionService
from hive_core.runners import SessionRunner
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import UserMessageRequest
from hive_providers.backends.acp.backend import AcpBackend
from hive_providers.backends.kit.specs import LaunchSpec

E = TypeVar("E", bound=Event)


class Turn:
    """One turn of the fake agent on a transcript, under the default rules, the human approving (or,
    with ``approve=False``, refusing) every call."""

    def __init__(
        self,
        tmp_path: Path,
        transcript: str,
        *,
        questions: QuestionService | None = None,
        spec: LaunchSpec = SPEC,
        approve: bool = True,
    ) -> None:
        self.tmp_path = tmp_path
        self.approve = approve
        self.events: list[Event] = []
        self.hitl = HitlBridge(timeout=WAIT)
        self.hitl.attach(self._sink)
        self.backend = AcpBackend(
            spec,
            options(
                tmp_path,
                transcript,
                policy=PermissionPolicy(PermissionRules.default(), tmp_path),
                approvals=self.hitl,
                questions=questions,
            ),
        )

    def _sink(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, HitlRequestEvent):
            self.hitl.answer(HitlResponseRequest(id=event.id, approved=self.approve, reason="no"))

    async def run(self, prompt: str, *, stop_reason: str | None = "completed") -> list[Event]:
        try:
            with anyio.fail_after(WAIT):
                await SessionRunner(self.backend).run_turn(UserMessageRequest(content=prompt), self._sink)
        finally:
            await self.backend.aclose()
        end = end_of(clean(self.events))
        if stop_reason is not None:
            assert end.stop_reason == stop_reason
        return self.events

    def of(self, kind: type[E]) -> list[E]:
        """The events of one ``kind``, in order."""
        return of(self.events, kind)

    def answers(self) -> dict[object, Any]:
        """The client's results to the agent's requests, by request id."""
        return {
            message["id"]: message.get("result", message.get("error"))
            for message in read_log(self.tmp_path / "log.jsonl")
            if "method" not in message
        }
