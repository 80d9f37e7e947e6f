"""A failure at run time (the model cannot be reached) prints as one ``hive: <message> (<kind>)`` line, the form of
every other hive failure, once, on every command that runs a turn; the exit codes stay as they were."""

from __future__ import annotations

import socket

import pytest
from cli_harness import Workspace


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.parametrize("args", [("-p", "hi"), ("run", "hi"), ("hi",)])
def test_an_unreachable_model_is_one_hive_line(ws: Workspace, args: tuple[str, ...]) -> None:
    ws.env.update(
        OPENAI_API_KEY="test", OPENAI_MODEL="m", OPENAI_ENDPOINT=f"http://127.0.0.1:{_closed_port()}/v1"
    )
    result = ws.run(*args)
    assert result.code == 1, result
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    failures = [line for line in lines if "could not reach" in line]
    assert len(failures) == 1, result
    assert failures[0].startswith("hive: openai: could not reach the server at http://127.0.0.1:"), result
    assert failures[0].endswith("(network)"), result
    assert not any(line.startswith("error:") for line in lines), result
