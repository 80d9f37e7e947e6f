"""The web chat page of ``hive serve`` in a real headless browser: Playwright driving Debian's Chromium (nothing is
downloaded at run time) against a real ``hive serve`` on 127.0.0.1 and the scripted model server.

Every wait is on a condition of the page (Playwright's ``expect`` retries until it holds). Screenshots go to each
test's ``tmp_path`` (the path is printed); the rich chat's is also saved as the README's picture.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pytest
from agent_cli_harness import ASK_TRANSCRIPT
from agent_cli_harness import FakeCli
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import text
from playwright.sync_api import BrowserContext
from playwright.sync_api import Page
from playwright.sync_api import expect
from playwright.sync_api import sync_playwright
from serve_harness import TOKEN
from serve_harness import Served
from serve_harness import serving

from hive_conformance.model_server import ScriptedModelServer

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 30_000
PICTURE = Path(__file__).parents[3] / "docs" / "images" / "hive-serve-page.png"
CONFIG = '{\n  "name": "demo",\n  "debug": false,\n  "port": 8080\n}\n'
EDIT_CONFIG = (
    "e1",
    "edit_file",
    {
        "path": "config.json",
        "old_text": '  "debug": false,',
        "new_text": '  "debug": true,\n  "verbose": true,',
    },
)
WRITE_NOTES = ("w1", "write_file", {"path": "notes.md", "content": "# Notes\n"})

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"no Chromium at {CHROMIUM} (Debian's package `chromium`; .ci/run installs it)",
)


@contextmanager
def browser(tmp_path: Path, *, width: int = 1100, height: int = 800) -> Iterator[BrowserContext]:
    """Debian's Chromium, headless, with a fresh profile."""
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tmp_path / "chromium-profile",
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height},
        )
        try:
            yield context
        finally:
            context.close()


def opened(context: BrowserContext, served: Served, session: str | None = None) -> Page:
    """The page, opened from the URL ``hive serve`` printed (which sets the cookie), on ``session`` if given."""
    page = context.new_page()
    page.goto(f"{served.url}/?token={TOKEN}")
    if session is not None:
        page.locator(f'#sessions button[data-id="{session}"]').click()
        expect(page.locator("#session-info")).to_contain_text("hive")
    return page


def say(page: Page, message: str) -> None:
    page.locator("#composer textarea").fill(message)
    page.locator("#send").click()
    expect(page.locator(".user-message").last).to_have_text(message)


def screenshot(page: Page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")
    return path


def no_horizontal_scroll(page: Page) -> None:
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
        " document.querySelector('#log').scrollWidth, document.querySelector('#log').clientWidth]"
    )
    assert widths[0] <= widths[1], widths
    assert widths[2] <= widths[3], widths


def test_a_chat_streams_markdown_and_an_approved_edit_shows_its_diff(
    ws: Workspace, server: ScriptedModelServer, tmp_path: Path
) -> None:
    (ws.project / "config.json").write_text(CONFIG, encoding="utf-8")
    server.add(
        text(
            "## The config\n\nIt has **three** keys:\n\n",
            "| key | value |\n|---|---|\n| `port` | 8080 |\n",
            thinking=["Reading *the* config."],
        ),
        calls(EDIT_CONFIG, say="Turning on debug."),
        text("Done: `debug` is **on**."),
    )
    ws.use(server)
    with serving(ws) as served, browser(tmp_path) as context:
        session = served.open(session_id="page-1", model="scripted", working_directory=str(ws.project))
        page = opened(context, served, session)
        expect(page.locator("#session-info")).to_have_text("hive · scripted · idle")

        say(page, "what is in the config?")
        answer = page.locator(".reply").first
        expect(answer.locator("h2")).to_have_text("The config")
        expect(answer.locator("strong")).to_have_text("three")
        expect(answer.locator("td code")).to_have_text("port")
        expect(page.locator(".turn-end").first).to_contain_text("Done")
        expect(page.locator("#usage")).to_have_text("10 in / 2 out tokens")
        thinking = page.locator(".thinking")  # the reasoning, apart from the answer and folded
        expect(thinking.locator("summary")).to_have_text("Thinking")
        thinking.locator("summary").click()
        expect(thinking.locator("em")).to_have_text("the")
        expect(answer).not_to_contain_text("Reading")

        say(page, "turn on debug")
        tool = page.locator(".tool")
        card = tool.locator(".approval")  # asked inside the call's card, which shows the edit's diff
        expect(card).to_be_visible()
        expect(tool.locator(".diff .del")).to_have_text(['-  "debug": false,\n'])
        expect(tool.locator(".diff .add")).to_have_text(['+  "debug": true,\n', '+  "verbose": true,\n'])
        expect(tool.locator(".diff .head")).to_have_text(["--- a/config.json\n", "+++ b/config.json\n"])
        assert (ws.project / "config.json").read_text(encoding="utf-8") == CONFIG  # nothing ran yet
        card.get_by_role("button", name="Approve once").click()
        expect(card.locator(".outcome")).to_have_text("Approved")
        expect(tool).to_have_class("card tool succeeded")
        expect(tool.locator(".tool-name")).to_have_text("edit_file")
        expect(tool.locator(".output")).to_contain_text("Edited config.json")
        expect(tool.locator(".diff .add").first).to_be_visible()
        expect(page.locator(".reply").last).to_contain_text("Done: debug is on.")
        expect(page.locator(".turn-end")).to_have_count(2)
        expect(page.locator("#usage")).to_have_text("40 in / 9 out tokens")
        assert '"verbose": true' in (ws.project / "config.json").read_text(encoding="utf-8")
        page.locator(".turn-end").last.scroll_into_view_if_needed()
        screenshot(page, tmp_path, "chat")
        if os.environ.get("HIVE_UPDATE_README_PICTURE"):  # a test run leaves the repository as it was
            page.screenshot(path=str(PICTURE))
            print(f"screenshot for the README: {PICTURE}")

        # The same session on a phone's width, replayed from its stream: all of it, and no sideways scroll.
        phone = context.new_page()
        phone.set_viewport_size({"width": 375, "height": 740})
        phone.goto(f"{served.url}/#{session}")
        expect(phone.locator(".turn-end")).to_have_count(2)
        # The user's own messages come back too, each once and before its turn.
        asked = ["what is in the config?", "turn on debug"]
        expect(phone.locator(".user-message")).to_have_text(asked)
        order = phone.locator("#log > .user-message, #log > .turn").evaluate_all(
            "nodes => nodes.map(node => node.className)"
        )
        assert order == ["user-message", "turn", "user-message", "turn"], order
        expect(phone.locator(".approval .outcome")).to_have_text("Approved")
        expect(phone.locator(".approval button").first).to_be_disabled()
        no_horizontal_scroll(phone)
        screenshot(phone, tmp_path, "phone")
        phone.locator("#menu").click()  # the sessions list opens over the chat
        expect(phone.locator(f'#sessions button[data-id="{session}"]')).to_be_visible()
        no_horizontal_scroll(phone)


def test_a_new_session_from_the_page_answers_a_question_from_its_card(ws: Workspace, tmp_path: Path) -> None:
    cli = FakeCli.install(ws, "reasonix")
    ws.env.update(cli.env("cli-hello"))
    ws.env["HIVE_TEST_TRANSCRIPT"] = str(ASK_TRANSCRIPT)
    with serving(ws) as served, browser(tmp_path, width=375, height=740) as context:
        page = opened(context, served)
        page.locator("#new-session summary").click()
        page.get_by_label("Backend").fill("reasonix")
        page.get_by_label("Folder").fill(str(ws.project))
        page.get_by_role("button", name="Open").click()
        expect(page.locator("#session-info")).to_have_text("reasonix · default model · idle")

        say(page, "ASKME which database should I use?")
        card = page.locator(".questions")
        expect(card.locator("legend")).to_contain_text("Which database?")
        expect(card.locator(".option")).to_have_count(2)
        no_horizontal_scroll(page)
        screenshot(page, tmp_path, "question")
        card.get_by_label("SQLite").check()
        card.get_by_role("button", name="Answer").click()
        expect(card.locator(".outcome")).to_have_text("Answered")
        expect(page.locator(".reply")).to_have_text("MOCK_REPLY done")
        expect(page.locator(".turn-end")).to_contain_text("Done")
        [listed] = served.client.get("/api/sessions").json()["sessions"]
    assert (listed["backend"], listed["title"]) == ("reasonix", "ASKME which database should I use?")
    [chosen] = [m for m in cli.log() if "result" in m and "outcome" in m["result"]]
    assert chosen["result"]["outcome"] == {"outcome": "selected", "optionId": "q1:2"}  # SQLite


def test_cancel_stops_a_running_turn_and_the_page_says_so(
    ws: Workspace, server: ScriptedModelServer, tmp_path: Path
) -> None:
    server.add(
        msgspec.structs.replace(text("Starting **now**", "never sent"), stall_after_chunks=1), text("Back.")
    )
    ws.use(server)
    with serving(ws) as served, browser(tmp_path) as context:
        session = served.open(working_directory=str(ws.project))
        page = opened(context, served, session)
        say(page, "a long job")
        expect(page.locator(".reply strong")).to_have_text("now")  # rendered while the turn still streams
        expect(page.locator("#session-info")).to_contain_text("running")
        page.locator("#cancel").click()
        expect(page.locator(".turn-end")).to_have_text("Turn cancelled")
        expect(page.locator("#cancel")).to_be_disabled()
        expect(page.locator("#session-info")).to_contain_text("idle")
        screenshot(page, tmp_path, "cancelled")
        say(page, "still there?")  # the session goes on
        expect(page.locator(".reply").last).to_have_text("Back.")
        streams: list[str] = []
        page.on("request", lambda request: streams.append(request.url) if "/events" in request.url else None)
        # Once the session has ended the server ends its stream, and the page stops there (no reconnecting).
        assert served.client.post(f"/api/sessions/{session}/close").status_code == 204
        expect(page.locator(".note.ended")).to_have_text("The session has ended.")
        expect(page.locator("#composer")).to_be_hidden()
        expect(page.locator("#connection")).to_be_hidden()
        expect(page.locator("#session-info")).to_contain_text("ended")
    assert len(streams) <= 1, streams  # at most the browser's own retry, which found the end


def test_a_dropped_connection_gets_the_rest_of_the_turn_once(
    ws: Workspace, server: ScriptedModelServer, tmp_path: Path
) -> None:
    # The connection drops for real: the server is killed mid-turn (the turn waits for an approval) and started
    # again on the same port. (Playwright's offline mode leaves an open event stream alone, so it drops nothing.)
    server.add(calls(WRITE_NOTES, say="Writing notes."), text("Written ", "after ", "the drop."))
    ws.use(server)
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = str(probe.getsockname()[1])
    with browser(tmp_path) as context:
        with serving(ws, "--port", port) as served:  # leaving the block is kill -9
            session = served.open(session_id="drop-1", working_directory=str(ws.project))
            page = opened(context, served, session)
            say(page, "write notes")
            expect(page.locator(".approval")).to_be_visible()
            expect(page.locator(".reply")).to_have_text("Writing notes.")
        expect(page.locator("#connection")).to_contain_text("reconnecting")
        screenshot(page, tmp_path, "reconnecting")
        with serving(ws, "--port", port) as served:
            # The restarted server asks again; the page answers the new question, the old card is settled.
            expect(page.locator(".approval")).to_have_count(2)
            expect(page.locator(".approval:not(.answered)")).to_have_count(1)
            expect(page.locator("#connection")).to_be_hidden()
            page.locator(".approval").last.get_by_role("button", name="Approve once").click()
            expect(page.locator(".reply").last).to_have_text("Written after the drop.")
            expect(page.locator(".turn-end")).to_contain_text("Done")
            expect(page.locator(".approval .outcome")).to_have_text(["Asked again below", "Approved"])
            expect(page.locator(".tool")).to_have_count(1)
            expect(page.locator(".tool .output")).to_contain_text("notes.md")
            screenshot(page, tmp_path, "reconnected")
            shown = page.evaluate("() => document.querySelector('#log').innerText")
            events = [event for _, event in served.until(session, "turn_end")]
    assert (ws.project / "notes.md").read_text(encoding="utf-8") == "# Notes\n"
    # Every event shown once: the text before the drop, one tool card, the text after, one turn end.
    assert [event["type"] for event in events].count("hitl_request") == 2  # asked, and asked again
    assert shown.count("Writing notes.") == 1
    assert shown.count("Written after the drop.") == 1
    assert shown.count("Done ·") == 1


def test_model_output_cannot_run_script_in_the_page(
    ws: Workspace, server: ScriptedModelServer, tmp_path: Path
) -> None:
    server.add(
        text(
            'Look: <img src=x onerror="window.__pwned = 1"> and <script>window.__pwned = 2</script>',
            ' <svg><a href="javascript:window.__pwned = 3">svg</a></svg> <a href="javascript:window.__pwned=4">link</a>',
            '\n\n<iframe src="javascript:parent.__pwned = 5"></iframe>\n\n**still shown**',
        )
    )
    ws.use(server)
    with serving(ws) as served, browser(tmp_path) as context:
        session = served.open(working_directory=str(ws.project))
        page = opened(context, served, session)
        say(page, "show me something")
        answer = page.locator(".reply")
        expect(answer.locator("strong")).to_have_text("still shown")
        expect(page.locator(".turn-end")).to_contain_text("Done")
        answer.get_by_text("link").click()  # what was a javascript: link is inert
        assert page.evaluate("() => window.__pwned") is None
        assert answer.locator("script, img, iframe, [onerror]").count() == 0
        assert answer.locator("a[href^='javascript']").count() == 0
        screenshot(page, tmp_path, "sanitised")
        home = served.client.get("/")
        script = served.client.get("/page/app.js")
    policy = home.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "object-src 'none'" in policy
    assert "connect-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert home.headers["x-content-type-options"] == "nosniff"
    assert script.headers["x-content-type-options"] == "nosniff"
    assert script.headers["content-type"].startswith("text/javascript")


def test_the_page_and_its_files_need_the_token(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server)
    with serving(ws) as served, served.tokenless() as bare:
        for path in ("/", "/page/app.js", "/page/vendor/marked.esm.js", "/page/../app.py"):
            assert bare.get(path).status_code == 401, path
        assert served.client.get("/page/app.py").status_code == 404
        assert served.client.get("/page/vendor/LICENSE.marked").status_code == 200
        assert json.loads(served.client.get("/api/sessions").text) == {"sessions": []}
