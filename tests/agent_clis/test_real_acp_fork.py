"""``BackendOptions.fork`` on a real ACP CLI: OpenCode's ``opencode acp`` advertises the unstable
``session/fork``. One turn opens a session; a second backend forks it (its model request carries the first turn,
and its session id is new); a third resumes the original, which carries the first turn and not the fork's. Every
stream is judged by :func:`hive_protocol.verify`; no process is left. Skipped, saying why, when OpenCode is not
installed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_clis_harness import TIMEOUT
from agent_clis_harness import ModelServers
from agent_clis_harness import model_requests
from agent_clis_harness import owned_processes
from agent_clis_harness import request_text
from agent_clis_harness import require_cli

from hive_core.runners import collect_turn
from hive_protocol import TextDeltaEvent
from hive_protocol import verify
from hive_providers.backends.acp.backend import AcpBackend
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import ModelEndpoint
from hive_providers.backends.registry import resolve_backend

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


async def test_a_fork_continues_a_copy_and_leaves_the_original(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    server = model_servers("opencode")
    project = tmp_path / "project"
    project.mkdir()

    async def turn(prompt: str, **more: Any) -> tuple[AcpBackend, list[str]]:
        backend = AcpBackend(
            resolve_backend("opencode-acp"),
            BackendOptions(
                cwd=project,
                endpoint=ModelEndpoint(base_url=f"{server.url}/v1"),
                home=tmp_path / "home",
                executable=str(require_cli("opencode")),
                cancel_grace=3.0,
                **more,
            ),
        )
        since = len(server.requests)
        try:
            with anyio.fail_after(TIMEOUT):
                events = await collect_turn(backend, prompt)
        finally:
            await backend.aclose()
        assert verify(events, turns=1) == []
        assert "MOCK_REPLY" in "".join(e.content for e in events if isinstance(e, TextDeltaEvent)), events
        assert backend.last_connection is not None
        pid = backend.last_connection.pid
        assert pid is not None
        assert pid not in owned_processes(os.getpid())
        return backend, [request_text(r) for r in model_requests(server, since)]

    first, _ = await turn("first words")
    original = first.session_id
    assert original is not None
    fork, forked = await turn("forked words", resume=original, fork=True)
    assert fork.session_id not in (None, original)
    assert any("first words" in text and "forked words" in text for text in forked), forked
    again, resumed = await turn("back to the original", resume=original)
    assert again.session_id == original
    assert any("first words" in text and "back to the original" in text for text in resumed), resumed
    assert not any("forked words" in text for text in resumed), "the fork changed the original session"
