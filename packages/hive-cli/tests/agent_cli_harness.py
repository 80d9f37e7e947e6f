"""A fake coding-agent CLI on ``PATH`` for the ``--agent`` tests: an executable named like a real CLI (``gemini``)
that runs the providers' fake ACP agent on a transcript, logging every message hive sends it.

Which transcript it replays and where it logs are read from the environment of each ``hive`` run
(:meth:`FakeCli.env`), so one workspace runs several scripted turns. Its ``--version`` prints :data:`VERSION`.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Final

import pytest
from cli_harness import Workspace

from hive_conformance.agent_clis import agent_clis_bin

TRANSCRIPTS: Final = Path(__file__).with_name("acp_transcripts")
"""This folder's transcripts (``cli-*.jsonl``)."""

ASK_TRANSCRIPT: Final = (
    Path(__file__).parents[2] / "hive-providers/tests/acp_transcripts/quirk-reasonix-ask-question.jsonl"
)
"""hive-providers' recording of Reasonix asking a question (``ask_user_question``) and taking the answer."""

FAKE_AGENT: Final = Path(__file__).parents[2] / "hive-providers" / "tests" / "acp_fake_agent.py"
"""The fake ACP agent that replays a transcript (stdlib only)."""

VERSION: Final = "0.99.1"
"""What the fake CLI's ``--version`` prints."""

_SCRIPT: Final = """\
#!/bin/sh
if [ "$1" = "--version" ]; then echo "fake-cli {version}"; exit 0; fi
env > "$HIVE_TEST_AGENT_LOG.env"
exec "{python}" "{agent}" "$HIVE_TEST_TRANSCRIPT" --log "$HIVE_TEST_AGENT_LOG" --wait 30
"""


@dataclass
class FakeCli:
    """A fake CLI installed in ``bin`` of a workspace whose ``PATH`` holds nothing else hive could find."""

    workspace: Workspace
    bin: Path
    runs: int = 0

    @classmethod
    def install(cls, workspace: Workspace, *names: str) -> FakeCli:
        """Put executables ``names`` on the workspace's ``PATH`` (before the system's own directories only), and
        give its runs a private ``HOME`` so no real CLI of the machine is found or touched."""
        bin_dir = workspace.root / "bin"
        bin_dir.mkdir(exist_ok=True)
        for name in names:
            program = bin_dir / name
            program.write_text(
                _SCRIPT.format(version=VERSION, python=sys.executable, agent=FAKE_AGENT), encoding="utf-8"
            )
            program.chmod(0o755)
        home = workspace.root / "user-home"
        home.mkdir(exist_ok=True)
        workspace.env.update(PATH=os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]), HOME=str(home))
        return cls(workspace, bin_dir)

    def env(self, transcript: str) -> dict[str, str]:
        """The environment of one run that replays ``acp_transcripts/<transcript>.jsonl``, logging to a new file."""
        self.runs += 1
        return {
            "HIVE_TEST_TRANSCRIPT": str(TRANSCRIPTS / f"{transcript}.jsonl"),
            "HIVE_TEST_AGENT_LOG": str(self.log_path(self.runs)),
        }

    def log_path(self, run: int) -> Path:
        """The log of the ``run``-th run (from 1)."""
        return self.workspace.root / f"agent-{run}.log.jsonl"

    def log(self, run: int | None = None) -> list[dict[str, Any]]:
        """Every message hive sent the fake CLI in the ``run``-th run (default: the last)."""
        path = self.log_path(run or self.runs)
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def environment(self, run: int | None = None) -> dict[str, str]:
        """The environment the ``run``-th run's CLI was started with (default: the last)."""
        text = Path(f"{self.log_path(run or self.runs)}.env").read_text(encoding="utf-8")
        pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
        return {name: value for name, _, value in pairs}

    def methods(self, run: int | None = None) -> list[str | None]:
        """The method of each message hive sent (``None`` for a response)."""
        return [message.get("method") for message in self.log(run)]


def real_cli(workspace: Workspace, program: str) -> Path:
    """The installed real CLI ``program`` (the test is skipped when it is not), put first on the workspace's
    ``PATH``, with a private ``HOME`` and no colours."""
    binary = agent_clis_bin() / program
    if not os.access(binary, os.X_OK):
        pytest.skip(f"{binary} is not installed (run .ci/agent-clis and set HIVE_AGENT_CLIS_BIN)")
    home = workspace.root / "user-home"
    home.mkdir(exist_ok=True)
    path = f"{binary.parent}{os.pathsep}{workspace.env.get('PATH', '')}"
    workspace.env.update(PATH=path, HOME=str(home), NO_COLOR="1")
    return binary
