"""The local default: with an empty home and no provider variable, ``hive -p`` answers with the SmolLM2 model
run in process (nothing to configure, no server).

The ``hive`` process is started early by ``conftest.local_default_run``, in a workspace of its own; this test
(moved to the end of the run) waits for it and checks what it printed.
"""

from __future__ import annotations

import pytest
from cli_harness import Background
from cli_harness import Workspace
from cli_harness import clean_env

LOCAL_TIMEOUT = 300.0


@pytest.mark.slow
def test_an_empty_setup_answers_with_the_local_model(
    local_default_run: tuple[Workspace, Background] | None,
) -> None:
    assert local_default_run is not None
    workspace, running = local_default_run
    # Nothing configured: no provider variable, local inference not even mentioned, an empty home.
    assert not {"OPENAI_API_KEY", "LMSUPPLY_ENABLED"} & set(workspace.env)
    assert set(clean_env(workspace.home)) - set(workspace.env) == {"LMSUPPLY_ENABLED"}
    assert not (workspace.home / "config.yaml").exists()
    result = running.result(timeout=LOCAL_TIMEOUT)
    assert result.code == 0, result
    doc = result.line_document()
    assert {"content", "session_id", "usage", "stop_reason", "calls"} <= set(doc)
    assert (doc["stop_reason"], doc["calls"]) == ("completed", [])
    content = doc["content"]
    assert isinstance(content, str)
    # The small-model profile: a short greeting, no code, from a prompt of a few dozen tokens (it was 2,858:
    # every tool's schema, for a question that needs none).
    assert any(word in content.lower() for word in ("hello", "hi", "hey", "greetings", "welcome")), doc
    assert "```" not in content, doc
    assert len(content) < 200, doc
    assert 0 < doc["usage"]["input_tokens"] < 400, doc
    assert doc["usage"]["output_tokens"] > 0
    [session] = workspace.sessions()
    assert session["id"] == doc["session_id"]
