"""samples/console-chat: the SDK embedded in a terminal chat, run as a user runs it, against the scripted model
server (the ``openai`` provider over the Responses API, chosen from the environment as the ``hive`` command
chooses it): two lines typed, two replies streamed, the second request carrying the whole conversation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_providers import CONFIG_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "samples" / "console-chat" / "chat.py"
MODEL = "scripted-model"
TIMEOUT = 60


def environment(home: Path, **extra: str) -> dict[str, str]:
    """The test's environment without any provider setting, with an empty hive home."""
    provider_variables = {variable.name for variable in CONFIG_SCHEMA.environment}
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in provider_variables and not name.startswith(("OPENAI_", "ANTHROPIC_", "HIVE_"))
    }
    env.update(HIVE_HOME=str(home), **extra)
    return env


def texts(request_body: dict[str, Any]) -> list[tuple[str, str]]:
    """The (role, text) of each message a Responses API request sent."""
    found: list[tuple[str, str]] = []
    for item in request_body["input"]:
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            continue
        content = item["content"]
        text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
        found.append((item["role"], text))
    return found


def test_the_console_chat_answers_each_line_and_keeps_the_conversation(tmp_path: Path) -> None:
    rounds = [
        Round(parts=[ScriptText(chunks=["Hello ", "there, ", "friend!"])]),
        Round(parts=[ScriptText(chunks=["You said ", "hello."])]),
    ]
    with ScriptedModelServer(rounds, model=MODEL) as server:
        env = environment(
            tmp_path / "home",
            OPENAI_ENDPOINT=server.url + "/v1",
            OPENAI_API="responses",
            OPENAI_API_KEY="x",
            OPENAI_MODEL=MODEL,
        )
        (tmp_path / "home").mkdir()
        done = subprocess.run(
            [sys.executable, str(CHAT)],
            input="Say hello\n\nWhat did I say?\n",
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=TIMEOUT,
        )
        requests = [r for r in server.requests if r.endpoint == "openai_responses"]
    assert done.returncode == 0, done.stderr
    # Each reply streamed whole, on its own line; the blank line was not sent.
    assert done.stdout == "Hello there, friend!\nYou said hello.\n"
    assert "error" not in done.stderr
    assert len(requests) == 2
    first, second = (request.body for request in requests)
    assert first["model"] == MODEL
    assert first["stream"] is True
    assert "terminal chat" in first["instructions"]
    assert [tool["name"] for tool in first["tools"]] == ["current_time"]
    assert texts(first) == [("user", "Say hello")]
    assert texts(second) == [
        ("user", "Say hello"),
        ("assistant", "Hello there, friend!"),
        ("user", "What did I say?"),
    ]


def test_the_console_chat_names_a_half_configured_provider(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    done = subprocess.run(
        [sys.executable, str(CHAT)],
        input="hi\n",
        capture_output=True,
        text=True,
        env=environment(tmp_path / "home", OPENAI_API_KEY="x", OPENAI_ENDPOINT="http://127.0.0.1:9/v1"),
        cwd=tmp_path,
        timeout=TIMEOUT,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "chat: " in done.stderr
    assert "OPENAI_MODEL" in done.stderr
