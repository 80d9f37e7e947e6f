"""``@path`` in a one-shot prompt (``hive -p``, ``hive run``) attaches the file as the interactive prompt does,
judged by the read rules; with no terminal a file the rules ask about is left out with a note to the model, and the
message still goes. A file the rules deny stops the run before anything is sent."""

from __future__ import annotations

import pytest
from cli_harness import SECRET_AND_PRIVATE
from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts

from hive_conformance.model_server import ScriptedModelServer


def _project(ws: Workspace) -> None:
    ws.permissions(SECRET_AND_PRIVATE)
    (ws.project / "src").mkdir()
    (ws.project / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (ws.project / "secret.txt").write_text("hunter2\n", encoding="utf-8")
    (ws.project / "private").mkdir()
    (ws.project / "private" / "plan.md").write_text("The private plan.\n", encoding="utf-8")


@pytest.mark.parametrize("command", [["-p"], ["run"]], ids=["-p", "run"])
def test_a_one_shot_run_attaches_a_mentioned_file(
    ws: Workspace, server: ScriptedModelServer, command: list[str]
) -> None:
    _project(ws)
    server.add(text("It subtracts."))
    result = ws.use(server).run(*command, "explain @src/app.py")
    assert result.code == 0, result
    [request] = model_requests(server)
    assert user_texts(request) == [
        "explain @src/app.py\n\nsrc/app.py:\n```\ndef add(a, b):\n    return a - b\n```"
    ]


def test_without_a_terminal_an_asked_file_is_left_out_and_the_message_goes(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _project(ws)
    server.add(text("Only the app."))
    result = ws.use(server).run("-p", "compare @private/plan.md with @src/app.py")
    assert result.code == 0, result
    assert "@private/plan.md: not attached" in result.stderr
    assert "Only the app." in result.stdout
    [request] = model_requests(server)
    [sent] = user_texts(request)
    assert sent.startswith("compare @private/plan.md with @src/app.py\n\nsrc/app.py:\n")
    assert sent.endswith("[@private/plan.md was not attached: the user did not allow reading it]")
    assert "The private plan." not in str(request.body)


def test_a_denied_file_stops_the_run_before_anything_is_sent(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _project(ws)
    result = ws.use(server).run("-p", "show @secret.txt")
    assert result.code == 1, result
    assert "@secret.txt: refused by the rules" in result.stderr
    assert model_requests(server) == []
    assert "hunter2" not in result.stdout + result.stderr
