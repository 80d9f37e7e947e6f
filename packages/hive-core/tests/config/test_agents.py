"""Agent definitions for delegation: ``.hive/agents/<name>/agent.yaml`` and ``delegation.agents``, read only when
delegation is enabled, and every definition that cannot be used refused with its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import load_config
from hive_core.config.agents import AgentDefinitionError
from hive_core.config.agents import agent_definitions


def _project_config(project: Path, text: str) -> Path:
    path = project / ".hive" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _agent(project: Path, name: str, text: str, folder: str = "agents") -> Path:
    path = project / ".hive" / folder / name / "agent.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_nothing_is_read_until_delegation_is_enabled(project: Path, env: dict[str, str]) -> None:
    _agent(project, "critic", "bogus: 1\n")
    _project_config(project, "delegation:\n  maxDepth: 1\n")
    assert agent_definitions(load_config(project, env)) == ()


def test_directory_agents_then_inline_ones(project: Path, env: dict[str, str]) -> None:
    path = _agent(
        project, "critic", "description: Critiques.\nmodel: m1\ntools: [read_file, delegate]\n", "crew"
    )
    (path.parent / "system-prompt.md").write_text("You critique.\n", encoding="utf-8")
    _project_config(
        project,
        "delegation:\n  enabled: true\n  agentsDirectory: crew\n  agents:\n"
        "    - name: coder\n      backend: codex\n      instructions: Be careful.\n",
    )
    critic, coder = agent_definitions(load_config(project, env))
    assert (critic.name, critic.description, critic.model, critic.tools) == (
        "critic",
        "Critiques.",
        "m1",
        ("read_file", "delegate"),
    )
    assert critic.instructions == "You critique."
    assert critic.source == str(path)
    assert (coder.name, coder.backend, coder.instructions, coder.provider) == (
        "coder",
        "codex",
        "Be careful.",
        None,
    )


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("description: x\nmodle: m\n", 2, "unknown key 'modle'"),
        ("description: x\nprovider: openai\nbackend: codex\n", 3, "not both"),
        ("model: m\nendpoint: http://127.0.0.1:1/v1\n", 2, "set 'backend'"),
        ("backend: pi\nendpoint: ftp://nowhere\n", 2, "http(s) URL"),
        ("description: x\ntools: read_file\n", 2, "list of tool names"),
        ("description: [a, b]\n", 1, "'description' must be text"),
        ("- just a list\n", 1, "must be a mapping"),
        ("description: x\nname: other\n", 2, "directory names the agent 'critic'"),
    ],
)
def test_a_bad_definition_names_its_file_and_line(
    project: Path, env: dict[str, str], text: str, line: int, words: str
) -> None:
    path = _agent(project, "critic", text)
    _project_config(project, "delegation:\n  enabled: true\n")
    with pytest.raises(AgentDefinitionError) as raised:
        agent_definitions(load_config(project, env))
    assert str(raised.value).startswith(f"{path}:{line}:"), str(raised.value)
    assert words in str(raised.value)


def test_an_inline_agent_needs_a_name_and_a_name_is_defined_once(project: Path, env: dict[str, str]) -> None:
    config = _project_config(project, "delegation:\n  enabled: true\n  agents:\n    - model: m\n")
    with pytest.raises(AgentDefinitionError, match="needs a 'name'") as raised:
        agent_definitions(load_config(project, env))
    assert str(raised.value).startswith(f"{config}:3:")
    _agent(project, "twin", "model: m\n")
    _project_config(project, "delegation:\n  enabled: true\n  agents:\n    - name: twin\n      model: m\n")
    with pytest.raises(AgentDefinitionError, match="defined twice"):
        agent_definitions(load_config(project, env))


def test_an_agents_rules_are_rule_lists_that_ask_or_deny(project: Path, env: dict[str, str]) -> None:
    path = _agent(
        project, "critic", "model: m1\nrules:\n  edit:\n    - pattern: '**/*'\n      action: deny\n"
    )
    config = _project_config(
        project,
        "delegation:\n  enabled: true\n  agents:\n    - name: coder\n      model: m2\n"
        "      rules:\n        mcpTools:\n          - pattern: 'mcp__*'\n",
    )
    critic, coder = agent_definitions(load_config(project, env))
    assert critic.rules is not None
    assert [(r.pattern, r.action) for r in critic.rules.edit] == [("**/*", "deny")]
    # Inline agents are spelled as config.yaml's permissions section; a rule's action defaults to ask.
    assert coder.rules is not None
    assert [(r.pattern, r.action) for r in coder.rules.mcp_tools] == [("mcp__*", "ask")]
    path.write_text("model: m1\nrules:\n  default_action: deny\n", encoding="utf-8")
    config.write_text("delegation:\n  enabled: true\n", encoding="utf-8")
    with pytest.raises(AgentDefinitionError) as caught:
        agent_definitions(load_config(project, env))
    assert (caught.value.source, caught.value.line) == (str(path), 3)
    assert "only rule lists" in str(caught.value)


@pytest.mark.parametrize("directory", ["..", "crew/nested", "/etc", "."])
def test_the_agents_directory_is_one_folder_inside_hive(
    project: Path, env: dict[str, str], directory: str
) -> None:
    # Definitions elsewhere would lie outside what the project's trust hash covers (.hive/*/*/agent.yaml).
    config = _project_config(project, f"delegation:\n  enabled: true\n  agentsDirectory: '{directory}'\n")
    with pytest.raises(AgentDefinitionError, match=r"one folder inside \.hive/") as raised:
        agent_definitions(load_config(project, env))
    assert str(raised.value).startswith(f"{config}:3:"), str(raised.value)
