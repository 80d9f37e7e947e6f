"""``hive -p`` under attack through its file tools: a FIFO, and hard links to an outside file and to a denied one.

The project holds a FIFO ``src/pipe``, ``src/notes.txt`` (a hard link to ``../outside/secret.txt``) and
``src/key_copy.txt`` (a hard link to ``secrets/key.txt``, which the default rules deny). The scripted model reads
and writes each; hive runs with the default rules and no terminal, so a call the rules ask about is refused. The
process must end within its timeout (a FIFO once hung it for good), and no secret may reach the output, the model's
next request or the files behind the links.
"""

from __future__ import annotations

import os
from typing import Any

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer

OUTSIDE = "OUTSIDE-SECRET-3c81"
KEY = "KEY-SECRET-e402"
PUBLIC = "PUBLIC-TEXT-77aa"


def plant(ws: Workspace) -> None:
    outside = ws.root / "outside"
    outside.mkdir()
    (ws.project / "src").mkdir()
    (ws.project / "secrets").mkdir()
    (outside / "secret.txt").write_text(f"{OUTSIDE}\n", encoding="utf-8")
    (ws.project / "secrets" / "key.txt").write_text(f"{KEY}\n", encoding="utf-8")
    (ws.project / "src" / "public.txt").write_text(f"{PUBLIC}\n", encoding="utf-8")
    os.link(outside / "secret.txt", ws.project / "src" / "notes.txt")
    os.link(ws.project / "secrets" / "key.txt", ws.project / "src" / "key_copy.txt")
    os.mkfifo(ws.project / "src" / "pipe")


CORPUS = [
    ("read_file", {"path": "src/pipe"}),
    ("read_file", {"path": "src/pipe", "start_line": 1, "line_count": 1}),
    ("write_file", {"path": "src/pipe", "content": "x"}),
    ("grep_files", {"pattern": "SECRET|PUBLIC"}),
    ("read_file", {"path": "src/notes.txt"}),
    ("read_file", {"path": "src/key_copy.txt"}),
    ("edit_file", {"path": "src/notes.txt", "old_text": "OUTSIDE", "new_text": "CHANGED"}),
    ("write_file", {"path": "src/key_copy.txt", "content": "CHANGED\n"}),
    ("read_file", {"path": "src/public.txt"}),
]
"""Each call, as (tool, arguments): the model makes them all in one round."""


def test_a_fifo_and_hard_links_neither_hang_nor_leak(ws: Workspace, server: ScriptedModelServer) -> None:
    plant(ws)
    server.add(
        calls(*((f"call_{n}", tool, arguments) for n, (tool, arguments) in enumerate(CORPUS))),
        text("Done."),
    )
    # ws.run waits at most the harness's timeout: a read that blocks on the FIFO fails the test there.
    result = ws.use(server).run("-p", "read everything", "-o", "json")
    assert result.code == 0, result
    outputs = input_items(model_requests(server)[1], "function_call_output")
    seen = {str(item["call_id"]): str(item["output"]) for item in outputs}
    assert len(seen) == len(CORPUS)
    for call in ("call_0", "call_1", "call_2"):
        assert "named pipe (FIFO)" in seen[call], seen[call]
    assert PUBLIC in seen["call_3"]
    assert PUBLIC in seen["call_8"]
    for marker in (OUTSIDE, KEY):
        assert marker not in result.stdout
        leaked = [call for call, output in seen.items() if marker in output]
        assert leaked == [], f"{marker} reached the model through {leaked}"
    # The hard-linked reads and edits were asked about, and with no one to ask, refused.
    for call in ("call_4", "call_5", "call_6", "call_7"):
        assert "approval needed" in seen[call], seen[call]
    assert (ws.root / "outside" / "secret.txt").read_text(encoding="utf-8") == f"{OUTSIDE}\n"
    assert (ws.project / "secrets" / "key.txt").read_text(encoding="utf-8") == f"{KEY}\n"


def test_a_person_approves_reading_a_hard_link_and_is_told_why_it_was_asked(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    plant(ws)
    server.add(calls(("call_0", "read_file", {"path": "src/notes.txt"})), text("Read."))
    with ws.use(server).start("run", "--server", "--session-id", "links-1") as proc:
        assert proc.next_event()["type"] == "session_started"
        proc.send({"type": "user_message", "content": "read the notes"})
        asked = proc.events_until("hitl_request")[-1]
        assert "hard links" in asked["action"], asked
        proc.send({"type": "hitl_response", "id": asked["id"], "approved": True})
        ends: list[dict[str, Any]] = [
            event for event in proc.events_until("tool_end") if event["type"] == "tool_end"
        ]
        proc.events_until("turn_end")
    assert ends[-1]["success"] is True, ends
    # The person approved: the file is read, through the name the call gave.
    outputs = input_items(model_requests(server)[1], "function_call_output")
    assert [OUTSIDE in str(item["output"]) for item in outputs] == [True]
