"""Helpers for the session tests: child processes driven over pipes, and a policy that asks about deploys."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from core_harness import WAIT

from hive_core.permissions.verdict import Verdict
from hive_protocol import LineTooLong, iter_lines

CHILD = Path(__file__).with_name("sessions_child.py")


class AskAboutDeploys:
    """Rules that send ``deploy`` calls for approval and allow everything else."""

    def evaluate(self, tool_name: str, arguments: Any, *, planning: bool = False) -> Verdict:
        if tool_name == "deploy":
            return Verdict.ask("deploys to production", level="high")
        return Verdict.allow()


class Child:
    """``sessions_child.py`` running as a real process; every read is bounded by ``WAIT``."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
        assert self.proc.stdout is not None
        self._lines: Iterator[bytes | LineTooLong] = iter_lines(self.proc.stdout)
        self.lines: list[bytes] = []
        """Every line read so far, without its newline."""

    async def read(self) -> bytes | None:
        """The next line of output, or ``None`` once it ended."""
        with anyio.fail_after(WAIT):
            line = await anyio.to_thread.run_sync(next, self._lines, None, abandon_on_cancel=True)
        if line is None:
            return None
        assert isinstance(line, bytes)
        self.lines.append(line)
        return line

    async def read_until(self, done: Callable[[list[bytes]], bool]) -> list[bytes]:
        """Read lines until ``done`` holds for the lines read so far."""
        while not done(self.lines):
            line = await self.read()
            assert line is not None, f"the child's output ended early: {self.lines!r}\n{self.stderr()}"
        return self.lines

    async def send(self, data: bytes) -> None:
        def write() -> None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

        with anyio.fail_after(WAIT):
            await anyio.to_thread.run_sync(write, abandon_on_cancel=True)

    async def kill(self) -> int:
        """SIGKILL: no cleanup of any kind runs in the child."""
        self.proc.kill()
        return await self.wait()

    async def wait(self) -> int:
        with anyio.fail_after(WAIT):
            return await anyio.to_thread.run_sync(self.proc.wait, abandon_on_cancel=True)

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read().decode(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()
