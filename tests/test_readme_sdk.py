"""The README's SDK example runs as printed and its tool call succeeds."""

from __future__ import annotations

import re
from pathlib import Path

from hive_protocol import ToolEndEvent
from hive_protocol import TurnEndEvent

README = Path(__file__).resolve().parents[1] / "README.md"


def sdk_example() -> str:
    """The first Python block under the README's "The SDK in brief" heading."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## The SDK in brief", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None, "the README has no Python block under 'The SDK in brief'"
    return found.group(1)


def test_the_readme_sdk_example_runs_its_tool() -> None:
    namespace: dict[str, object] = {"__name__": "readme_sdk"}
    exec(compile(sdk_example(), str(README), "exec"), namespace)
    events = namespace["events"]
    assert isinstance(events, list)
    ends = [event for event in events if isinstance(event, ToolEndEvent)]
    assert [(end.tool, end.success, end.output) for end in ends] == [("add", True, "5")]
    assert isinstance(events[-1], TurnEndEvent)
    assert events[-1].stop_reason == "completed"
