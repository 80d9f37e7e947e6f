"""Planning mode with the rules: decided once, at the approval gate, from the tools' own read-only marking and the
rules' ``read_only_tools``; a call planning mode lets through is then judged by the rules as usual."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from permissions_harness import Build

from hive_core.builtin_tools import BUILTIN_TOOLS
from hive_core.messages import ToolCallPart
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.pipeline import ApprovalGate
from hive_core.pipeline import Invocation
from hive_core.tools import Tool
from hive_core.tools import ToolContext
from hive_core.tools import ToolOutcome

BUILTIN = {each.name: each for each in BUILTIN_TOOLS}


def other_tool(name: str) -> Tool:
    """A tool that is not marked read-only."""

    def run() -> str:
        return "ran"

    return Tool(run, name=name, description="Does something.")


async def through_the_gate(policy: PermissionPolicy, tool: Tool, arguments: dict[str, Any]) -> ToolOutcome:
    """One call of ``tool`` in planning mode: the gate's outcome, ``ran`` when it let the call through."""
    call = ToolCallPart("c1", tool.name, "{}", arguments)
    invocation = Invocation(
        call, tool, arguments, ToolContext("c1", tool.name, Path(), lambda event: None), planning=True
    )

    async def ran(invocation: Invocation) -> ToolOutcome:
        return ToolOutcome(content="ran")

    with anyio.fail_after(10):
        return await ApprovalGate(policy, None)(invocation, ran)


def allow_everything(make_policy: Build) -> PermissionPolicy:
    return make_policy(
        default_action="allow",
        edit=(PermissionRule(pattern="**", action="allow"),),
        bash=(PermissionRule(pattern="*", action="allow"),),
        ask_before_delete=False,
    )


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (BUILTIN["write_file"], {"path": "src/a.py", "content": ""}),
        (BUILTIN["edit_file"], {"path": "src/a.py", "old_text": "a", "new_text": "b"}),
        (BUILTIN["delete_file"], {"path": "src/a.py"}),
        (BUILTIN["move_file"], {"source": "src/a.py", "destination": "src/b.py"}),
        (BUILTIN["execute_command"], {"command": "git status"}),
        (other_tool("mcp__github__issue_list"), {}),
    ],
)
@pytest.mark.anyio
async def test_planning_mode_refuses_tools_that_are_not_read_only(
    make_policy: Build, tool: Tool, arguments: dict[str, Any]
) -> None:
    policy = allow_everything(make_policy)
    assert policy.evaluate(tool.name, arguments).action == "allow"
    outcome = await through_the_gate(policy, tool, arguments)
    assert outcome.refusal == "denied"
    assert "planning mode runs only read-only tools" in outcome.content


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", {"path": "src/main.py"}),
        ("list_directory", {}),
        ("glob_files", {"pattern": "**/*.py"}),
        ("grep_files", {"pattern": "def", "file_pattern": "*.py"}),
        ("manage_todo", {"action": "add", "task": "x"}),
    ],
)
@pytest.mark.anyio
async def test_planning_mode_lets_read_only_tools_run(
    make_policy: Build, name: str, arguments: dict[str, Any]
) -> None:
    assert (await through_the_gate(make_policy(), BUILTIN[name], arguments)).content == "ran"


@pytest.mark.anyio
async def test_planning_mode_still_applies_the_rules_to_read_only_tools(make_policy: Build) -> None:
    outcome = await through_the_gate(make_policy(), BUILTIN["read_file"], {"path": "secrets/k"})
    assert outcome.refusal == "denied"
    assert "Secrets directory" in outcome.content


@pytest.mark.anyio
async def test_read_only_tools_patterns_let_unmarked_tools_run(make_policy: Build) -> None:
    policy = make_policy(
        PermissionRules(read_only_tools=("mcp__*__*_list", "web_search"), default_action="allow")
    )
    assert (await through_the_gate(policy, other_tool("web_search"), {"query": "x"})).content == "ran"
    assert (await through_the_gate(policy, other_tool("mcp__github__issue_list"), {})).content == "ran"
    refused = await through_the_gate(policy, other_tool("mcp__github__issue_create"), {})
    assert refused.refusal == "denied"
