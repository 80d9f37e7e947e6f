"""Helpers for the hive-cli tests: run the installed ``hive`` in a throwaway home and project, against the
scripted model server, and read what it prints.

Every process started here has a timeout; every wait is a bounded poll that fails with a message.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import IO
from typing import Any
from typing import Final
from typing import TypeVar
from typing import cast

from hive_cli.session_documents import encode_document
from hive_cli.session_documents import session_summaries
from hive_cli.session_store import session_store_path
from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptFinishReason
from hive_conformance.script import ScriptPart
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_core.config import TrustStore
from hive_core.config import find_project_root
from hive_core.config import user_home
from hive_core.sessions import SqliteSessionStore
from hive_providers import CONFIG_SCHEMA

T = TypeVar("T")


def _installed_hive() -> Path:
    beside = Path(sys.executable).with_name("hive")
    return beside if beside.exists() else Path(shutil.which("hive") or "hive")


HIVE: Final = _installed_hive()
"""The ``hive`` command installed in the workspace's virtual environment (beside the running Python)."""

MODEL: Final = "scripted"
"""The model name the scripted server lists and hive is configured with."""

PYCACHE: Final = Path(tempfile.gettempdir()) / "hive-cli-tests-pycache"
"""Where the ``hive`` processes of the tests keep their bytecode."""

TIMEOUT: Final = 60.0
"""Seconds any one ``hive`` process or wait may take before the test fails (a bound, never a synchronisation)."""

# Variables of the developer's environment that would change what hive does.
_FOREIGN: Final = (
    "HIVE_HOME",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "ANTHROPIC_BASE_URL",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_CONFIG_FILE",
    "NO_COLOR",
    "FORCE_COLOR",
)

LOCAL_PROMPT: Final = "Say hello in five words"
"""The prompt of the local-model test."""

ALLOW_ALL: Final = """\
permissions:
  read:
    - pattern: "**/*"
      action: allow
  edit:
    - pattern: "**/*"
      action: allow
  bash:
    - pattern: "*"
      action: allow
  ask_before_delete: false
  default_action: allow
  inherit: false
"""
"""A rules file that lets every call run unasked."""

SECRET_AND_PRIVATE: Final = """\
permissions:
  read:
    - pattern: "secret.txt"
      action: deny
    - pattern: "private/**"
      action: ask
"""
"""A rules file that denies reading ``secret.txt`` and asks before reading under ``private/``."""


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The test process's environment without any provider setting, with ``HIVE_HOME`` at ``home`` and local
    inference off (a test that wants it turns it on)."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {v.name for v in CONFIG_SCHEMA.environment} and name not in _FOREIGN
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # Bytecode cached outside the workspace: every test starts several interpreters that import the same SDKs.
    env.update(HIVE_HOME=str(home), LMSUPPLY_ENABLED="false", PYTHONPYCACHEPREFIX=str(PYCACHE))
    env.update(extra)
    return env


def wait_until(predicate: Callable[[], T], *, timeout: float = TIMEOUT, what: str = "the condition") -> T:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.02)


# -- rounds of the scripted model ------------------------------------------------------------------------------


def text(
    *chunks: str,
    usage: tuple[int, int] | None = (10, 2),
    finish: ScriptFinishReason | None = None,
    delay: float = 0.0,
    thinking: Sequence[str] = (),
) -> Round:
    """A round that streams ``chunks`` as the reply (after ``thinking``, when given)."""
    parts: list[ScriptPart] = []
    if thinking:
        parts.append(ScriptThinking(chunks=list(thinking)))
    parts.append(ScriptText(chunks=list(chunks)))
    return Round(
        parts=parts,
        usage=Usage(input_tokens=usage[0], output_tokens=usage[1]) if usage is not None else None,
        finish_reason=finish,
        chunk_delay=delay,
    )


def calls(*items: tuple[str, str, Mapping[str, Any]], say: str | None = None) -> Round:
    """A round that calls tools: ``(call id, tool name, arguments)`` each, after an optional line of text."""
    parts: list[ScriptPart] = [ScriptText(chunks=[say])] if say else []
    for call_id, name, arguments in items:
        encoded = json.dumps(arguments)
        half = len(encoded) // 2
        parts.append(ScriptToolCall(id=call_id, name=name, arguments=[encoded[:half], encoded[half:]]))
    return Round(parts=parts, usage=Usage(input_tokens=20, output_tokens=5))


@contextmanager
def scripted_server(*rounds: Round) -> Generator[ScriptedModelServer]:
    """A running scripted model server listing the model :data:`MODEL`."""
    with ScriptedModelServer(rounds, model=MODEL) as server:
        yield server


def model_requests(server: ScriptedModelServer) -> list[RecordedRequest]:
    """The requests that asked the model (a round each), in order."""
    return [r for r in server.requests if r.endpoint in ("openai_responses", "openai_chat")]


def input_items(request: RecordedRequest, kind: str) -> list[dict[str, Any]]:
    """The Responses API ``input`` items of one ``type`` (``function_call``, ``function_call_output``…)."""
    body: dict[str, Any] = request.body
    items: list[dict[str, Any]] = [item for item in body["input"] if isinstance(item, dict)]
    return [item for item in items if item.get("type") == kind]


def message_texts(request: RecordedRequest, role: str) -> list[str]:
    """The text of every message of ``role`` in a Responses API request's ``input``, in order."""
    found: list[str] = []
    body: dict[str, Any] = request.body
    for item in body["input"]:
        if not isinstance(item, dict):
            continue
        message = cast("dict[str, Any]", item)
        if message.get("role") != role:
            continue
        content: Any = message.get("content")
        if isinstance(content, str):
            found.append(content)
            continue
        for part in cast("list[Any]", content):
            if isinstance(part, dict) and "text" in part:
                found.append(str(cast("dict[str, Any]", part)["text"]))
    return found


def user_texts(request: RecordedRequest) -> list[str]:
    """The text of every user message the model was sent, in order."""
    return message_texts(request, "user")


def assistant_texts(request: RecordedRequest) -> list[str]:
    """The text of every assistant message the model was sent back, in order."""
    return message_texts(request, "assistant")


# -- the workspace ---------------------------------------------------------------------------------------------


@dataclass
class Result:
    """A finished ``hive`` process."""

    args: list[str]
    code: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"hive {' '.join(self.args)} → {self.code}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"

    def document(self) -> Any:
        """stdout as exactly one JSON document (nothing else on it)."""
        assert self.stdout.endswith("\n"), self
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as exc:  # pragma: no cover - the message is the point
            raise AssertionError(f"stdout is not one JSON document ({exc})\n{self}") from None

    def line_document(self) -> Any:
        """stdout as one JSON document on one line."""
        assert self.stdout.count("\n") == 1, self
        return self.document()

    def records(self) -> list[dict[str, Any]]:
        """stdout as JSON Lines, every line an object."""
        assert self.stdout.endswith("\n"), self
        lines = self.stdout.splitlines()
        records: list[dict[str, Any]] = []
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:  # pragma: no cover
                raise AssertionError(f"not a JSON line: {line!r}\n{self}") from None
            assert isinstance(record, dict), line
            records.append(record)  # pyright: ignore[reportUnknownArgumentType]
        return records


@dataclass
class Workspace:
    """A throwaway hive home and project directory, and the environment that points hive at them.

    The user trusts the project (its files as they are when each ``hive`` starts), so its ``.hive/`` settings
    apply as the test wrote them; a test of project trust sets :attr:`trusted` to ``False``.
    """

    root: Path
    home: Path
    project: Path
    env: dict[str, str]
    trusted: bool = True
    """Record the project as trusted, with its files as they are, before each ``hive`` starts."""

    def trust_now(self, cwd: Path | None = None) -> None:
        """Record the project around ``cwd`` (the project by default) as trusted, as ``hive trust`` would, when
        :attr:`trusted` (and the home exists: a test may have removed it)."""
        if self.trusted and self.home.exists():
            root = find_project_root(cwd or self.project, home=user_home(self.env))
            TrustStore(self.home).trust(root)

    @classmethod
    def create(cls, tmp: Path) -> Workspace:
        home = tmp / "hive-home"
        project = tmp / "project"
        (project / ".hive").mkdir(parents=True)
        home.mkdir()
        return cls(tmp, home, project, clean_env(home))

    def use(self, server: ScriptedModelServer) -> Workspace:
        """Point the ``openai`` provider (Responses API) at the scripted server."""
        self.env.update(
            OPENAI_API_KEY="test",
            OPENAI_MODEL=MODEL,
            OPENAI_ENDPOINT=server.url + "/v1",
            OPENAI_API="responses",
        )
        return self

    def allow_all(self) -> Workspace:
        """Let every tool call run without asking."""
        return self.permissions(ALLOW_ALL)

    def permissions(self, yaml_text: str) -> Workspace:
        (self.project / ".hive" / "permissions.yaml").write_text(yaml_text, encoding="utf-8")
        return self

    def sandbox_off(self) -> Workspace:
        """Run commands unconfined (the project's ``sandbox.mode: off``)."""
        (self.project / ".hive" / "config.yaml").write_text('sandbox:\n  mode: "off"\n', encoding="utf-8")
        return self

    def run(
        self,
        *args: str,
        input: str | None = None,
        timeout: float = TIMEOUT,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Result:
        """Run ``hive args...`` to its end (stdin empty unless ``input``)."""
        self.trust_now(cwd)
        environment = {**self.env, **(env or {})}
        completed = subprocess.run(
            [str(HIVE), *args],
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
            cwd=cwd or self.project,
            env=environment,
            check=False,
        )
        return Result(list(args), completed.returncode, completed.stdout, completed.stderr)

    def start(self, *args: str, env: Mapping[str, str] | None = None) -> Proc:
        """Start ``hive args...`` with pipes on stdin, stdout and stderr."""
        self.trust_now()
        process = subprocess.Popen(
            [str(HIVE), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.project,
            env={**self.env, **(env or {})},
        )
        return Proc(process)

    def terminal(self, *args: str, term: str = "dumb") -> Terminal:
        """Start ``hive args...`` on a pseudo-terminal (``term``: its ``TERM``)."""
        self.trust_now()
        return Terminal(args, env=self.env, cwd=self.project, term=term)

    @contextmanager
    def prompt(self, *args: str, shows: Sequence[str] = (), term: str = "dumb") -> Generator[Terminal]:
        """:meth:`terminal`, once hive's first prompt is up (its banner holding each of ``shows``)."""
        with self.terminal(*args, term=term) as terminal:
            terminal.shows(PROMPT, *shows)
            yield terminal

    @contextmanager
    def serve(self, *args: str) -> Generator[Proc]:
        """``hive run --server args...``, once it announced its session (``session_started``)."""
        with self.start("run", "--server", *args) as proc:
            assert proc.next_event()["type"] == "session_started", proc.stderr
            yield proc

    def spawn(self, *args: str) -> Background:
        """Start ``hive args...`` in the background (stdin empty), its output going to files."""
        self.trust_now()
        return Background.start(list(args), self)

    def git(
        self, *args: str, env: Mapping[str, str], timeout: float = 60, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """The user's own git in the project (plain, as they would type it), with ``env`` (an identity, say) over
        the workspace's environment."""
        return subprocess.run(
            ["git", *args],
            cwd=self.project,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
        )

    def sessions(self) -> list[dict[str, Any]]:
        """The project's sessions as ``hive sessions list -o json`` documents them, newest first.

        Read from the database in this process: only ``test_sessions`` pays for the command itself.
        """
        path = session_store_path(self.env)
        if not path.exists():
            return []
        with SqliteSessionStore(path) as store:
            infos = store.list_sessions(project_path=str(self.project.resolve()))
        document: list[dict[str, Any]] = json.loads(encode_document(session_summaries(infos)))
        return document


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


@dataclass
class Background:
    """A ``hive`` running on its own while the tests go on; :meth:`result` waits for it."""

    args: list[str]
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    @classmethod
    def start(cls, args: list[str], workspace: Workspace) -> Background:
        out, err = workspace.root / "background.stdout", workspace.root / "background.stderr"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen(
                [str(HIVE), *args],
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                cwd=workspace.project,
                env=workspace.env,
            )
        return cls(args, process, out, err)

    def result(self, timeout: float) -> Result:
        """Wait (at most ``timeout`` seconds) for the exit, and read what it printed."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(f"hive {' '.join(self.args)} did not finish within {timeout:g} s") from None
        return Result(self.args, code, _read(self.stdout), _read(self.stderr))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(TIMEOUT)


def _pump(stream: IO[bytes], into: queue.Queue[bytes | None], keep: list[bytes]) -> None:
    for line in iter(stream.readline, b""):
        keep.append(line)
        into.put(line)
    into.put(None)


@dataclass
class Proc:
    """A running ``hive`` whose stdout is read line by line (in a thread) and whose stderr is kept."""

    process: subprocess.Popen[bytes]
    lines: queue.Queue[bytes | None] = field(default_factory=queue.Queue[bytes | None])
    out: list[bytes] = field(default_factory=list[bytes])
    err: list[bytes] = field(default_factory=list[bytes])
    threads: list[threading.Thread] = field(default_factory=list[threading.Thread])

    def __post_init__(self) -> None:
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        for args in (
            (self.process.stdout, self.lines, self.out),
            (self.process.stderr, queue.Queue[bytes | None](), self.err),
        ):
            thread = threading.Thread(target=_pump, args=args, daemon=True)
            thread.start()
            self.threads.append(thread)

    @property
    def stderr(self) -> str:
        return b"".join(self.err).decode(errors="replace")

    def send(self, request: Mapping[str, Any]) -> None:
        """Write one request line."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def next_line(self, timeout: float = TIMEOUT) -> bytes | None:
        """The next stdout line, ``None`` at its end; fails after ``timeout`` seconds."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no output line within {timeout:g} s; stderr so far:\n{self.stderr}"
            ) from None

    def next_event(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next stdout line as a JSON object."""
        line = self.next_line(timeout)
        assert line is not None, f"stdout ended; exit code {self.process.poll()}; stderr:\n{self.stderr}"
        event: dict[str, Any] = json.loads(line)
        return event

    def turn(self, content: str, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Send a ``user_message`` of ``content``; the events read up to its ``turn_end``."""
        self.send({"type": "user_message", "content": content})
        return self.events_until("turn_end", timeout)

    def events_until(self, kind: str, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Events read up to and including the first of ``type`` ``kind``."""
        deadline = time.monotonic() + timeout
        seen: list[dict[str, Any]] = []
        while True:
            event = self.next_event(max(0.01, deadline - time.monotonic()))
            seen.append(event)
            if event.get("type") == kind:
                return seen

    def wait(self, timeout: float = TIMEOUT) -> int:
        """Wait for the exit code, and for its output to be read to the end (:attr:`stdout`, :attr:`stderr`)."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"hive did not exit within {timeout:g} s; stderr:\n{self.stderr}") from None
        for thread in self.threads:
            thread.join(timeout)
        return code

    @property
    def stdout(self) -> str:
        """Everything read from stdout so far (all of it after :meth:`wait`)."""
        return b"".join(self.out).decode(errors="replace")

    def signal(self, signum: signal.Signals) -> None:
        self.process.send_signal(signum)

    def kill(self) -> None:
        """kill -9, and reap it."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(TIMEOUT)
        for thread in self.threads:
            thread.join(TIMEOUT)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def __enter__(self) -> Proc:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


# -- a real terminal -------------------------------------------------------------------------------------------

# Runs in the child: make the pty (already on fds 0-2, in a new session) the controlling terminal, so Ctrl+C
# typed into it sends SIGINT to hive, then become hive.
_TAKE_TERMINAL: Final = "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); os.execv(sys.argv[1], sys.argv[1:])"


_CURSOR_QUERY: Final = b"\x1b[6n"
"""A program asking the terminal where the cursor is (device status report)."""


PROMPT: Final = "> "
"""The end of hive's interactive prompt."""

APPROVAL_PANEL_END: Final = "[s] reject and stop"
"""The last choice of an approval panel: once it shows, hive waits for the answer."""


class Terminal:
    """``hive`` on a pseudo-terminal of its own: what it writes is collected, keys are typed into it."""

    def __init__(self, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, term: str = "dumb") -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.term = term
        """The ``TERM`` hive is given: ``dumb`` (plain line input), or ``xterm-256color`` for prompt_toolkit's
        editor and rich's live display, as a person's terminal emulator."""
        self.process = subprocess.Popen(
            [sys.executable, "-c", _TAKE_TERMINAL, str(HIVE), *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env={**env, "TERM": term},
            start_new_session=True,
        )
        os.close(slave)
        self._master = master
        self._lock = threading.Lock()
        self._output = bytearray()
        self._cursor = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._master, 4096)
            except OSError:  # EIO: every process holding the terminal is gone
                return
            if not data:
                return
            with self._lock:
                self._output += data
            # Answered as a terminal emulator does: prompt_toolkit asks where the cursor is.
            for _ in range(data.count(_CURSOR_QUERY)):
                os.write(self._master, b"\x1b[1;1R")

    @property
    def output(self) -> str:
        """Everything written so far (carriage returns dropped)."""
        with self._lock:
            return self._output.decode(errors="replace").replace("\r", "")

    @property
    def raw(self) -> str:
        """Everything written so far, exactly (carriage returns kept): for drawing it on a screen."""
        with self._lock:
            return self._output.decode(errors="replace")

    def expect(self, needle: str, timeout: float = TIMEOUT) -> str:
        """Wait until ``needle`` appears after what earlier expectations consumed; return the text up to it."""

        def found() -> int:
            with self._lock:
                return self._output.find(needle.encode(), self._cursor) + 1

        try:
            end = wait_until(found, timeout=timeout, what=repr(needle)) - 1 + len(needle.encode())
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the terminal shows:\n{self.output}") from None
        with self._lock:
            seen = self._output[self._cursor : end].decode(errors="replace").replace("\r", "")
            self._cursor = end
        return seen

    def type(self, keys: str) -> None:
        """Type ``keys`` (``\\r`` is Enter, ``\\x03`` Ctrl+C, ``\\x04`` Ctrl+D)."""
        os.write(self._master, keys.encode())

    def shows(self, needle: str, *shown: str) -> str:
        """:meth:`expect` ``needle`` and check that the text up to it holds each of ``shown``; that text."""
        seen = self.expect(needle)
        missing = [text for text in shown if text not in seen]
        assert not missing, f"{missing!r} not shown before {needle!r}; the terminal shows:\n{seen}"
        return seen

    def enter(self, line: str, *shown: str, until: str = PROMPT) -> str:
        """Type ``line`` and Enter, then :meth:`shows` ``until`` (the next prompt) holding each of ``shown``."""
        self.type(line + "\r")
        return self.shows(until, *shown)

    def approval(self, line: str, *shown: str, answer: str = "y") -> str:
        """Type ``line`` and Enter, wait for the approval panel it brings (holding each of ``shown``), and type
        ``answer``; the panel."""
        panel = self.enter(line, *shown, until=APPROVAL_PANEL_END)
        self.type(answer + "\r")
        return panel

    def wait(self, timeout: float = TIMEOUT) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"hive did not exit; the terminal shows:\n{self.output}") from None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(TIMEOUT)
        self._reader.join(TIMEOUT)
        os.close(self._master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
