"""A mistyped command line (``hive sesions list``) is refused with the command it resembles, never sent to the
model; a prompt that merely starts with a word like a command (``hive model this function``) is still a prompt."""

from __future__ import annotations

import pytest
from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts

from hive_conformance.model_server import ScriptedModelServer


@pytest.mark.parametrize(
    ("args", "meant", "words"),
    [
        (("sesions", "list"), "sessions", "sesions list"),
        (("sesions", "delete", "abc"), "sessions", "sesions delete abc"),
        (("modles", "--provider", "openai"), "models", "modles"),
        (("docter", "--verbose"), "doctor", "docter"),
        (("sesions",), "sessions", "sesions"),
    ],
)
def test_a_mistyped_command_line_is_refused_with_a_suggestion(
    ws: Workspace, server: ScriptedModelServer, args: tuple[str, ...], meant: str, words: str
) -> None:
    result = ws.use(server).run(*args)
    assert result.code == 2, result
    assert result.stderr.splitlines() == [
        f"hive: no such command {args[0]!r} — did you mean {meant!r}? "
        f'(to send it to the model: hive -p "{words}")'
    ], result
    assert model_requests(server) == []


def test_prompts_that_start_like_a_command_are_still_prompts(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("One."), text("Two."))
    for words in (("model", "this", "function"), ("explain", "this")):
        result = ws.use(server).run(*words)
        assert result.code == 0, result
    assert [user_texts(request)[-1] for request in model_requests(server)] == [
        "model this function",
        "explain this",
    ]
