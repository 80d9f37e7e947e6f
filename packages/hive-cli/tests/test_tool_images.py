"""An MCP tool's image reaches the model as an image, through ``hive run --server``: on Chat Completions a user
message of ``image_url`` parts after the tool results (LM Studio with ``carryToolImages``), on the Responses API
``input_image`` items, on Anthropic an image block in the tool result, on Gemini an ``inlineData`` part. Without
the key a local server's model reads only the line naming the image."""

from __future__ import annotations

import base64
import json
import sys
import textwrap
from typing import Any
from typing import Final

import pytest
from cli_harness import MODEL
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import text

from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer

# The smallest PNG there is: one transparent pixel.
PIXEL: Final = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
        "0000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )
).decode()

MCP_SERVER: Final = textwrap.dedent(
    f'''
    """An MCP server whose one tool returns a caption and a picture (and one picture that is not base64)."""

    import sys

    from mcp.server.mcpserver import MCPServer
    from mcp.types import ImageContent
    from mcp.types import TextContent

    server = MCPServer("shots", log_level="WARNING")


    @server.tool()
    def screenshot_get() -> list[TextContent | ImageContent]:
        """Take a screenshot."""
        return [
            TextContent(type="text", text="The login page."),
            ImageContent(type="image", data="{PIXEL}", mime_type="image/png"),
            ImageContent(type="image", data="not base64!", mime_type="image/png"),
        ]


    server.run(sys.argv[1])
    '''
)

CALL: Final = "mcp__shots__screenshot_get"


def _with_plugin(ws: Workspace) -> Workspace:
    script = ws.root / "shots_server.py"
    script.write_text(MCP_SERVER, encoding="utf-8")
    plugins = {"plugins": [{"name": "shots", "command": sys.executable, "arguments": [str(script), "stdio"]}]}
    (ws.project / ".hive" / "plugins.yaml").write_text(json.dumps(plugins), encoding="utf-8")
    return ws


def _run(ws: Workspace, server: ScriptedModelServer) -> RecordedRequest:
    """One turn that calls the screenshot tool; the request that followed the call."""
    server.add(calls(("c1", CALL, {})), text("I see it."))
    with _with_plugin(ws).serve() as proc:
        events = proc.turn("look at the page")
    [ended] = [event for event in events if event["type"] == "tool_end"]
    assert ended["success"] is True, ended
    assert "The login page." in ended["output"]
    # Requests to a model API (not a probe of the server's window or models).
    requests = [
        r
        for r in server.requests
        if r.endpoint in ("openai_chat", "openai_responses", "anthropic_messages", "gemini")
    ]
    assert len(requests) == 2, [r.endpoint for r in requests]
    return requests[1]


def _lmstudio(ws: Workspace, server: ScriptedModelServer, carry: bool | None) -> None:
    ws.env.update(LMSTUDIO_ENABLED="true", LMSTUDIO_ENDPOINT=f"{server.url}/v1", LMSTUDIO_MODEL=MODEL)
    if carry is not None:
        key = "true" if carry else "false"
        (ws.project / ".hive" / "config.yaml").write_text(
            f"lmstudio:\n  carryToolImages: {key}\n", encoding="utf-8"
        )


def _hosted(ws: Workspace, section: str, endpoint: str, prefix: str) -> Workspace:
    """The hosted provider of ``section`` at the scripted server (it has no carryToolImages key: it carries)."""
    (ws.project / ".hive" / "config.yaml").write_text(
        f"{section}:\n  endpoint: {endpoint}\n", encoding="utf-8"
    )
    ws.env.update({f"{prefix}_API_KEY": "test", f"{prefix}_MODEL": MODEL})
    return ws


def test_chat_completions_carries_the_image_after_the_results(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _lmstudio(ws, server, carry=True)
    request = _run(ws, server)
    assert request.endpoint == "openai_chat"
    messages: list[dict[str, Any]] = request.body["messages"]
    roles = [message["role"] for message in messages]
    assert roles[-2:] == ["tool", "user"]
    assert "[image image/png" in messages[-2]["content"]
    assert messages[-1]["content"] == [
        {"type": "text", "text": f"The image returned by {CALL} (call c1):"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
    ]


@pytest.mark.parametrize("carry", [None, False])
def test_a_local_server_without_the_key_reads_only_the_line(
    ws: Workspace, server: ScriptedModelServer, carry: bool | None
) -> None:
    _lmstudio(ws, server, carry=carry)
    request = _run(ws, server)
    messages: list[dict[str, Any]] = request.body["messages"]
    assert messages[-1]["role"] == "tool"
    assert "[image image/png" in messages[-1]["content"]
    assert "image_url" not in json.dumps(request.body)


def test_the_responses_api_carries_an_input_image(ws: Workspace, server: ScriptedModelServer) -> None:
    request = _run(ws.use(server), server)
    assert request.endpoint == "openai_responses"
    items: list[dict[str, Any]] = request.body["input"]
    assert items[-2]["type"] == "function_call_output"
    assert items[-1] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": f"The image returned by {CALL} (call c1):"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PIXEL}"},
        ],
    }


def test_anthropic_carries_an_image_block_in_the_result(ws: Workspace, server: ScriptedModelServer) -> None:
    request = _run(_hosted(ws, "anthropic", server.url, "ANTHROPIC"), server)
    assert request.endpoint == "anthropic_messages"
    results = [
        block
        for message in request.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    [result] = results
    text_block, image_block = result["content"]
    assert text_block["type"] == "text"
    assert text_block["text"].startswith("The login page.")
    assert {key: image_block[key] for key in ("type", "source")} == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PIXEL},
    }


def test_gemini_carries_inline_data_after_the_response(ws: Workspace, server: ScriptedModelServer) -> None:
    request = _run(_hosted(ws, "googleai", f"{server.url}/v1beta/", "GOOGLEAI"), server)
    assert request.endpoint == "gemini"
    parts: list[dict[str, Any]] = request.body["contents"][-1]["parts"]
    assert "functionResponse" in parts[0]
    assert parts[1:] == [{"inlineData": {"mimeType": "image/png", "data": PIXEL}}]
