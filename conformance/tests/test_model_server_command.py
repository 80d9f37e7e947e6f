"""``python -m hive_conformance.model_server``, run as a real subprocess."""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from hive_conformance.script import ContextLengthFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import encode_script

pytestmark = pytest.mark.slow


def first_line(process: subprocess.Popen[str], timeout: float = 20) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, "the command printed no URL in time"
    return process.stdout.readline().strip()


def test_it_serves_a_script_file_and_prints_its_url_first(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_bytes(encode_script([Round(parts=[ScriptText(chunks=["from ", "file"])]), Round()]))
    record = tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "hive_conformance.model_server", str(script), "--record", str(record)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = first_line(process)
        assert url.startswith("http://127.0.0.1:")
        reply = httpx2.post(url + "/v1/chat/completions", json={"model": "m", "messages": []}, timeout=10)
        assert reply.json()["choices"][0]["message"]["content"] == "from file"
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
    assert process.returncode == 0
    assert "1 round(s) left unconsumed" in stderr
    [line] = record.read_text().splitlines()
    assert json.loads(line)["body"] == {"model": "m", "messages": []}


def test_it_binds_the_port_asked_for(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_bytes(encode_script([Round(failure=ContextLengthFailure())]))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "hive_conformance.model_server", str(script), "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--model", "named"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = first_line(process)
        assert url == f"http://127.0.0.1:{port}"
        assert httpx2.get(url + "/v1/models", timeout=10).json()["data"][0]["id"] == "named"
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)
    assert process.returncode == 0


def test_a_bad_script_is_refused_with_its_line(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text('{"parts": []}\n{"bogus": 1}\n')
    result = subprocess.run(
        [sys.executable, "-m", "hive_conformance.model_server", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "script line 2" in result.stderr
