"""Issue 23: nothing git or hive trusts can be planted from the sandbox, and hive's own git runs nothing a
repository's configuration names.

The attacks run as they were found: through ``hive -p`` (or ``hive run --auto-commit``) with the scripted model and
the default rules, nothing approved, the sandbox on. The model writes a test file (``tests/**`` may be edited) and
runs it with the allowed ``pytest``; the test file plants what git would run on the host: hooks and
``core.fsmonitor`` behind a ``.git/commondir``, a rebuilt ``.git`` after renaming the real one, a ``git init``, a
``.env`` that moves hive's endpoint, ``.gitattributes`` and ``.gitmodules``. Whatever the plants would run touches a
file in a marker directory outside the project; it must stay empty after hive's ``--auto-commit`` and the user's
next ``git status``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_harness import Result
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer
from hive_core.sandbox import probe_bubblewrap

_PROBE = probe_bubblewrap()
needs_sandbox = pytest.mark.skipif(not _PROBE.usable, reason=f"no usable sandbox here: {_PROBE.problem}")

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.test",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.test",
}

# The plants, as the test file the model writes runs them. `MARKERS` is the marker directory; every plant is
# tried, and each says on its own line whether it took.
_PLANT_HEADER = """\
import os, shutil, stat, subprocess

MARKERS = {markers!r}
EVIL_CONFIG = (
    "[core]\\n\\tfsmonitor = touch " + MARKERS + "/fsmonitor; false\\n"
    "\\thooksPath = " + os.path.abspath("evil-hooks") + "\\n"
    "[filter \\"evil\\"]\\n\\tclean = touch " + MARKERS + "/filter; cat\\n"
)


def hooks():
    os.makedirs("evil-hooks", exist_ok=True)
    for name in ("pre-commit", "post-commit", "post-index-change", "reference-transaction", "post-checkout"):
        path = os.path.join("evil-hooks", name)
        with open(path, "w") as hook:
            hook.write("#!/bin/sh\\ntouch " + MARKERS + "/hook-" + name + "\\n")
        os.chmod(path, 0o755)


def attempt(name, plant):
    try:
        plant()
        print("PLANT", name, "took")
    except Exception as error:
        print("PLANT", name, "failed:", type(error).__name__, error)


def test_plants():
    hooks()
"""

COMMONDIR = """
    def plant():
        shutil.copytree(".git", "evil-common", ignore=shutil.ignore_patterns("commondir"))
        with open("evil-common/config", "a") as config:
            config.write(EVIL_CONFIG)
        with open(".git/commondir", "w") as commondir:
            commondir.write(os.path.abspath("evil-common") + "\\n")
    attempt("commondir", plant)
"""

REBUILD = """
    def plant():
        os.rename(".git", ".git-old")
        shutil.copytree(".git-old", ".git", ignore=shutil.ignore_patterns("config"))
        with open(".git/config", "w") as config:
            config.write("[core]\\n\\trepositoryformatversion = 0\\n" + EVIL_CONFIG)
    attempt("rebuild", plant)
"""

INIT = """
    def plant():
        subprocess.run(["git", "init", "-q"], check=True)
        with open(".git/config", "a") as config:
            config.write(EVIL_CONFIG)
    attempt("init", plant)

    def plant_file():
        with open(".git", "w") as gitfile:
            gitfile.write("gitdir: " + os.path.abspath("evil-hooks") + "\\n")
    attempt("gitfile", plant_file)
"""

DOTENV = """
    def plant():
        with open(".env", "w") as dotenv:
            dotenv.write("OPENAI_BASE_URL=http://evil.invalid/v1\\nOPENAI_ENDPOINT=http://evil.invalid/v1\\n")
    attempt("dotenv", plant)
"""

ATTRIBUTES = """
    def plant_attributes():
        with open(".gitattributes", "a") as attributes:
            attributes.write("* filter=evil diff=evil\\n")
    attempt("gitattributes", plant_attributes)

    def plant_modules():
        with open(".gitmodules", "w") as modules:
            modules.write('[submodule "x"]\\n\\tpath = x\\n\\turl = ./evil-hooks\\n')
    attempt("gitmodules", plant_modules)

    def plant_info():
        os.makedirs(".git/info", exist_ok=True)
        with open(".git/info/attributes", "w") as attributes:
            attributes.write("* filter=evil\\n")
    attempt("info-attributes", plant_info)
"""


def _git(ws: Workspace, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The user's own git in the project, with :data:`IDENTITY`."""
    return ws.git(*args, env=IDENTITY, check=check)


def _repository(ws: Workspace) -> None:
    (ws.project / "src").mkdir()
    (ws.project / "src" / "app.py").write_text("print('one')\n", encoding="utf-8")
    _git(ws, "init", "-q")
    _git(ws, "add", "src/app.py")
    _git(ws, "commit", "-q", "-m", "one")


def _markers(ws: Workspace) -> Path:
    markers = ws.root / "markers"
    markers.mkdir()
    return markers


def _attack(
    ws: Workspace,
    server: ScriptedModelServer,
    plants: str,
    *args: str,
    also: tuple[str, ...] = (),
) -> tuple[Result, dict[str, str]]:
    """Run ``hive args...`` (``-p`` by default) where the model writes the plants as a test file and runs it with
    ``pytest``, then runs ``also`` (commands); the result, and each command's tool output by command."""
    code = _PLANT_HEADER.format(markers=str(ws.root / "markers")) + plants
    commands = ["pytest -q -s tests/test_plant.py", *also]
    server.add(
        calls(("w1", "write_file", {"path": "tests/test_plant.py", "content": code})),
        calls(*((f"c{index}", "execute_command", {"command": line}) for index, line in enumerate(commands))),
        text("done"),
    )
    result = ws.use(server).run(*(args or ("-p", "run the tests")), timeout=180, env=IDENTITY)
    assert result.code == 0, result
    outputs: dict[str, str] = {}
    for request in model_requests(server):
        for item in input_items(request, "function_call_output"):
            outputs[str(item.get("call_id"))] = str(item.get("output"))
    reported = {command: outputs.get(f"c{index}", "") for index, command in enumerate(commands)}
    assert "PLANT" in reported[commands[0]], reported  # the plants did run
    return result, reported


def _planted(output: str) -> list[str]:
    """The plants that took, as the test file reported them."""
    return [
        line.split()[1] for line in output.splitlines() if line.startswith("PLANT") and line.endswith("took")
    ]


def _clean(markers: Path) -> None:
    assert sorted(path.name for path in markers.iterdir()) == []


@needs_sandbox
def test_a_commondir_plant_reaches_neither_auto_commit_nor_the_next_git_status(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _repository(ws)
    markers = _markers(ws)
    config_before = (ws.project / ".git" / "config").read_text()
    result, outputs = _attack(
        ws,
        server,
        COMMONDIR,
        "run",
        "--auto-commit",
        "run the tests",
        also=("git status --short", "git diff --stat", "git log --oneline"),
    )
    assert _planted(outputs["pytest -q -s tests/test_plant.py"]) == []
    assert "Read-only file system" in outputs["pytest -q -s tests/test_plant.py"]
    # git's read-only commands still work in the sandbox.
    assert outputs["git status --short"].startswith("Exit code: 0"), outputs
    assert "?? tests/" in outputs["git status --short"]
    # No placeholder of an absent guarded path shows as untracked.
    assert ".gitattributes" not in outputs["git status --short"]
    assert ".gitmodules" not in outputs["git status --short"]
    assert outputs["git log --oneline"].startswith("Exit code: 0")
    assert " one" in outputs["git log --oneline"]
    assert outputs["git diff --stat"].startswith("Exit code: 0"), outputs
    assert not (ws.project / ".git" / "commondir").exists()
    assert (ws.project / ".git" / "config").read_text() == config_before
    _git(ws, "status")
    _clean(markers)
    # hive's own file is what was committed.
    committed = _git(ws, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert committed == ["tests/test_plant.py"], result


@needs_sandbox
def test_git_cannot_be_renamed_away_and_rebuilt(ws: Workspace, server: ScriptedModelServer) -> None:
    _repository(ws)
    markers = _markers(ws)
    _, outputs = _attack(ws, server, REBUILD)
    report = outputs["pytest -q -s tests/test_plant.py"]
    assert _planted(report) == []
    assert "Device or resource busy" in report, report
    assert not (ws.project / ".git-old").exists()
    assert "fsmonitor" not in (ws.project / ".git" / "config").read_text()
    _git(ws, "status")
    _git(ws, "commit", "-q", "--allow-empty", "-m", "two")
    _clean(markers)


@needs_sandbox
def test_no_repository_can_be_made_where_there_was_none(ws: Workspace, server: ScriptedModelServer) -> None:
    markers = _markers(ws)
    _, outputs = _attack(ws, server, INIT)
    report = outputs["pytest -q -s tests/test_plant.py"]
    assert _planted(report) == [], report
    assert not (ws.project / ".git").exists()
    assert _git(ws, "status", check=False).returncode != 0  # still no repository here
    _clean(markers)


@needs_sandbox
def test_a_dotenv_cannot_be_planted(ws: Workspace, server: ScriptedModelServer) -> None:
    _, outputs = _attack(ws, server, DOTENV)
    assert _planted(outputs["pytest -q -s tests/test_plant.py"]) == []
    assert not (ws.project / ".env").exists()
    # The next run of hive still talks to the scripted server, not to the planted endpoint.
    server.add(text("still here"))
    again = ws.use(server).run("-p", "hello", env=IDENTITY)
    assert again.code == 0, again
    assert "still here" in again.stdout


@needs_sandbox
def test_attributes_and_submodules_cannot_be_planted(ws: Workspace, server: ScriptedModelServer) -> None:
    _repository(ws)
    markers = _markers(ws)
    (ws.project / ".gitattributes").write_text("*.py text\n", encoding="utf-8")
    _, outputs = _attack(ws, server, ATTRIBUTES)
    assert _planted(outputs["pytest -q -s tests/test_plant.py"]) == []
    assert (ws.project / ".gitattributes").read_text() == "*.py text\n"
    assert not (ws.project / ".gitmodules").exists()
    assert not (ws.project / ".git" / "info" / "attributes").exists()
    _git(ws, "status")
    _clean(markers)


@needs_sandbox
def test_commands_leave_no_mount_points_behind(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / ".hive").rmdir()  # the default rules, and no .hive/ either
    (ws.project / "README.md").write_text("hello\n", encoding="utf-8")
    # Two commands in one round: they may run at once, each in a sandbox of its own.
    server.add(
        calls(
            ("c1", "execute_command", {"command": "ls -A"}),
            ("c2", "execute_command", {"command": "cat README.md"}),
        ),
        text("done"),
    )
    result = ws.use(server).run("-p", "look around", "-o", "json", timeout=120)
    assert result.code == 0, result
    listing, cat = result.document()["calls"]
    assert listing["success"] is True, result
    assert cat["success"] is True, result
    # Inside, the guarded names were there (read-only); outside, nothing was left.
    assert ".git" in listing["result"]
    assert ".env" in listing["result"]
    assert sorted(path.name for path in ws.project.iterdir()) == ["README.md"]


@needs_sandbox
def test_auto_commit_leaves_out_what_hive_did_not_write_and_secrets(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _repository(ws)
    (ws.project / ".env").write_text("OPENAI_API_KEY=sk-secret\n", encoding="utf-8")
    (ws.project / "secrets").mkdir()
    (ws.project / "secrets" / "key.txt").write_text("secret\n", encoding="utf-8")
    server.add(
        calls(
            ("w1", "edit_file", {"path": "src/app.py", "old_text": "one", "new_text": "two"}),
            ("w2", "write_file", {"path": "src/new.py", "content": "print('new')\n"}),
        ),
        calls(("c1", "execute_command", {"command": "pytest -q -s tests/test_made.py"})),
        text("done"),
    )
    (ws.project / "tests").mkdir()
    # A command's output (written in the sandbox, not by hive's tools) is left out too.
    (ws.project / "tests" / "test_made.py").write_text(
        "def test_made():\n    open('src/made_by_a_command.py', 'w').write('x = 1\\n')\n", encoding="utf-8"
    )
    _git(ws, "add", "tests/test_made.py")
    _git(ws, "commit", "-q", "-m", "tests")
    result = ws.use(server).run("run", "--auto-commit", "change the app", timeout=120, env=IDENTITY)
    assert result.code == 0, result
    assert (ws.project / "src" / "made_by_a_command.py").exists()
    committed = _git(ws, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert sorted(committed) == ["src/app.py", "src/new.py"], result
    (line,) = [line for line in result.stderr.splitlines() if "left out" in line]
    assert line.startswith("hive: --auto-commit: left out ")
    for path in (".env", "secrets/key.txt", "src/made_by_a_command.py"):
        assert path in line
    status = _git(ws, "status", "--porcelain", "--untracked-files=all").stdout
    for path in (".env", "secrets/key.txt", "src/made_by_a_command.py"):
        assert f"?? {path}" in status


def _arm(ws: Workspace, markers: Path) -> None:
    """Write, from outside any sandbox, a repository configuration that runs programs: hooks, fsmonitor, a
    clean filter and a diff driver for every file, commit signing through a planted program."""
    hooks = ws.root / "evil-hooks"
    hooks.mkdir()
    for name in ("pre-commit", "commit-msg", "post-commit", "post-index-change", "reference-transaction"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {markers}/hook-{name}\n", encoding="utf-8")
        hook.chmod(0o755)
        (ws.project / ".git" / "hooks" / name).write_text(hook.read_text(), encoding="utf-8")
        (ws.project / ".git" / "hooks" / name).chmod(0o755)
    signer = ws.root / "sign"
    signer.write_text(f"#!/bin/sh\ntouch {markers}/gpg\nexit 1\n", encoding="utf-8")
    signer.chmod(0o755)
    included = ws.root / "included.cfg"
    included.write_text(f'[filter "inc"]\n\tclean = touch {markers}/included; cat\n', encoding="utf-8")
    with (ws.project / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write(
            f"[core]\n\tfsmonitor = touch {markers}/fsmonitor; false\n\thooksPath = {hooks}\n"
            f"\tpager = touch {markers}/pager; cat\n"
            f'[filter "evil"]\n\tclean = touch {markers}/filter; cat\n\tprocess = touch {markers}/process\n'
            "\trequired = true\n"
            f'[diff "evil"]\n\ttextconv = touch {markers}/textconv; cat\n'
            f"[diff]\n\texternal = touch {markers}/external-diff\n"
            f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {signer}\n"
            f"[include]\n\tpath = {included}\n"
        )
    (ws.project / ".git" / "info").mkdir(exist_ok=True)
    (ws.project / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n*.md filter=inc\n")


def test_hive_s_own_git_runs_nothing_the_repository_configures(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _repository(ws)
    markers = _markers(ws)
    _arm(ws, markers)
    server.add(
        calls(
            ("w1", "write_file", {"path": "src/new.py", "content": "print('new')\n"}),
            ("w2", "write_file", {"path": "src/notes.md", "content": "notes\n"}),
        ),
        text("done"),
    )
    environment = {**IDENTITY, "GIT_DIR": str(ws.root / "elsewhere"), "GIT_CONFIG_PARAMETERS": "'core.x=y'"}
    result = ws.use(server).run("run", "--auto-commit", "add a file", timeout=120, env=environment)
    assert result.code == 0, result
    assert "failed" not in result.stderr, result
    doctor = ws.run("doctor", env=environment)
    assert "the project is a git repository" in doctor.stdout, doctor
    _clean(markers)

    def inert_git(*args: str) -> str:
        return _git(ws, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *args).stdout

    # The commit is there, unsigned, with the file as written (no filter ran on it).
    log = inert_git("log", "-1", "--format=%s %G?")
    assert log.startswith("hive: add a file"), log
    shown = inert_git("show", "HEAD:src/new.py")
    assert shown == "print('new')\n"
