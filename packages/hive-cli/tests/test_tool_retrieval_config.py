"""The ``toolRetrieval`` section end to end through ``hive run --server``: with it enabled, a hosted model is
offered per turn only the tools the request points at (built-in and MCP alike), the ``alwaysInclude`` ones every
turn, at most ``maxTools``, and the tools the conversation called stay offered up to ``stickyToolLimit``."""

from __future__ import annotations

import json
import sys
import textwrap
from typing import Any
from typing import Final

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer

MCP_SERVER: Final = textwrap.dedent(
    '''
    """An MCP server with a weather tool and a stock price tool."""

    import sys

    from mcp.server.mcpserver import MCPServer

    server = MCPServer("desk", log_level="WARNING")


    @server.tool()
    def forecast(city: str) -> str:
        """Tell the weather forecast of a city."""
        return f"sunny in {city}"


    @server.tool()
    def quote(symbol: str) -> str:
        """Tell the latest stock price of a ticker symbol."""
        return f"{symbol}: 42"


    server.run(sys.argv[1])
    '''
)

FORECAST: Final = "mcp__desk__forecast"
QUOTE: Final = "mcp__desk__quote"


def _configure(ws: Workspace, server: ScriptedModelServer, retrieval: str) -> Workspace:
    script = ws.root / "desk_server.py"
    script.write_text(MCP_SERVER, encoding="utf-8")
    plugins = {"plugins": [{"name": "desk", "command": sys.executable, "arguments": [str(script), "stdio"]}]}
    (ws.project / ".hive" / "plugins.yaml").write_text(json.dumps(plugins), encoding="utf-8")
    (ws.project / ".hive" / "config.yaml").write_text(
        'sandbox:\n  mode: "off"\ntoolRetrieval:\n  enabled: true\n' + retrieval, encoding="utf-8"
    )
    return ws.use(server).allow_all()


def _offered(body: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in body.get("tools", [])]


def test_each_turn_is_offered_the_relevant_always_and_sticky_tools(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        calls(("c1", FORECAST, {"city": "Oslo"})),
        text("Sunny in Oslo."),
        text("Nothing to do."),
        text("Found it."),
    )
    retrieval = "  maxTools: 3\n  alwaysInclude: [manage_todo]\n  stickyToolLimit: 1\n"
    with _configure(ws, server, retrieval).serve() as proc:
        first = proc.turn("What is the weather forecast in Oslo?")
        proc.turn("Thanks, that was great!")
        proc.turn("Search where parse_config is defined")
    assert [e["tool"] for e in first if e["type"] == "tool_end" and e["success"]] == [FORECAST]
    weather, answered, thanks, search = model_requests(server)
    # The MCP tool its words point at, and the one always included; not the stock tool nor the file tools.
    assert _offered(weather.body) == ["manage_todo", FORECAST]
    assert _offered(answered.body) == ["manage_todo", FORECAST]
    # A plain remark: the always-included tool and the one the conversation called (sticky), nothing else.
    assert _offered(thanks.body) == ["manage_todo", FORECAST]
    # A search: the sticky tool keeps its slot, the search tool takes the last one; three at most.
    assert _offered(search.body) == ["manage_todo", FORECAST, "grep_files"]


def test_a_strong_match_takes_a_sticky_slot_and_without_retrieval_every_tool_is_offered(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(calls(("c1", FORECAST, {"city": "Oslo"})), text("Sunny."), text("42."))
    retrieval = "  maxTools: 1\n  stickyToolLimit: 1\n  stickyChangeScore: 0.9\n"
    with _configure(ws, server, retrieval).serve() as proc:
        proc.turn("What is the weather forecast in Oslo?")
        proc.turn("What is the latest stock price of ACME?")
    weather, _, stock = model_requests(server)
    assert _offered(weather.body) == [FORECAST]
    assert _offered(stock.body) == [QUOTE]

    (ws.project / ".hive" / "config.yaml").write_text('sandbox:\n  mode: "off"\n', encoding="utf-8")
    server.add(text("Hello."))
    with ws.serve() as proc:
        proc.turn("Thanks, that was great!")
    offered = _offered(model_requests(server)[-1].body)
    assert {"read_file", "execute_command", "manage_todo", FORECAST, QUOTE} <= set(offered)
