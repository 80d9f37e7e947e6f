from __future__ import annotations

import pytest

from hive_protocol import InvalidTurnOptions
from hive_protocol import TurnOptions
from hive_protocol import validate_tool_mode
from hive_protocol import validate_turn_options

TOOLS = ["write_file", "read_file", "grep_files"]


def test_valid_options_pass_unchanged() -> None:
    options = TurnOptions(
        tool_names=["read_file"], tool_mode="require:read_file", reasoning_effort="extra_high"
    )
    assert validate_turn_options(options, TOOLS) is options


def test_duplicates_collapse_and_blank_instructions_unset() -> None:
    options = TurnOptions(tool_names=["read_file", "grep_files", "read_file"], instructions="  \n")
    assert validate_turn_options(options, TOOLS) == TurnOptions(tool_names=["read_file", "grep_files"])


def test_empty_tool_list_means_no_tools_and_is_valid() -> None:
    assert validate_turn_options(TurnOptions(tool_names=[]), TOOLS).tool_names == []


def test_unknown_tool_names_are_named_with_the_registered_ones() -> None:
    with pytest.raises(InvalidTurnOptions) as info:
        validate_turn_options(TurnOptions(tool_names=["read_file", "Nope", "zap", "Nope"]), TOOLS)
    assert str(info.value) == (
        "Turn options name tool(s) that are not registered on this agent: Nope, zap. "
        "Registered tools: grep_files, read_file, write_file."
    )


@pytest.mark.parametrize("mode", ["auto", "none", "require_any", "require:write_file"])
def test_tool_modes(mode: str) -> None:
    validate_tool_mode(mode, TOOLS)


def test_require_of_an_unregistered_tool() -> None:
    with pytest.raises(InvalidTurnOptions, match="require tool 'shell', which is not registered"):
        validate_turn_options(TurnOptions(tool_mode="require:shell"), TOOLS)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        *(
            (
                TurnOptions(tool_mode=mode),
                f"Unknown tool mode '{mode}'. Expected auto, none, require_any or require:<tool name>.",
            )
            for mode in ["Auto", "required", "", "require", "any"]
        ),
        *(
            (
                TurnOptions(reasoning_effort=effort),
                f"Unknown reasoning effort '{effort}'. Expected none, low, medium, high or extra_high.",
            )
            for effort in ["max", "HIGH", "minimal", ""]
        ),
    ],
)
def test_an_unknown_tool_mode_or_reasoning_effort_lists_the_allowed(
    options: TurnOptions, expected: str
) -> None:
    with pytest.raises(InvalidTurnOptions) as info:
        validate_turn_options(options, TOOLS)
    assert str(info.value) == expected


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -0.5])
def test_bad_temperature(value: float) -> None:
    with pytest.raises(InvalidTurnOptions, match="temperature"):
        validate_turn_options(TurnOptions(temperature=value), TOOLS)


def test_bad_max_output_tokens() -> None:
    with pytest.raises(InvalidTurnOptions, match="max_output_tokens must be at least 1, got 0"):
        validate_turn_options(TurnOptions(max_output_tokens=0), TOOLS)


def test_no_registered_tools_is_said_plainly() -> None:
    with pytest.raises(InvalidTurnOptions, match=r"Registered tools: \(none\)\."):
        validate_turn_options(TurnOptions(tool_names=["x"]), [])
