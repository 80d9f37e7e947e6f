"""The names MCP tools are offered under: valid for model APIs, unique, and the same whatever the order."""

from __future__ import annotations

import hashlib
import random
import re

import pytest

import hive_core.mcp as mcp_plugins
from hive_core.mcp import MAX_TOOL_NAME_LENGTH
from hive_core.mcp import mcp_tool_names

_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_the_names_hosts_rely_on_are_public() -> None:
    assert {"McpPlugins", "McpTool", "PluginConfigError", "load_plugins_config"} <= set(mcp_plugins.__all__)


def test_a_plain_name_is_prefixed() -> None:
    assert mcp_tool_names([("notes", "read_note"), ("notes", "list-notes")]) == {
        ("notes", "read_note"): "mcp__notes__read_note",
        ("notes", "list-notes"): "mcp__notes__list-notes",
    }


@pytest.mark.parametrize(
    ("tool", "name"),
    [
        ("files.read", "mcp__p__files_read"),
        ("a b/c", "mcp__p__a_b_c"),
        ("résumé", "mcp__p__r_sum_"),
        ("", "mcp__p___"),
    ],
)
def test_characters_models_refuse_become_underscores(tool: str, name: str) -> None:
    assert mcp_tool_names([("p", tool)]) == {("p", tool): name}


def test_a_long_name_is_cut_and_keeps_a_hash_of_the_original() -> None:
    tool = "x" * 100
    name = mcp_tool_names([("plugin", tool)])["plugin", tool]
    digest = hashlib.sha256(f"plugin\0{tool}".encode()).hexdigest()[:8]
    assert len(name) == MAX_TOOL_NAME_LENGTH
    assert name == f"mcp__plugin__{'x' * 42}_{digest}"


def test_a_name_that_needed_no_change_keeps_it_on_a_collision() -> None:
    names = mcp_tool_names([("p", "a.b"), ("p", "a_b")])
    assert names["p", "a_b"] == "mcp__p__a_b"
    digest = hashlib.sha256(b"p\0a.b").hexdigest()[:8]
    assert names["p", "a.b"] == f"mcp__p__a_b_{digest}"


def test_collisions_across_plugins_go_by_plugin_name() -> None:
    # "a" + "__" + "_b" and "a_" + "__" + "b" spell the same name.
    names = mcp_tool_names([("a_", "b"), ("a", "_b")])
    assert names["a", "_b"] == "mcp__a___b"
    assert names["a_", "b"].startswith("mcp__a___b_")
    assert len(set(names.values())) == 2


def test_names_are_valid_unique_and_independent_of_order() -> None:
    generator = random.Random(7)
    alphabet = "ab._-/ é"
    tools = {
        (generator.choice(["p", "p_", "q"]), "".join(generator.choices(alphabet, k=generator.randint(0, 70))))
        for _ in range(300)
    }
    ordered = sorted(tools)
    names = mcp_tool_names(ordered)
    assert set(names) == tools
    assert len(set(names.values())) == len(tools)
    assert all(_VALID.fullmatch(name) and name.startswith("mcp__") for name in names.values())
    shuffled = list(ordered)
    generator.shuffle(shuffled)
    assert mcp_tool_names(shuffled) == names
