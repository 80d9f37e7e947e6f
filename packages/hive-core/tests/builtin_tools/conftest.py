"""Shared fixtures: a temporary project and a way to call a tool in it, collecting the events it emits."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import pytest

from hive_core.tools import Tool
from hive_core.tools import ToolContext
from hive_protocol import Event


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_global_git_excludes(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The searches read the user's global git excludes: the developer's own must not change what tests find."""
    empty = tmp_path_factory.mktemp("git-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(empty))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty / "config"))


@dataclass
class Project:
    """A project directory, and the events tool calls in it have emitted."""

    root: Path
    events: list[Event] = field(default_factory=list[Event])

    def context(self, tool: Tool) -> ToolContext:
        return ToolContext(call_id="c1", tool_name=tool.name, working_dir=self.root, emit=self.events.append)

    async def call(self, tool: Tool, **arguments: Any) -> str:
        """Run ``tool`` with ``arguments``; what the model would read. A failure raises, as the tool does."""
        outcome = await tool.invoke(arguments, self.context(tool))
        assert outcome.success
        return outcome.content

    def write(self, name: str, data: bytes | str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            path.write_bytes(data.encode())
        else:
            path.write_bytes(data)
        return path


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    root.mkdir()
    return Project(root)
