"""Helpers for the end-to-end tests of the real coding-agent CLIs: ``hive run --server --agent NAME`` as a
subprocess in a throwaway project, hive home and ``HOME``, the CLIs found on ``$HIVE_AGENT_CLIS_BIN``, pointed at
the scripted model server (with the agent-CLI responder) on 127.0.0.1.

Every wait is bounded and fails with what hive printed; every process started here is killed on the way out.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import IO
from typing import Any
from typing import Final
from typing import TypeVar

import pytest

from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import DEFAULT_COMMAND
from hive_conformance.model_server.agent_cli import agent_cli_responder
from hive_providers import CONFIG_SCHEMA

T = TypeVar("T")

AGENT_CLIS: Final = (
    "gemini",
    "copilot-acp",
    "opencode-acp",
    "kimi",
    "codebuddy",
    "reasonix",
    "hermes",
    "deepagents",
)
"""The ACP CLIs that run offline here, by hive's canonical backend name (OpenCode's and Copilot's own servers
have their tests)."""

PROGRAMS: Final = {"deepagents": "dcode", "opencode-acp": "opencode", "copilot-acp": "copilot"}
"""The program of a backend whose name is not its program's (the others are their own)."""

BIN_VARIABLE: Final = "HIVE_AGENT_CLIS_BIN"
"""Where ``.ci/agent-clis`` installed the CLIs (the last line it prints)."""

MODEL: Final = "local-model"
"""The model name hive passes with ``-m`` and the scripted server lists."""

TOOL_PROMPT: Final = "RUNTOOL go"
"""A prompt the responder answers with one call to the CLI's shell tool: ``touch hive_tool_ran.txt``."""

TOOL_FILE: Final = "hive_tool_ran.txt"
"""The file that call creates in the project: there only when the CLI ran the tool."""

COMMANDS: Final = {"hermes": f"touch {TOOL_FILE} && chmod 666 {TOOL_FILE}"}
"""The command the model asks a CLI's shell tool to run, where the plain ``touch`` does not fit: Hermes asks
permission only for the commands it deems dangerous (``chmod 666`` is one), and has no mode that asks for all."""

SLOW_PROMPT: Final = "SLOWTEXT go"
"""A prompt the responder answers with many text chunks, slowly (to cancel mid-text)."""

TIMEOUT: Final = 120.0
"""Seconds any one wait may take before the test fails (a bound, never a synchronisation): Python CLIs such as
Hermes and Deep Agents import for seconds on a busy machine."""

_HIVE: Final = Path(sys.executable).with_name("hive")
_OWNER: Final = b"HIVE_OWNER="
# Variables of the developer's environment that would change what hive or a CLI does.
_FOREIGN_PREFIXES: Final = (
    "OPENAI_",
    "ANTHROPIC_",
    "GEMINI_",
    "GOOGLE_",
    "COPILOT_",
    "KIMI_",
    "HIVE_",
    "XDG_",
)
_FOREIGN: Final = ("NO_COLOR", "FORCE_COLOR", "PYTHONDONTWRITEBYTECODE")


def clis_bin() -> Path:
    """The directory holding the installed CLIs: ``$HIVE_AGENT_CLIS_BIN``, else the installer's default."""
    configured = os.environ.get(BIN_VARIABLE)
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hive" / "agent-clis" / "bin"


def require_cli(name: str) -> Path:
    """The program of backend ``name``; skips the test, saying why, when it is not installed."""
    program = clis_bin() / PROGRAMS.get(name, name)
    if not os.access(program, os.X_OK):
        pytest.skip(
            f"{name}: {program} is not installed (run .ci/agent-clis and set {BIN_VARIABLE} to its last line)"
        )
    return program


def wait_until(predicate: Callable[[], T], *, timeout: float = TIMEOUT, what: str = "the condition") -> T:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


def owned_processes(hive_pid: int) -> list[int]:
    """The processes whose environment carries the owner mark of the hive process ``hive_pid`` (its children
    and everything they started), found by walking ``/proc``."""
    mark = _OWNER + f"{hive_pid}:".encode()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if any(variable.startswith(mark) for variable in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


def request_text(request: RecordedRequest) -> str:
    """A model request's body as text, to look for what the CLI sent the model (any wire API)."""
    return json.dumps(request.body) if request.body is not None else request.raw_body.decode(errors="replace")


def model_requests(server: ScriptedModelServer, since: int = 0) -> list[RecordedRequest]:
    """The requests to one of the model APIs (not model lists or token counts) from index ``since`` on."""
    apis = ("openai_chat", "openai_responses", "anthropic_messages", "gemini")
    return [r for r in server.requests[since:] if r.endpoint in apis]


class ModelServers:
    """The scripted models of a test module on 127.0.0.1, one per shell command asked for (:data:`COMMANDS`),
    started when first needed: a shell-tool call for ``RUNTOOL``, slow text for ``SLOWTEXT`` (80 chunks 0.1 s
    apart: time enough to cancel), a short reply otherwise."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._stack = stack
        self._servers: dict[str, ScriptedModelServer] = {}

    def __call__(self, cli: str) -> ScriptedModelServer:
        """The server for ``cli``."""
        command = COMMANDS.get(cli, DEFAULT_COMMAND)
        if command not in self._servers:
            responder = agent_cli_responder(command=command, slow_chunks=80, chunk_delay=0.1)
            server = ScriptedModelServer(model=MODEL, responder=responder)
            self._servers[command] = self._stack.enter_context(server)
        return self._servers[command]


def _clean_env(root: Path) -> dict[str, str]:
    names = {variable.name for variable in CONFIG_SCHEMA.environment}
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in names and name not in _FOREIGN and not name.startswith(_FOREIGN_PREFIXES)
    }
    # A private HOME for hive and, through it, for every CLI it starts: never the machine's own.
    env.update(
        HOME=str(root / "home"),
        HIVE_HOME=str(root / "hive-home"),
        XDG_CONFIG_HOME=str(root / "home" / ".config"),
        XDG_DATA_HOME=str(root / "home" / ".local" / "share"),
        XDG_CACHE_HOME=str(root / "home" / ".cache"),
        XDG_STATE_HOME=str(root / "home" / ".local" / "state"),
        PATH=f"{clis_bin()}{os.pathsep}{os.environ.get('PATH', '')}",
        LMSUPPLY_ENABLED="false",
        NO_COLOR="1",
    )
    return env


@dataclass
class Project:
    """A throwaway git project, hive home and ``HOME``, and the environment that points hive at them."""

    root: Path
    project: Path
    env: dict[str, str]

    @classmethod
    def create(cls, tmp: Path) -> Project:
        project = tmp / "project"
        project.mkdir()
        for folder in ("home", "hive-home"):
            (tmp / folder).mkdir()
        env = _clean_env(tmp)
        git = shutil.which("git")
        assert git is not None, "git is needed for the project the CLIs work in"
        subprocess.run([git, "init", "-q", str(project)], check=True, env=env, timeout=30)
        (project / "README.md").write_text("A throwaway project for the coding-agent CLI tests.\n")
        return cls(tmp, project, env)

    @property
    def tool_ran(self) -> bool:
        """Whether the CLI's shell tool created :data:`TOOL_FILE`."""
        return (self.project / TOOL_FILE).exists()

    @contextlib.contextmanager
    def serve(self, cli: str, server: ScriptedModelServer, *, session_id: str) -> Generator[HiveServer]:
        """``hive run --server --agent cli`` against ``server``, killed (with everything it started) on exit."""
        args = [
            "run",
            "--server",
            "--agent",
            cli,
            "--model-endpoint",
            f"{server.url}/v1",
            "-m",
            MODEL,
            "--session-id",
            session_id,
        ]
        stderr = (self.root / f"hive-{session_id}-{len(list(self.root.glob('hive-*.stderr')))}.stderr").open(
            "wb"
        )
        with stderr:
            process = subprocess.Popen(
                [str(_HIVE), *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                cwd=self.project,
                env=self.env,
            )
            hive = HiveServer(process, Path(stderr.name))
            try:
                yield hive
            finally:
                hive.kill()


def _pump(stream: IO[bytes], into: queue.Queue[bytes | None], keep: list[bytes]) -> None:
    for line in iter(stream.readline, b""):
        keep.append(line)
        into.put(line)
    into.put(None)


@dataclass
class HiveServer:
    """A running ``hive run --server``: requests written to its stdin, its events read line by line."""

    process: subprocess.Popen[bytes]
    stderr_path: Path
    lines: list[bytes] = field(default_factory=list[bytes])
    """Every line it wrote to stdout so far: the whole event stream, for :func:`hive_protocol.verify`."""
    _queue: queue.Queue[bytes | None] = field(default_factory=queue.Queue[bytes | None])
    _reader: threading.Thread | None = None

    def __post_init__(self) -> None:
        assert self.process.stdout is not None
        self._reader = threading.Thread(
            target=_pump, args=(self.process.stdout, self._queue, self.lines), daemon=True
        )
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def _context(self) -> str:
        return f"exit code {self.process.poll()}; stderr (last 4000 characters):\n{self.stderr[-4000:]}"

    def send(self, request: Mapping[str, Any]) -> None:
        """Write one request line."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()

    def next_event(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next event it writes."""
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event within {timeout:g} s; {self._context()}") from None
        if line is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(10)  # for its exit code in the message
            raise AssertionError(f"stdout ended; {self._context()}")
        event: dict[str, Any] = json.loads(line)
        return event

    def events_until(self, kind: str, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Events up to and including the first of type ``kind``."""
        deadline = time.monotonic() + timeout
        seen: list[dict[str, Any]] = []
        while True:
            event = self.next_event(max(0.01, deadline - time.monotonic()))
            seen.append(event)
            if event.get("type") == kind:
                return seen

    def started(self) -> dict[str, Any]:
        """The ``session_started`` event every server writes first."""
        event = self.next_event()
        assert event["type"] == "session_started", f"{event}; {self._context()}"
        return event

    def turn(self, prompt: str, *, approve: bool | None, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Send ``prompt`` and read its events to ``turn_end``, answering every ``hitl_request`` with ``approve``
        (``None``: the turn must ask nothing)."""
        self.send({"type": "user_message", "content": prompt})
        deadline = time.monotonic() + timeout
        seen: list[dict[str, Any]] = []
        while True:
            event = self.next_event(max(0.01, deadline - time.monotonic()))
            seen.append(event)
            if event["type"] == "hitl_request":
                assert approve is not None, f"the turn asked {event}; {self._context()}"
                self.send({"type": "hitl_response", "id": event["id"], "approved": approve})
            elif event["type"] == "turn_end":
                return seen

    def finish(self, timeout: float = TIMEOUT) -> int:
        """Ask it to shut down, and wait for the exit and the end of its output."""
        with contextlib.suppress(BrokenPipeError):
            self.send({"type": "shutdown"})
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"hive did not exit within {timeout:g} s; {self._context()}") from None
        if self._reader is not None:
            self._reader.join(timeout)
        return code

    def kill(self) -> None:
        """kill -9 it if it still runs, and whatever carries its owner mark (what its watchdog would kill)."""
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(TIMEOUT)
        for pid in owned_processes(self.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def assert_every_tool_closed(events: list[dict[str, Any]]) -> None:
    """Every ``tool_start`` has its ``tool_end``."""
    started = {e["call_id"] for e in events if e["type"] == "tool_start"}
    ended = {e["call_id"] for e in events if e["type"] == "tool_end"}
    assert started <= ended, f"tools never closed: {sorted(started - ended)}"


def assert_nothing_left(hive_pid: int, timeout: float = 15.0) -> None:
    """No process carrying hive's owner mark is left (its watchdog may take a moment after hive's exit)."""
    try:
        wait_until(lambda: not owned_processes(hive_pid), timeout=timeout, what="hive's children to end")
    except AssertionError:
        left = {pid: _command_line(pid) for pid in owned_processes(hive_pid)}
        raise AssertionError(f"processes left by hive {hive_pid}: {left}") from None


def _command_line(pid: int) -> str:
    try:
        return (
            (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return "?"
