"""Installing hive as a new user does: the workspace's wheels built, ``hive-agent-host`` installed into an
environment of its own the way pipx does (``uv tool install``, from those wheels and the package index for
third-party packages only), and its ``hive -p`` answering from the local model with no key and an empty home; the
CLI alone (``hive-agent-cli``) installed into a fresh virtual environment says in one line what brings the local
model; the CLI alone installed with pipx itself knows it and would upgrade itself with pipx.

Slow: the first install on a machine compiles llama-cpp-python (minutes); later ones take it from uv's cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

import pytest
from cli_fake_index import fake_index
from cli_harness import LOCAL_PROMPT

from hive_providers import CONFIG_SCHEMA

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
_TOOLS = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
UV = shutil.which("uv", path=_TOOLS)
PIPX = shutil.which("pipx", path=_TOOLS)
INSTALL_TIMEOUT = 1800.0
"""Seconds an install may take: a first one compiles llama.cpp."""
RUN_TIMEOUT = 120.0

if UV is None:
    pytest.skip("needs uv to build and install the wheels", allow_module_level=True)
UV_CACHE = subprocess.run(
    [UV, "cache", "dir"], capture_output=True, text=True, check=True, timeout=60
).stdout.strip()


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A new user's environment: no provider variable, no hive home yet, nothing of the workspace's venv."""
    drop = {v.name for v in CONFIG_SCHEMA.environment} | {
        "VIRTUAL_ENV",
        "HIVE_HOME",
        "PYTHONPATH",
        "UV_PROJECT",
    }
    env = {
        name: value for name, value in os.environ.items() if name not in drop and not name.startswith("HIVE_")
    }
    # uv's cache stays the developer's (it finds it under HOME otherwise): the one holding llama-cpp-python built.
    env.update(HOME=str(home), UV_CACHE_DIR=UV_CACHE, UV_PYTHON_DOWNLOADS="never", **extra)
    return env


def run(
    command: list[str], env: Mapping[str, str], cwd: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def install(command: list[str], env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` (a uv install) offline first, then with the index: offline, uv reuses the llama-cpp-python it
    built before, where a fresh look at the index makes it build the same wheel again (minutes) whenever the
    index's cache entry has expired. A machine with nothing cached gets everything from the index."""
    offline = run([*command, "--offline"], env, cwd, INSTALL_TIMEOUT)
    return offline if offline.returncode == 0 else run(command, env, cwd, INSTALL_TIMEOUT)


def no_index_configured(**chosen: str) -> dict[str, str]:
    """Variables that leave ``hive update`` only the index ``chosen`` names (none of pip's files, no extras)."""
    names = (
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "UV_INDEX_URL",
        "UV_DEFAULT_INDEX",
        "UV_EXTRA_INDEX_URL",
        "UV_INDEX",
    )
    return {**dict.fromkeys(names, ""), "PIP_CONFIG_FILE": os.devnull, **chosen}


def developer_pip_config() -> dict[str, str]:
    """``PIP_CONFIG_FILE`` naming the developer's own pip configuration (its index), which the new user's HOME
    would hide; nothing when pip is not configured per user (or ``PIP_CONFIG_FILE`` already says)."""
    if os.environ.get("PIP_CONFIG_FILE"):
        return {}
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    for path in (config_home / "pip" / "pip.conf", Path.home() / ".pip" / "pip.conf"):
        if path.is_file():
            return {"PIP_CONFIG_FILE": str(path)}
    return {}


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheels of every workspace distribution, built from this checkout."""
    out = tmp_path_factory.mktemp("wheels")
    assert UV is not None
    built = run([UV, "build", "--all-packages", "--wheel", "--out-dir", str(out)], os.environ, ROOT, 600)
    assert built.returncode == 0, built.stderr
    names = sorted(path.name.split("-")[0] for path in out.glob("*.whl"))
    assert {"hive_agent_cli", "hive_agent_host", "hive_providers"} <= set(names), names
    return out


@pytest.fixture
def user(tmp_path: Path) -> Path:
    """``<tmp>/user``: the home directory of the user who installs hive."""
    (tmp_path / "user").mkdir()
    return tmp_path / "user"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``<tmp>/project``: the project the installed ``hive`` runs in."""
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


def test_hive_agent_host_installed_like_pipx_answers_from_the_local_model(
    wheels: Path, tmp_path: Path, user: Path, project: Path
) -> None:
    assert UV is not None
    env = user_env(user, UV_TOOL_DIR=str(tmp_path / "tools"), UV_TOOL_BIN_DIR=str(tmp_path / "bin"))
    installed = install(
        [UV, "tool", "install", "--python", sys.executable, "--find-links", str(wheels), "hive-agent-host"],
        env,
        project,
    )
    assert installed.returncode == 0, installed.stderr
    hive = tmp_path / "bin" / "hive"
    assert hive.exists(), installed.stderr

    answered = run([str(hive), "-p", LOCAL_PROMPT, "-o", "json"], env, project, RUN_TIMEOUT)
    assert answered.returncode == 0, answered.stderr
    document = json.loads(answered.stdout)
    assert document["content"].strip(), document
    assert document["usage"]["input_tokens"] > 0, document
    assert (user / ".hive").is_dir()  # the default home, created by the run

    doctor = run([str(hive), "doctor"], env, project, RUN_TIMEOUT)
    assert "✓ Using local inference only" in doctor.stdout, doctor.stdout
    assert "✗" not in doctor.stdout, doctor.stdout

    # The installed hive knows it was installed by `uv tool`, asks the index about hive-agent-host, and would
    # upgrade itself with uv.
    with fake_index() as index:
        index.files["hive-agent-host"] = [
            "hive_agent_host-0.1.0-py3-none-any.whl",
            "hive_agent_host-99.0.0.tar.gz",
        ]
        variables = no_index_configured(UV_INDEX_URL=index.url)
        update = run([str(hive), "update", "--dry-run"], {**env, **variables}, project, RUN_TIMEOUT)
    assert update.returncode == 0, update
    assert update.stdout == (
        "hive-agent-host 99.0.0 is available (you have 0.1.0).\nwould run: uv tool upgrade hive-agent-host\n"
    )
    unreachable = {**variables, "UV_INDEX_URL": f"http://127.0.0.1:{closed_port()}/simple"}
    offline = run([str(hive), "update", "--check"], {**env, **unreachable}, project, RUN_TIMEOUT)
    assert offline.returncode == 1, offline
    assert "could not check for updates" in offline.stderr


def test_the_cli_alone_says_in_one_line_what_brings_the_local_model(
    wheels: Path, tmp_path: Path, user: Path, project: Path
) -> None:
    assert UV is not None
    env = user_env(user)
    venv = tmp_path / "venv"
    created = run([UV, "venv", "--python", sys.executable, str(venv)], env, project, RUN_TIMEOUT)
    assert created.returncode == 0, created.stderr
    python = venv / "bin" / "python"
    installed = install(
        [UV, "pip", "install", "--python", str(python), "--find-links", str(wheels), "hive-agent-cli"],
        env,
        project,
    )
    assert installed.returncode == 0, installed.stderr
    assert not list(venv.glob("lib/python*/site-packages/llama_cpp"))  # cloud models only: nothing to compile
    hive = venv / "bin" / "hive"

    asked = run([str(hive), "-p", "hi"], env, project, RUN_TIMEOUT)
    assert asked.returncode != 0, asked
    assert asked.stdout == ""
    assert asked.stderr.count("\n") == 1, asked.stderr
    assert "hive-agent-host" in asked.stderr
    assert f"`uv pip install --python {python} hive-agent-host`" in asked.stderr

    doctor = run([str(hive), "doctor"], env, project, RUN_TIMEOUT)
    assert "hive-agent-host" in doctor.stdout, doctor.stdout
    assert doctor.returncode != 0 or "✗" in doctor.stdout, doctor.stdout


@pytest.mark.skipif(PIPX is None, reason="needs pipx (the dev group's)")
def test_the_cli_installed_with_pipx_would_upgrade_itself_with_pipx(
    wheels: Path, tmp_path: Path, user: Path, project: Path
) -> None:
    assert PIPX is not None
    pipx_home = tmp_path / "pipx"
    env = user_env(
        user,
        PIPX_HOME=str(pipx_home),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
        **developer_pip_config(),
    )
    # pip, not uv, builds the environment: pipx as most users have it (uv's own way is tested above).
    installed = run(
        [
            PIPX,
            "install",
            "--backend",
            "pip",
            "--python",
            sys.executable,
            "--pip-args",
            f"--find-links {wheels}",
            "hive-agent-cli",
        ],
        env,
        project,
        INSTALL_TIMEOUT,
    )
    assert installed.returncode == 0, installed.stderr
    hive = tmp_path / "bin" / "hive"
    assert hive.exists(), installed.stdout + installed.stderr
    venv = pipx_home / "venvs" / "hive-agent-cli"
    assert (venv / "pipx_metadata.json").is_file()
    assert not list(venv.glob("lib/python*/site-packages/llama_cpp"))

    version = metadata.version("hive-agent-cli")
    shown = run([str(hive), "--version"], env, project, RUN_TIMEOUT)
    assert (shown.returncode, shown.stdout) == (0, f"hive {version}\n"), shown

    asked = run([str(hive), "-p", "hi"], env, project, RUN_TIMEOUT)
    assert asked.returncode != 0, asked
    assert "`pipx uninstall hive-agent-cli && pipx install hive-agent-host`" in asked.stderr, asked.stderr

    with fake_index() as index:
        index.files["hive-agent-cli"] = [
            f"hive_agent_cli-{version}-py3-none-any.whl",
            "hive_agent_cli-99.0.0-py3-none-any.whl",
        ]
        index.files["hive-agent-host"] = ["hive_agent_host-100.0.0-py3-none-any.whl"]  # not this install's
        variables = {**env, **no_index_configured(PIP_INDEX_URL=index.url)}
        check = run([str(hive), "update", "--check"], variables, project, RUN_TIMEOUT)
        dry = run([str(hive), "update", "--dry-run"], variables, project, RUN_TIMEOUT)
    news = f"hive-agent-cli 99.0.0 is available (you have {version}).\n"
    assert (check.returncode, check.stdout) == (
        2,
        f"{news}`hive update` runs: pipx upgrade hive-agent-cli\n",
    ), check
    assert (dry.returncode, dry.stdout) == (0, f"{news}would run: pipx upgrade hive-agent-cli\n"), dry
    assert [path for path, _ in index.requests] == ["/simple/hive-agent-cli/"] * 2


def closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_cli_wheel_ships_the_serve_page_and_its_vendored_libraries(wheels: Path) -> None:
    [wheel] = wheels.glob("hive_agent_cli-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    page = "hive_cli/serve/page/"
    shipped = ["index.html", "app.js", "style.css", "vendor/marked.esm.js", "vendor/purify.es.js"]
    licences = ["vendor/LICENSE.marked", "vendor/LICENSE.dompurify", "vendor/LICENSE-MPL.dompurify"]
    assert {page + name for name in shipped + licences} <= names, sorted(n for n in names if page in n)
