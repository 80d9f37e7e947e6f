"""Fixtures of the MCP plugin tests: the helper module on the import path, and the test server over HTTP."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.abc
import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from mcp_harness import SERVER_SCRIPT  # noqa: E402 - importable only once the folder is on the path
from mcp_harness import WAIT  # noqa: E402 - importable only once the folder is on the path


@pytest.fixture
async def http_server(anyio_backend: str) -> AsyncIterator[tuple[str, anyio.abc.Process]]:
    """The test server serving streamable HTTP on 127.0.0.1: its endpoint URL and its process."""
    process = await anyio.open_process([sys.executable, str(SERVER_SCRIPT), "http"], stderr=None)
    try:
        assert process.stdout is not None
        with anyio.fail_after(WAIT):
            first = b""
            while not first.endswith(b"\n"):
                first += await process.stdout.receive(1)
        yield f"http://127.0.0.1:{int(first)}/mcp", process
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True), anyio.fail_after(WAIT):
            await process.wait()
        await process.aclose()
