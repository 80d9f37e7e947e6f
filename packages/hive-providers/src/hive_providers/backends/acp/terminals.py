"""ACP's terminals, run under hive's rules and sandbox.

``terminal/create`` is judged as ``execute_command`` and started through hive's command sandbox (as
``execute_command`` is), in a process group of its own, its output going to a private file of which
``terminal/output`` returns the last ``outputByteLimit`` bytes.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import anyio.to_thread
from acp import RequestError

from hive_core.child_processes import SupervisedProcess
from hive_core.child_processes import open_child
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import SandboxUnavailable
from hive_core.sandbox import launch_command
from hive_core.tool_names import EXECUTE_COMMAND
from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.tool_calls import text_of

from .files import positive
from .permissions import REFUSED
from .permissions import AcpPermissions

__all__ = ["DEFAULT_OUTPUT_LIMIT", "AcpTerminals"]

DEFAULT_OUTPUT_LIMIT: Final = 1_048_576
"""Bytes of a terminal's output kept when the agent sets no ``outputByteLimit``."""


@dataclass
class _Terminal:
    process: SupervisedProcess
    output: Path
    """The file its stdout and stderr go to: nothing needs to read a pipe while the agent is not asking."""
    limit: int
    release: Callable[[], None] = lambda: None
    """Removes the sandbox's empty mount points once the command has ended."""


class AcpTerminals:
    """The terminals one turn's agent opened; ``sandbox`` confines their commands (``None``: the default settings,
    ``auto``)."""

    def __init__(self, *, cwd: Path, permissions: AcpPermissions, sandbox: SandboxSettings | None) -> None:
        self._cwd = cwd
        self._permissions = permissions
        self._sandbox = sandbox if sandbox is not None else SandboxSettings()
        self._terminals: dict[str, _Terminal] = {}
        self._scratch: Path | None = None

    async def create_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/create``: the command, judged as ``execute_command``, started in hive's sandbox."""
        command = text_of(params.get("command"))
        if command is None:
            raise RequestError.invalid_params({"command": "must be a command"})
        args = [arg for arg in as_list(params.get("args")) if isinstance(arg, str)]
        cwd = self._permissions.resolve(text_of(params.get("cwd")) or ".")
        line = shlex.join([command, *args]) if args else command
        judged = line if cwd == self._cwd else f"cd {shlex.quote(str(cwd))} && {line}"
        arguments: dict[str, Any] = {"command": judged}
        verdict = self._permissions.verdict(EXECUTE_COMMAND, {"command": line}, cwd=str(cwd))
        await self._permissions.authorise(EXECUTE_COMMAND, arguments, verdict, judged)
        argv = [command, *args] if args else [shutil.which("bash") or "/bin/sh", "-c", command]
        if cwd != self._cwd:
            # The sandbox starts in the project; the agent's directory is entered inside it.
            argv = ["/bin/sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", str(cwd), *argv]
        try:
            launch = await anyio.to_thread.run_sync(
                partial(launch_command, argv, working_dir=self._cwd, settings=self._sandbox)
            )
        except SandboxUnavailable as error:
            raise RequestError(REFUSED, str(error), {"command": line}) from None
        env = dict(launch.env)
        for entry in as_list(params.get("env")):
            fields = as_mapping(entry)
            name, value = fields.get("name"), fields.get("value")
            if (
                isinstance(name, str)
                and name
                and isinstance(value, str)
                and name not in self._sandbox.withheld_variables
            ):
                env[name] = value
        terminal_id = f"term-{uuid.uuid4().hex[:12]}"
        output = self._scratch_dir() / f"{terminal_id}.out"
        limit = positive(params.get("outputByteLimit")) or DEFAULT_OUTPUT_LIMIT
        with output.open("wb") as sink:
            try:
                process = await open_child(
                    launch.argv,
                    cwd=self._cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    # Unconfined, a subreaper keeps what the command daemonises in reach (see open_child).
                    reap_orphans=launch.argv == argv,
                )
            except OSError as error:
                output.unlink(missing_ok=True)
                launch.release()
                raise RequestError(-32603, f"cannot start {command}: {error.strerror or error}") from None
        self._terminals[terminal_id] = _Terminal(
            process=process, output=output, limit=limit, release=launch.release
        )
        return {"terminalId": terminal_id}

    async def terminal_output(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/output``: what the command printed so far (its last ``outputByteLimit`` bytes)."""
        terminal = self._terminal(params)
        text, truncated = await anyio.to_thread.run_sync(_read_tail, terminal.output, terminal.limit)
        result: dict[str, Any] = {"output": text, "truncated": truncated}
        if terminal.process.returncode is not None:
            result["exitStatus"] = _exit_status(terminal.process.returncode)
        return result

    async def wait_for_terminal_exit(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/wait_for_exit``: the exit code, or the signal that ended it."""
        terminal = self._terminal(params)
        return _exit_status(await terminal.process.wait())

    async def kill_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/kill``: kill the command and everything it started; its output stays readable."""
        terminal = self._terminal(params)
        # Also after the command exited: what it left running in the background dies with it.
        terminal.process.kill_tree()
        return {}

    async def release_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/release``: kill what still runs and forget the terminal."""
        terminal_id = text_of(params.get("terminalId")) or ""
        terminal = self._terminal(params)
        del self._terminals[terminal_id]
        await _close(terminal)
        return {}

    async def aclose(self) -> None:
        """Kill every terminal still open and remove their output files."""
        terminals = list(self._terminals.values())
        self._terminals.clear()
        with anyio.CancelScope(shield=True):
            for terminal in terminals:
                await _close(terminal)
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None

    def _terminal(self, params: Mapping[str, Any]) -> _Terminal:
        terminal_id = text_of(params.get("terminalId"))
        terminal = self._terminals.get(terminal_id or "")
        if terminal is None:
            raise RequestError.invalid_params({"terminalId": f"no terminal {terminal_id!r}"})
        return terminal

    def _scratch_dir(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="hive-acp-terminals-"))
        return self._scratch


def _read_tail(path: Path, limit: int) -> tuple[str, bool]:
    """The last ``limit`` bytes of ``path`` as text, cut at a character boundary, and whether bytes were cut."""
    try:
        with path.open("rb") as source:
            size = source.seek(0, os.SEEK_END)
            start = max(0, size - limit)
            source.seek(start)
            data = source.read(size - start)
    except FileNotFoundError:
        return "", False
    cut = 0
    if start > 0:
        # Skip the continuation bytes of a character the cut split.
        while cut < len(data) and cut < 4 and data[cut] & 0xC0 == 0x80:
            cut += 1
    return data[cut:].decode("utf-8", errors="replace"), start > 0


def _exit_status(returncode: int) -> dict[str, Any]:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return {"exitCode": None, "signal": name}
    return {"exitCode": returncode, "signal": None}


async def _close(terminal: _Terminal) -> None:
    terminal.process.kill_tree()
    with anyio.CancelScope(shield=True):
        await terminal.process.aclose()
    terminal.release()
    with contextlib.suppress(OSError):
        terminal.output.unlink()
