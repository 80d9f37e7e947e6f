"""Temporal as hive's engine: the front end's client (:class:`TemporalEngine`) and the worker (:func:`run_worker`).

Front ends start each session's workflow (its id the session's id, on task queue ``hive``) and signal requests to
it, with signal-with-start so that a request to a session whose workflow ended starts it again. Workers poll the
task queue for the workflow's tasks and the turns' activities. Heartbeats are sent at least every second (the
heartbeat timeout is ten), so that a cancel reaches a running turn within a second or two.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import anyio
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError
from temporalio.worker import Worker

from .address import TASK_QUEUE
from .address import EngineAddress
from .turns import TurnActivities
from .wire import SessionSpec
from .wire import SessionStart
from .workflow import WORKFLOW
from .workflow import SessionWorkflow

__all__ = ["EngineUnreachable", "TemporalEngine", "connect", "run_worker"]

_CONNECT_TIMEOUT = timedelta(seconds=10)
_RUNNING = WorkflowIDConflictPolicy.USE_EXISTING  # a session's workflow that runs already is the one to use


class EngineUnreachable(Exception):
    """The engine cannot be reached; the message says where and why, in one line."""


async def connect(address: EngineAddress) -> Client:
    """A client of the Temporal service at ``address``; raises :class:`EngineUnreachable` when it cannot be
    reached."""
    try:
        return await Client.connect(address.target, namespace=address.namespace)
    except RuntimeError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EngineUnreachable(f"the engine {address} cannot be reached ({reason})") from None


class TemporalEngine:
    """:class:`~hive_cli.engine.Engine` on a Temporal service (see the module's documentation)."""

    def __init__(self, client: Client, address: EngineAddress) -> None:
        self.client = client
        self.address = address

    @classmethod
    async def connect(cls, address: EngineAddress) -> TemporalEngine:
        """Connect to the service at ``address``."""
        return cls(await connect(address), address)

    async def open(self, spec: SessionSpec) -> None:
        await self._start(spec)

    async def send(self, spec: SessionSpec, line: bytes) -> None:
        await self._start(spec, line)

    async def _start(self, spec: SessionSpec, line: bytes | None = None) -> None:
        """Start the session's workflow unless it runs; with ``line``, signal it (signal-with-start)."""
        await self.client.start_workflow(
            WORKFLOW,
            SessionStart(spec),
            id=spec.session_id,
            task_queue=TASK_QUEUE,
            id_conflict_policy=_RUNNING,
            start_signal=None if line is None else "request",
            start_signal_args=[] if line is None else [line.decode()],
        )

    async def check(self) -> str:
        try:
            await self.client.workflow_service.get_system_info(
                GetSystemInfoRequest(), timeout=_CONNECT_TIMEOUT
            )
            await self.client.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace=self.address.namespace), timeout=_CONNECT_TIMEOUT
            )
        except RPCError as exc:
            raise EngineUnreachable(f"the engine {self.address} does not answer ({exc.message})") from None
        return f"{self.address} reachable, namespace {self.address.namespace} found"

    async def aclose(self) -> None:
        return None  # the client's connection closes with its last reference


async def run_worker(
    client: Client,
    activities: TurnActivities,
    *,
    ready: Callable[[], None],
    max_turns: int,
) -> None:
    """Poll the task queue for sessions' workflow tasks and turns until cancelled; ``ready()`` once polling."""
    worker = Worker(
        client,
        task_queue=TASK_QUEUE,
        workflows=[SessionWorkflow],
        activities=[activities.run_turn, activities.end_turn],
        max_concurrent_activities=max_turns,
        default_heartbeat_throttle_interval=timedelta(seconds=1),
        max_heartbeat_throttle_interval=timedelta(seconds=1),
        graceful_shutdown_timeout=timedelta(seconds=5),
    )
    async with worker:
        ready()
        await anyio.sleep_forever()
