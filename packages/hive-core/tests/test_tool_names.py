"""The built-in tools are named by hive_core.tool_names, the one place every judge and mapping reads them from."""

from __future__ import annotations

from hive_core.builtin_tools import BUILTIN_TOOLS
from hive_core.tool_names import BUILTIN_TOOL_NAMES
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import READ_FILE


def test_every_built_in_tool_is_named_by_the_constants_in_offer_order() -> None:
    assert tuple(tool.name for tool in BUILTIN_TOOLS) == BUILTIN_TOOL_NAMES


def test_the_names_on_the_wire_stay_what_clients_and_rules_files_know() -> None:
    assert (READ_FILE, EXECUTE_COMMAND) == ("read_file", "execute_command")
    assert len(set(BUILTIN_TOOL_NAMES)) == len(BUILTIN_TOOL_NAMES) == 10
