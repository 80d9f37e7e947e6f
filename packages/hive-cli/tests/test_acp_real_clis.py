"""``hive acp --agent NAME`` in front of real coding-agent CLIs (from ``.ci/agent-clis``), offline against the
scripted model: the CLI's shell tool call is judged by hive's rules, asked through the ACP client's
``session/request_permission``, and refused or run as answered. One ACP CLI (OpenCode) and one on its own stream
(Pi). A multi-select question of OpenCode's reaches the client as one form and the answer reaches the model."""

from __future__ import annotations

import pytest
from acp.schema import ElicitationFormSessionMode
from acp.schema import ElicitationStringPropertySchema
from acp.schema import TextContentBlock
from acp_client_harness import RecordingClient
from acp_client_harness import hive_acp
from agent_cli_harness import real_cli
from cli_harness import Workspace

from hive_cli.acp_agent.agent import PromptBlock
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import ANSWERED_REPLY
from hive_conformance.model_server.agent_cli import ASKME_MARKER
from hive_conformance.model_server.agent_cli import QUESTION_OPTIONS
from hive_conformance.model_server.agent_cli import QUESTION_TEXT
from hive_conformance.model_server.agent_cli import RUNTOOL_MARKER
from hive_conformance.model_server.agent_cli import agent_cli_responder

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

RAN = "hive_tool_ran.txt"
"""The file the scripted model's shell call creates (``touch hive_tool_ran.txt``)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def say(words: str) -> list[PromptBlock]:
    return [TextContentBlock(type="text", text=words)]


@pytest.mark.parametrize("answer", ["reject_once", "allow_once"])
@pytest.mark.parametrize(("agent", "program"), [("opencode-acp", "opencode"), ("pi", "pi")])
async def test_the_clis_tool_call_is_asked_through_the_client_and_runs_as_answered(
    ws: Workspace, agent: str, program: str, answer: str
) -> None:
    real_cli(ws, program)
    with ScriptedModelServer(model="local-model", responder=agent_cli_responder()) as model:
        flags = ("--agent", agent, "--model-endpoint", f"{model.url}/v1", "-m", "local-model")
        async with hive_acp(ws, *flags, client=RecordingClient(answers=[answer])) as (conn, client):
            session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
            assert session.modes is not None
            assert [mode.id for mode in session.modes.available_modes] == ["default", "accept_edits"]
            done = await conn.prompt(session_id=session.session_id, prompt=say(f"{RUNTOOL_MARKER} now"))
    assert done.stop_reason == "end_turn"
    [asked] = client.asked
    assert asked.tool_call.kind == "execute"
    assert "touch" in str(asked.tool_call.raw_input)
    if answer == "allow_once":
        assert (ws.project / RAN).exists()
        assert client.text()  # the CLI's reply to the result streamed as message chunks
    else:
        assert not (ws.project / RAN).exists()


async def test_a_multi_select_question_of_a_real_cli_is_one_form_and_the_answer_reaches_the_model(
    ws: Workspace,
) -> None:
    """OpenCode's question tool asking a multi-select question, offline against the scripted model: the client
    gets one form with one field; OpenCode lets an answer be typed, so the field takes text and names the choices;
    the picks typed there go back, and the model is given them."""
    real_cli(ws, "opencode")
    picked = ", ".join(reversed(QUESTION_OPTIONS))
    client = RecordingClient(forms=[{"q0": picked}])
    with ScriptedModelServer(model="local-model", responder=agent_cli_responder(multi_select=True)) as model:
        flags = ("--agent", "opencode", "--model-endpoint", f"{model.url}/v1", "-m", "local-model")
        async with hive_acp(ws, *flags, client=client, forms=True) as (conn, _):
            session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=say(f"{ASKME_MARKER} now"))
    assert done.stop_reason == "end_turn"
    assert client.asked == []  # a form, not a permission-shaped choice
    [(message, mode)] = client.elicited
    assert QUESTION_TEXT in message
    assert isinstance(mode, ElicitationFormSessionMode)
    [field] = (mode.requested_schema.properties or {}).values()
    assert isinstance(field, ElicitationStringPropertySchema)
    assert all(label in (field.description or "") for label in QUESTION_OPTIONS)
    reply = client.text()
    assert ANSWERED_REPLY in reply, reply
    assert picked in reply.split(ANSWERED_REPLY, 1)[1], reply
