"""``hive -p`` under attack through its search tools: the model tries every spelling that once reached a secret.

The project holds ``.env`` (the default rules ask before reading it), ``secrets/key.txt`` (denied), a link
``link -> ../outside`` and a linked file ``leak.txt -> ../outside/secret.txt``; ``outside/secret.txt`` lies next to
it. The scripted model calls grep_files, glob_files and list_directory with each escape spelling; no secret may
reach the output, the model's next request or the session store, while the one public file is found.
"""

from __future__ import annotations

from typing import Any

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text

from hive_cli.session_store import session_store_path
from hive_conformance.model_server import ScriptedModelServer

PUBLIC = "PUBLIC-NEEDLE-0c4e"
SECRETS = {
    ".env": "ENV-NEEDLE-5b1d",
    "secrets/key.txt": "KEY-NEEDLE-77ce",
    "../outside/secret.txt": "OUTSIDE-NEEDLE-a93f",
}
NEEDLE = "NEEDLE"

CORPUS: list[tuple[str, dict[str, Any]]] = [
    ("grep_files", {"pattern": NEEDLE}),
    ("grep_files", {"pattern": NEEDLE, "file_pattern": "**/{.env,*.txt}"}),
    ("grep_files", {"pattern": NEEDLE, "file_pattern": "**/.env*"}),
    ("grep_files", {"pattern": NEEDLE, "file_pattern": "{..,x}/outside/*"}),
    ("grep_files", {"pattern": NEEDLE, "file_pattern": "../outside/*"}),
    ("grep_files", {"pattern": NEEDLE, "file_pattern": "link/**/*"}),
    ("grep_files", {"pattern": NEEDLE, "file_pattern": "*/../../outside/*"}),
    ("grep_files", {"pattern": NEEDLE, "file_pattern": "{src,secrets}/*"}),
    ("grep_files", {"pattern": NEEDLE, "path": "../outside"}),
    ("grep_files", {"pattern": NEEDLE, "path": "leak.txt"}),
    ("grep_files", {"pattern": NEEDLE, "path": "link"}),
    ("grep_files", {"pattern": NEEDLE, "path": ".env"}),
    ("glob_files", {"pattern": "**/*"}),
    ("glob_files", {"pattern": "{..,x}/outside/*"}),
    ("glob_files", {"pattern": "/*"}),
    ("glob_files", {"pattern": "secrets/*"}),
    ("list_directory", {"recursive": True}),
    ("list_directory", {"path": "secrets"}),
    ("list_directory", {"path": "link"}),
]
"""Each escape spelling of the issue and its variants, as (tool, arguments)."""


def plant(ws: Workspace) -> None:
    outside = ws.root / "outside"
    (ws.project / "secrets").mkdir()
    (ws.project / "src").mkdir()
    outside.mkdir()
    (ws.project / "src" / "notes.txt").write_text(f"{PUBLIC}\n", encoding="utf-8")
    for name, marker in SECRETS.items():
        (ws.project / name).write_text(f"{marker}\n", encoding="utf-8")
    (ws.project / "link").symlink_to("../outside", target_is_directory=True)
    (ws.project / "leak.txt").symlink_to("../outside/secret.txt")


def test_no_search_spelling_reads_a_secret(ws: Workspace, server: ScriptedModelServer) -> None:
    plant(ws)
    print(f"\nsearch attack corpus: {len(CORPUS)} calls")
    server.add(
        calls(*((f"call_{n}", tool, arguments) for n, (tool, arguments) in enumerate(CORPUS))),
        text("Searched."),
    )
    result = ws.use(server).run("-p", "find every needle", "-o", "json")
    assert result.code == 0, result
    doc = result.line_document()
    outputs = input_items(model_requests(server)[1], "function_call_output")
    assert len(outputs) == len(CORPUS)
    seen = {str(item["call_id"]): str(item["output"]) for item in outputs}
    # The search ran: the public file was found, and the first grep says what it held back.
    assert PUBLIC in seen["call_0"]
    assert "symbolic links leading outside the project" in seen["call_0"]
    assert "(.env)" in seen["call_1"]
    # Not one secret anywhere: the -o json document, what the model was sent, the session store.
    store = session_store_path(ws.env)
    stored = b"".join(path.read_bytes() for path in store.parent.glob(store.name + "*") if path.is_file())
    assert stored, "the session store holds nothing"
    for marker in SECRETS.values():
        assert marker not in result.stdout
        leaked = [call for call, output in seen.items() if marker in output]
        assert leaked == [], f"{marker} reached the model through {leaked}"
        assert marker.encode() not in stored
    assert [call["tool"] for call in doc["calls"]] == [tool for tool, _ in CORPUS]
    # Nothing the model named outside or denied was listed either.
    for call, output in seen.items():
        assert "key.txt" not in output, call
        assert "secret.txt" not in output.split("\n", 1)[-1] or "not searched" in output, call


APPROVED: list[tuple[str, dict[str, Any]]] = [
    ("grep_files", {"pattern": NEEDLE, "file_pattern": "{..,x}/outside/*"}),
    ("grep_files", {"pattern": NEEDLE, "path": "link"}),
    ("grep_files", {"pattern": NEEDLE, "path": "leak.txt"}),
    ("grep_files", {"pattern": NEEDLE, "path": ".env"}),
]
"""Calls the default rules ask about: approved by the operator, they still never read a file the rules ask about."""


def test_an_approved_search_still_reads_no_file_the_rules_ask_about(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    plant(ws)
    print(f"\nsearch attack corpus, approved over the wire: {len(APPROVED)} calls")
    server.add(
        *(calls((f"call_{n}", tool, arguments)) for n, (tool, arguments) in enumerate(APPROVED)),
        text("Searched."),
    )
    with ws.use(server).start("run", "--server", "--session-id", "attack-1") as proc:
        assert proc.next_event()["type"] == "session_started"
        proc.send({"type": "user_message", "content": "find every needle"})
        ends: list[dict[str, Any]] = []
        for _ in APPROVED:
            asked = proc.events_until("hitl_request")[-1]
            proc.send({"type": "hitl_response", "id": asked["id"], "approved": True})
            ends += [event for event in proc.events_until("tool_end") if event["type"] == "tool_end"]
        proc.events_until("turn_end")
        proc.close_stdin()
        assert proc.wait() == 0, proc.stderr
        wire = proc.stdout
    assert [(end["call_id"], end["success"]) for end in ends] == [
        (f"call_{n}", True) for n in range(len(APPROVED))
    ]
    assert "(../outside/secret.txt)" in ends[0]["output"]  # named for read_file to ask about, never read
    for end in ends:
        assert "0 files searched" in end["output"]
        assert "the permission rules ask about before reading" in end["output"]
    for marker in SECRETS.values():
        assert marker not in wire
        assert all(marker not in str(request.body) for request in model_requests(server))
