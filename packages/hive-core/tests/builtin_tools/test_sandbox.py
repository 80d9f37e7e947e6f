"""execute_command in the bubblewrap sandbox, for real: what a command can write, read, reach and leave behind.

Each property is checked against the same command run with ``sandbox.mode: off``, which must succeed where the
sandbox stops it, so no check passes for a reason other than the sandbox. The places a command must not touch
are made outside ``/tmp`` (the sandbox's ``/tmp`` is private anyway), so that only the read-only view can stop
the write and only the hiding can stop the read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest

from hive_core.builtin_tools import execute_command_tool
from hive_core.sandbox import SandboxMode
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import SandboxUnavailable
from hive_core.sandbox import probe_bubblewrap

if TYPE_CHECKING:
    from .conftest import Project

pytestmark = pytest.mark.anyio

_PROBE = probe_bubblewrap()
needs_sandbox = pytest.mark.skipif(
    not _PROBE.usable, reason=f"no usable bubblewrap sandbox on this machine: {_PROBE.problem}"
)

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- hive-test-key-material"
NETRC = "machine example.com login me password hive-test-netrc-password"
HOME_CONFIG = "openai:\n  apiKey: sk-hive-test-home-config\n"


class Outside:
    """Places outside the project: a fake user home with credentials, a hive home, a directory elsewhere."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.hive_home = root / "hive-home"
        self.elsewhere = root / "elsewhere"
        for directory in (self.home / ".ssh", self.hive_home, self.elsewhere):
            directory.mkdir(parents=True)
        (self.home / ".ssh" / "id_rsa").write_text(PRIVATE_KEY)
        (self.home / ".netrc").write_text(NETRC)
        (self.hive_home / "config.yaml").write_text(HOME_CONFIG)


@pytest.fixture
def outside(monkeypatch: pytest.MonkeyPatch) -> Iterator[Outside]:
    parent = Path("/var/tmp")
    if not (parent.is_dir() and os.access(parent, os.W_OK)):
        pytest.skip("needs a writable /var/tmp, outside the sandbox's private /tmp")
    root = Path(tempfile.mkdtemp(prefix="hive-sandbox-test-", dir=parent))
    try:
        places = Outside(root)
        monkeypatch.setenv("HOME", str(places.home))
        monkeypatch.setenv("HIVE_HOME", str(places.hive_home))
        yield places
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def run(
    project: Project, command: str, mode: SandboxMode = "workspace-write", **settings: object
) -> str:
    tool = execute_command_tool(SandboxSettings(mode=mode, **settings))  # type: ignore[arg-type]
    return await project.call(tool, command=command)


CONFINED_AND_NOT = pytest.mark.parametrize(
    "mode", [pytest.param("workspace-write", marks=needs_sandbox), "off"]
)


# -- the file system ---------------------------------------------------------------------------------------------


@CONFINED_AND_NOT
async def test_only_the_project_is_writable(project: Project, outside: Outside, mode: SandboxMode) -> None:
    command = f'touch {outside.elsewhere}/written; touch "$HOME/written"; echo kept > inside.txt; echo done'
    reply = await run(project, command, mode)
    assert reply.startswith("Exit code: 0\nOutput:\ndone"), reply
    assert (project.root / "inside.txt").read_text() == "kept\n"
    confined = mode != "off"
    assert (outside.elsewhere / "written").exists() is not confined
    assert (outside.home / "written").exists() is not confined
    assert ("Read-only file system" in reply) is confined


@CONFINED_AND_NOT
async def test_credentials_and_the_hive_home_are_hidden(
    project: Project, outside: Outside, mode: SandboxMode
) -> None:
    command = (
        f"cat ~/.ssh/id_rsa; cat ~/.netrc; cat {outside.hive_home}/config.yaml; ls -A ~/.ssh | sed s/^/in:/"
    )
    reply = await run(project, command, mode)
    for secret in (PRIVATE_KEY, NETRC, "sk-hive-test-home-config", "in:id_rsa"):
        assert (secret in reply) is (mode == "off"), reply


@needs_sandbox
async def test_a_dangling_link_where_a_store_would_be_breaks_nothing(
    project: Project, outside: Outside
) -> None:
    (outside.home / ".aws").symlink_to(outside.root / "missing")
    assert await run(project, "echo ran") == "Exit code: 0\nOutput:\nran"


@needs_sandbox
async def test_root_cannot_undo_the_sandbox_from_inside(project: Project, outside: Outside) -> None:
    # Run as root, a command would keep root's capabilities unless the sandbox drops them: it could unmount what
    # hides a store, or remount the file system writable.
    command = (
        f"umount {outside.home}/.ssh; cat {outside.home}/.ssh/id_rsa; mount -o remount,rw /; "
        f"mount -o remount,rw,bind {outside.root}; touch {outside.elsewhere}/written; echo done"
    )
    reply = await run(project, command)
    assert "done" in reply
    assert PRIVATE_KEY not in reply
    assert not (outside.elsewhere / "written").exists()


@needs_sandbox
async def test_read_only_mode_keeps_the_project_read_only_and_tmp_private(project: Project) -> None:
    scratch = Path(tempfile.gettempdir()) / f"hive-sandbox-scratch-{uuid.uuid4().hex}"
    command = f"touch inside.txt; touch {scratch} && echo tmp-writable"
    reply = await run(project, command, "read-only")
    assert "Read-only file system" in reply
    assert "tmp-writable" in reply
    assert not (project.root / "inside.txt").exists()
    assert not scratch.exists()


@CONFINED_AND_NOT
async def test_what_hive_and_git_read_stays_read_only(project: Project, mode: SandboxMode) -> None:
    rules = project.write(".hive/permissions.yaml", "default_action: ask\n")
    git_config = project.write(".git/config", "[core]\n")
    dotenv = project.write(".env", "APP_PORT=8080\n")
    (project.root / ".git" / "hooks").mkdir()
    command = (
        "echo 'default_action: allow' > .hive/permissions.yaml; echo '  fsmonitor = evil' >> .git/config; "
        "echo evil > .git/hooks/post-checkout; echo OPENAI_ENDPOINT=http://evil >> .env; echo code > main.py; "
        "echo done"
    )
    reply = await run(project, command, mode)
    assert "done" in reply
    assert (project.root / "main.py").read_text() == "code\n"
    changed = mode == "off"
    assert (rules.read_text() == "default_action: allow\n") is changed
    assert ("evil" in git_config.read_text()) is changed
    assert ("evil" in dotenv.read_text()) is changed
    assert (project.root / ".git" / "hooks" / "post-checkout").exists() is changed


@CONFINED_AND_NOT
async def test_no_rules_or_hooks_can_be_created_either(project: Project, mode: SandboxMode) -> None:
    (project.root / ".git").mkdir()
    command = (
        "mkdir -p .hive .git/hooks; echo 'default_action: allow' > .hive/permissions.yaml; "
        "echo evil > .git/hooks/pre-commit; echo done"
    )
    assert "done" in await run(project, command, mode)
    created = mode == "off"
    assert (project.root / ".hive" / "permissions.yaml").exists() is created
    assert (project.root / ".git" / "hooks" / "pre-commit").exists() is created


@needs_sandbox
async def test_writable_paths_are_writable_in_workspace_write_only(
    project: Project, outside: Outside
) -> None:
    cache = outside.root / "cache"
    cache.mkdir()
    command = f"touch {cache}/entry && echo wrote"
    assert "wrote" in await run(project, command, writable_paths=(cache,))
    assert (cache / "entry").exists()
    (cache / "entry").unlink()
    assert "wrote" not in await run(project, command, "read-only", writable_paths=(cache,))
    assert not (cache / "entry").exists()


@needs_sandbox
async def test_a_hidden_directory_holding_the_project_leaves_the_project_seen(tmp_path: Path) -> None:
    from .conftest import Project

    home = tmp_path / "hive-home"
    (home / "secrets").mkdir(parents=True)
    (home / "secrets" / "key.txt").write_text("hidden-key")
    inside = Project(home / "work")
    inside.root.mkdir()
    inside.write("a.txt", "visible")
    reply = await run(inside, f"cat a.txt; echo; cat {home}/secrets/key.txt", hive_home=home)
    assert "visible" in reply
    assert "hidden-key" not in reply


# -- the network ---------------------------------------------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections (the kernel completes them; nothing needs to answer)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield int(server.getsockname()[1])


@pytest.mark.parametrize(
    ("mode", "network", "connects"),
    [
        pytest.param("workspace-write", False, False, marks=needs_sandbox),
        pytest.param("workspace-write", True, True, marks=needs_sandbox),
        ("off", False, True),
    ],
)
async def test_no_network_unless_allowed(
    project: Project, listener: int, mode: SandboxMode, network: bool, connects: bool
) -> None:
    script = (
        f"import socket; socket.create_connection(('127.0.0.1', {listener}), timeout=5); print('connected')"
    )
    reply = await run(project, f'{sys.executable} -c "{script}"', mode, network_access=network)
    assert ("connected" in reply) is connects, reply


# -- processes -----------------------------------------------------------------------------------------------------


def processes_named(marker: str) -> list[int]:
    """The host's processes whose command line starts with ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "cmdline").read_bytes().startswith(marker.encode()):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def wait_for(condition: object, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not callable(condition) or not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting until {what}")
        time.sleep(0.02)


def kill_all(marker: str) -> None:
    for pid in processes_named(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def marker() -> Iterator[str]:
    name = f"hive-sandbox-marker-{uuid.uuid4().hex}"
    yield name
    kill_all(name)


@CONFINED_AND_NOT
async def test_a_process_that_leaves_its_group_and_environment_dies_with_the_call(
    project: Project, marker: str, mode: SandboxMode
) -> None:
    # setsid leaves the command's process group and env -i drops hive's owner marker: all an unconfined call
    # could find its processes by. The sandbox's pid namespace holds it; unconfined, the subreaper the command
    # runs under does.
    command = (
        f"setsid env -i \"$(command -v bash)\" -c 'touch moved; exec -a {marker} sleep 30' >/dev/null 2>&1 & "
        "for _ in $(seq 500); do [ -e moved ] && break; sleep 0.01; done; echo started"
    )
    assert await run(project, command, mode) == "Exit code: 0\nOutput:\nstarted"
    wait_for(lambda: not processes_named(marker), "the command's tree is gone")


@CONFINED_AND_NOT
async def test_a_timeout_ends_the_whole_tree(project: Project, marker: str, mode: SandboxMode) -> None:
    command = (
        f"echo started; (exec -a {marker} sleep 30) & "
        f"setsid env -i \"$(command -v bash)\" -c 'exec -a {marker} sleep 30' >/dev/null 2>&1 & wait"
    )
    tool = execute_command_tool(SandboxSettings(mode=mode))
    with anyio.fail_after(10), pytest.raises(TimeoutError) as caught:
        await project.call(tool, command=command, timeout_ms=1000)
    assert str(caught.value).endswith("\nOutput so far:\nstarted")
    wait_for(lambda: not processes_named(marker), "the command's tree is gone")


@needs_sandbox
async def test_a_signal_shows_as_the_shell_s_exit_code(project: Project) -> None:
    # bubblewrap reports a command killed by signal N as exit code 128 + N, as a shell does.
    assert await run(project, "kill -TERM $$") == "Exit code: 143"


_HOST = """
import sys
from pathlib import Path

import anyio

from hive_core.builtin_tools import execute_command_tool
from hive_core.sandbox import SandboxSettings
from hive_core.tools import ToolContext

tool = execute_command_tool(SandboxSettings(mode=sys.argv[1]))
context = ToolContext("c1", "execute_command", Path(sys.argv[2]), lambda event: None)
outcome = anyio.run(tool.invoke, {"command": sys.argv[3], "timeout_ms": 60_000}, context)
print(outcome.content, flush=True)
"""
"""A host in a process of its own: runs one command with the mode given and prints what the model would read."""


def host(mode: SandboxMode, project: Project, command: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _HOST, mode, str(project.root), command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


@CONFINED_AND_NOT
def test_hive_s_environment_cannot_be_read_through_proc(project: Project, mode: SandboxMode) -> None:
    secret = f"sk-hive-proc-{uuid.uuid4().hex}"
    command = "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c hive-proc-; true"
    process = host(mode, project, command, OPENAI_API_KEY=secret)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    count = int(out.strip().rsplit("\n", 1)[-1])
    # Unconfined, a command reads its host's environment (the key) in /proc; in the sandbox's pid namespace
    # there is no host process to read.
    assert (count > 0) is (mode == "off"), out


# -- no sandbox -------------------------------------------------------------------------------------------------


@pytest.fixture
def broken_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``bwrap`` first on PATH that fails as it does where namespaces are not allowed."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "bwrap"
    program.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "bubblewrap 0.0.1"; exit 0; fi\n'
        'echo "bwrap: No permissions to create new namespace" >&2\n'
        "exit 1\n"
    )
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return program


@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
async def test_a_mode_that_needs_a_sandbox_refuses_without_one(
    project: Project, broken_bwrap: Path, mode: SandboxMode
) -> None:
    with pytest.raises(SandboxUnavailable) as caught:
        await run(project, "touch ran", mode)
    message = str(caught.value)
    assert message.startswith(f"sandbox.mode is {mode}, but bubblewrap"), message
    assert "No permissions to create new namespace" in message
    assert "apt install bubblewrap" in message or sys.platform != "linux"
    assert "sandbox.mode: off" in message
    assert not (project.root / "ran").exists()


async def test_auto_runs_unconfined_without_a_sandbox(
    project: Project, outside: Outside, broken_bwrap: Path
) -> None:
    reply = await run(project, f"touch {outside.elsewhere}/written; echo ran", "auto")
    assert reply == "Exit code: 0\nOutput:\nran"
    assert (outside.elsewhere / "written").exists()


@needs_sandbox
async def test_auto_sandboxes_where_it_can(project: Project, outside: Outside) -> None:
    reply = await run(project, f"touch {outside.elsewhere}/written; echo ran", "auto")
    assert "Read-only file system" in reply
    assert not (outside.elsewhere / "written").exists()


# -- the host's /tmp ---------------------------------------------------------------------------------------------


@pytest.fixture
def tool_in_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory in the host's /tmp holding a program on PATH (``bin/hive-probe-tool``) and a note beside it."""
    root = Path(tempfile.mkdtemp(prefix="hive-sandbox-tool-", dir="/tmp"))
    try:
        (root / "bin").mkdir()
        program = root / "bin" / "hive-probe-tool"
        program.write_text("#!/bin/sh\necho probe-ran\n")
        program.chmod(0o755)
        (root / "note.txt").write_text("hive-test-tmp-note")
        monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@CONFINED_AND_NOT
async def test_programs_on_path_under_tmp_stay_runnable_and_the_rest_of_tmp_private(
    project: Project, tool_in_tmp: Path, mode: SandboxMode
) -> None:
    command = f"hive-probe-tool; cat {tool_in_tmp}/note.txt; touch {tool_in_tmp}/bin/added"
    reply = await run(project, command, mode)
    assert "probe-ran" in reply, reply
    confined = mode != "off"
    assert ("hive-test-tmp-note" in reply) is not confined, reply
    assert (tool_in_tmp / "bin" / "added").exists() is not confined
