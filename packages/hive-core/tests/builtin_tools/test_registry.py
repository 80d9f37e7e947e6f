from __future__ import annotations

import re
from pathlib import Path

import anyio

import hive_core.builtin_tools as builtin_tools
from hive_core.approvals import ALLOW_ALL
from hive_core.builtin_tools import BUILTIN_TOOLS


def test_the_ten_tools_in_order() -> None:
    assert [each.name for each in BUILTIN_TOOLS] == [
        "read_file",
        "write_file",
        "edit_file",
        "delete_file",
        "move_file",
        "list_directory",
        "glob_files",
        "grep_files",
        "execute_command",
        "manage_todo",
    ]


def test_read_only_tools_are_the_readers_and_the_plan() -> None:
    read_only = {each.name for each in BUILTIN_TOOLS if each.read_only}
    assert read_only == {"read_file", "list_directory", "glob_files", "grep_files", "manage_todo"}


def test_parameters_are_snake_case_and_described() -> None:
    for each in BUILTIN_TOOLS:
        assert each.description
        properties = each.parameters["properties"]
        for name, schema in properties.items():
            assert re.fullmatch(r"[a-z]+(_[a-z]+)*", name), (each.name, name)
            assert schema.get("description"), (each.name, name)


def test_signatures() -> None:
    shapes = {
        each.name: (list(each.parameters["properties"]), each.parameters["required"])
        for each in BUILTIN_TOOLS
    }
    assert shapes == {
        "read_file": (["path", "start_line", "line_count"], ["path"]),
        "write_file": (["path", "content", "append"], ["path", "content"]),
        "edit_file": (["path", "old_text", "new_text", "replace_all"], ["path", "old_text", "new_text"]),
        "delete_file": (["path"], ["path"]),
        "move_file": (["source", "destination", "overwrite"], ["source", "destination"]),
        "list_directory": (["path", "recursive", "include_ignored"], []),
        "glob_files": (["pattern", "path", "include_ignored"], ["pattern"]),
        "grep_files": (["pattern", "file_pattern", "path", "literal", "include_ignored"], ["pattern"]),
        "execute_command": (["command", "timeout_ms"], ["command"]),
        "manage_todo": (["action", "task", "id", "status", "priority", "dependencies"], ["action"]),
    }


def test_public_names_are_sorted_and_exported() -> None:
    assert builtin_tools.__all__ == sorted(builtin_tools.__all__)
    for name in builtin_tools.__all__:
        assert hasattr(builtin_tools, name)
    assert {each.name for each in BUILTIN_TOOLS} <= set(builtin_tools.__all__)


def test_execute_command_is_not_cut_short_by_the_agent_wide_timeout(tmp_path: Path) -> None:
    from hive_core import Agent
    from hive_core import collect_turn
    from hive_core.builtin_tools import execute_command
    from hive_core.testing import ScriptedChatClient
    from hive_core.testing import call
    from hive_core.testing import reply
    from hive_protocol import ToolEndEvent

    client = ScriptedChatClient(
        [call(("execute_command", {"command": "sleep 0.3; echo finished"})), reply("ok")]
    )
    agent = Agent(client, tools=[execute_command], tool_timeout=0.05, working_dir=tmp_path, policy=ALLOW_ALL)
    events = anyio.run(collect_turn, agent.session(), "run it")
    (end,) = [e for e in events if isinstance(e, ToolEndEvent)]
    assert end.success, end.output
    assert "finished" in (end.output or "")
