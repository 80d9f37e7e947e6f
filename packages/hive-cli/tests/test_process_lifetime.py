"""Every process hive starts dies with hive, whatever kills it; SIGINT and SIGTERM end the running turn cleanly.

Each test starts ``hive -p`` or ``hive run --server``, lets the scripted model start a command that leaves
processes in the background (one of them in a session of its own) or call an MCP tool whose server has started a
child of its own (in a new session too), walks hive's process tree in ``/proc``, sends hive SIGKILL, SIGTERM or
SIGINT, and checks that every process of that tree is gone: killed by hive on its way out, or by its watchdog
when hive could not. A process that outlives a failing test is killed at teardown.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Final

import pytest
from cli_harness import Proc
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text
from cli_harness import wait_until

from hive_conformance.model_server import ScriptedModelServer
from hive_protocol import verify

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="walks the process tree in /proc"),
]

COMMAND: Final = "sleep 300 & setsid sleep 301 & sleep 302"
"""Three sleeps: one in the background, one in a session of its own (out of the command's process group)."""

MCP_SERVER: Final = textwrap.dedent(
    '''
    """An MCP server whose one tool starts a child in a new session and then blocks."""

    import subprocess
    import sys
    from pathlib import Path

    import anyio
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("lifetime", log_level="WARNING")


    @server.tool()
    async def block(marker: str) -> str:
        """Start a child that leaves the session, say so in the marker file, and wait."""
        child = subprocess.Popen(["sleep", "303"], start_new_session=True)
        Path(marker).write_text(str(child.pid), encoding="utf-8")
        await anyio.sleep(300)
        return "woke up"


    server.run(sys.argv[1])
    '''
)

ACTIVITIES: Final = ("command", "unsandboxed", "mcp")
"""What runs when the signal comes: a command (in the sandbox where the machine has one), a command with the
sandbox off, an MCP call."""

_SIGNALS: Final = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT}


# -- the process tree ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """A process as ``/proc`` shows it: its id, its parent, its start time (which tells a reused pid apart)."""

    pid: int
    ppid: int
    start: int
    state: str
    command: str


def _task(pid: int) -> Task | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return Task(pid, int(fields[1]), int(fields[19]), fields[0], command.strip())


def _all_tasks() -> list[Task]:
    found = (_task(int(name)) for name in os.listdir("/proc") if name.isdigit())
    return [task for task in found if task is not None]


def descendants(root: int) -> list[Task]:
    """Every live descendant of ``root``, however deep."""
    tasks = _all_tasks()
    children: dict[int, list[Task]] = {}
    for task in tasks:
        children.setdefault(task.ppid, []).append(task)
    found: list[Task] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child.state != "Z":
                found.append(child)
                todo.append(child.pid)
    return found


def alive(task: Task) -> bool:
    """Whether this very process (not a later one with its pid) still runs; a zombie counts as gone."""
    now = _task(task.pid)
    return now is not None and now.start == task.start and now.state != "Z"


class Reaper:
    """The processes a test saw; any still running at teardown is killed, so a failure leaves nothing behind."""

    def __init__(self) -> None:
        self.seen: dict[int, Task] = {}

    def note(self, tasks: list[Task]) -> list[Task]:
        for task in tasks:
            self.seen[task.pid] = task
        return tasks

    def survivors(self) -> list[Task]:
        return [task for task in self.seen.values() if alive(task)]

    def kill_survivors(self) -> None:
        for task in self.survivors():
            with contextlib.suppress(OSError):
                os.kill(task.pid, signal.SIGKILL)


@pytest.fixture
def reaper() -> Iterator[Reaper]:
    reaping = Reaper()
    try:
        yield reaping
    finally:
        reaping.kill_survivors()


def _sleeps(tasks: list[Task], *seconds: int) -> bool:
    running = {task.command for task in tasks}
    return all(f"sleep {n}" in running for n in seconds)


# -- the scenarios ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Busy:
    """What runs when the signal comes: the activity (one of :data:`ACTIVITIES`), the sleeps it leaves running and
    the MCP marker file."""

    activity: str
    sleeps: tuple[int, ...]
    marker: Path


def _prepare(ws: Workspace, server: ScriptedModelServer, activity: str) -> Busy:
    """Script the model's call for ``activity``."""
    ws.use(server).allow_all()
    marker = ws.root / "mcp-child.pid"
    if activity == "unsandboxed":
        (ws.project / ".hive" / "config.yaml").write_text('sandbox:\n  mode: "off"\n', encoding="utf-8")
    if activity in ("command", "unsandboxed"):
        server.add(
            calls(("c1", "execute_command", {"command": COMMAND, "timeout_ms": 600_000})), text("Done.")
        )
        return Busy(activity, (300, 301, 302), marker)
    script = ws.root / "lifetime_server.py"
    script.write_text(MCP_SERVER, encoding="utf-8")
    plugins = {
        "plugins": [{"name": "lifetime", "command": sys.executable, "arguments": [str(script), "stdio"]}]
    }
    (ws.project / ".hive" / "plugins.yaml").write_text(json.dumps(plugins), encoding="utf-8")
    server.add(calls(("c1", "mcp__lifetime__block", {"marker": str(marker)})), text("Done."))
    return Busy(activity, (303,), marker)


@pytest.fixture(params=ACTIVITIES)
def busy(request: pytest.FixtureRequest, ws: Workspace, server: ScriptedModelServer) -> Busy:
    """The model's call scripted for each activity in turn."""
    activity: str = request.param
    return _prepare(ws, server, activity)


@pytest.fixture(params=list(_SIGNALS))
def signum(request: pytest.FixtureRequest) -> signal.Signals:
    """Each signal that ends hive in turn."""
    name: str = request.param
    return _SIGNALS[name]


def _wait_busy(proc: Proc, reaper: Reaper, busy: Busy) -> list[Task]:
    """Wait until the call is under way (its processes all started); return hive's process tree then."""
    pid = proc.process.pid

    def running() -> list[Task] | None:
        if proc.process.poll() is not None:
            raise AssertionError(f"hive exited early ({proc.process.returncode}); stderr:\n{proc.stderr}")
        tree = reaper.note(descendants(pid))
        # The MCP server's child left the server's session: not a descendant of hive any more once its parent
        # dies, but still one now.
        if busy.activity == "mcp" and not busy.marker.exists():
            return None
        return tree if _sleeps(tree, *busy.sleeps) else None

    tree = wait_until(running, what=f"the {busy.activity} to be running")
    assert tree is not None
    assert any("_watchdog.py" in task.command for task in tree), tree  # started with the first child
    return tree


def _assert_all_gone(reaper: Reaper, tree: list[Task]) -> None:
    def gone() -> bool:
        return not reaper.survivors()

    try:
        wait_until(gone, timeout=20, what="every process hive started to be gone")
    except AssertionError:
        raise AssertionError(f"still running: {reaper.survivors()}\nthe tree was: {tree}") from None


def _stopped_by(signum: int, proc: Proc, reaper: Reaper, busy: Busy) -> bool:
    """Send ``signum`` to hive once the activity ``busy`` runs: every process hive started must be gone and hive
    must exit as the signal says (killed by SIGKILL, else with 128 + its number). Whether hive ended by itself
    (anything but SIGKILL)."""
    tree = _wait_busy(proc, reaper, busy)
    proc.signal(signum)
    code = proc.wait()
    _assert_all_gone(reaper, tree)
    if signum == signal.SIGKILL:
        assert code == -signal.SIGKILL
        return False
    assert code == 128 + signum, proc.stderr
    return True


def test_one_shot_leaves_no_process_behind(ws: Workspace, reaper: Reaper, busy: Busy, signum: int) -> None:
    with ws.start("-p", "run the thing", "-o", "json") as proc:
        proc.close_stdin()  # nothing is piped in: -p need not wait for it
        if not _stopped_by(signum, proc, reaper, busy):
            return
    doc = json.loads(proc.stdout)
    assert (doc["error"], doc["stop_reason"], doc["exit_code"]) == ("cancelled", "cancelled", 128 + signum), (
        doc
    )


def test_server_leaves_no_process_behind_and_ends_the_turn(
    ws: Workspace, server: ScriptedModelServer, reaper: Reaper, busy: Busy, signum: int
) -> None:
    with ws.serve("--session-id", "lifetime-1") as proc:
        proc.send({"type": "user_message", "content": "run the thing"})
        # Queued behind the running turn: a signal ends the session, so this one never starts.
        proc.send({"type": "user_message", "content": "and then this"})
        if not _stopped_by(signum, proc, reaper, busy):
            return
    events: list[dict[str, Any]] = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["type"] for e in events] == ["session_started", "tool_start", "tool_end", "turn_end"], events
    assert events[-1]["stop_reason"] == "cancelled"
    assert events[2]["success"] is False
    assert verify(proc.stdout.encode().splitlines(keepends=True)) == []
    assert len([r for r in server.requests if r.endpoint == "openai_responses"]) == 1


def test_a_second_sigint_leaves_at_once_and_still_kills_the_children(
    ws: Workspace, server: ScriptedModelServer, reaper: Reaper
) -> None:
    busy = _prepare(ws, server, "mcp")
    with ws.serve() as proc:
        proc.send({"type": "user_message", "content": "run the thing"})
        tree = _wait_busy(proc, reaper, busy)
        proc.signal(signal.SIGINT)
        proc.signal(signal.SIGINT)
        code = proc.wait()
    _assert_all_gone(reaper, tree)
    assert code == 130, proc.stderr


def test_an_idle_server_exits_on_sigterm(ws: Workspace, server: ScriptedModelServer) -> None:
    with ws.use(server).serve() as proc:
        proc.signal(signal.SIGTERM)
        assert proc.wait() == 143, proc.stderr
    assert [json.loads(line)["type"] for line in proc.stdout.splitlines()] == ["session_started"]


def test_what_a_command_leaves_outside_its_group_dies_when_the_call_ends(
    ws: Workspace, server: ScriptedModelServer, reaper: Reaper
) -> None:
    ws.use(server).allow_all().sandbox_off()
    leave = "import subprocess; print(subprocess.Popen(['sleep', '304'], start_new_session=True).pid)"
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(leave)}"
    server.add(calls(("c1", "execute_command", {"command": command})), text("Started."))
    with ws.serve() as proc:
        assert proc.turn("start it")[-1]["stop_reason"] == "completed"
        [output] = input_items(model_requests(server)[1], "function_call_output")
        pid = int(output["output"].split("Output:\n")[1].split()[0])
        task = _task(pid)
        if task is not None and task.state != "Z":  # else it is dead already
            assert task.command == "sleep 304", task  # the one the command left, not a reused pid
            reaper.note([task])
            # hive still runs: the end of the call killed it, not the end of hive.
            wait_until(lambda: not alive(task), timeout=20, what=f"process {pid} to be gone")
        assert proc.process.poll() is None
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
