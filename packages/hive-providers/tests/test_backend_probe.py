"""Probing a backend: real tiny programs on a private PATH (one that prints a version, one that hangs with a
grandchild, one that fails, a dsh that is another program), and the real CLIs when they are installed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from hive_providers.backends import BackendOptions
from hive_providers.backends import LaunchSpec
from hive_providers.backends import probe_backend
from hive_providers.backends import resolve_backend
from hive_providers.backends.offline import OFFLINE_RECIPES
from hive_providers.backends.probe import check_identity
from hive_providers.backends.probe import find_executable
from hive_providers.backends.probe import parse_version
from hive_providers.backends.registry import BUILTIN_SPECS

pytestmark = pytest.mark.anyio


def _real_clis() -> Path:
    """Where ``.ci/agent-clis`` installed the real CLIs: ``$HIVE_AGENT_CLIS_BIN``, else its default prefix."""
    configured = os.environ.get("HIVE_AGENT_CLIS_BIN")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hive" / "agent-clis" / "bin"


REAL_CLIS = _real_clis()


def _program(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def _spec(name: str = "foo", **fields: object) -> LaunchSpec:
    values: dict[str, object] = {"title": "Foo", "executables": (name,), "install_hint": "make install-foo"}
    values.update(fields)
    return LaunchSpec(name=name, **values)  # pyright: ignore[reportArgumentType]


@pytest.fixture
def private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME (no private prefix of the real user to find programs in) and a bin directory."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return tmp_path / "bin"


@pytest.fixture
def empty(private: Path) -> Path:
    """The private bin directory, with nothing in it."""
    private.mkdir()
    return private


def _options(tmp_path: Path, bin_dir: Path, **environment: str) -> BackendOptions:
    return BackendOptions(
        cwd=tmp_path, environment={"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", **environment}
    )


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("foo 1.2.3", "1.2.3"),
        ("0.61.0\n", "0.61.0"),
        ("GitHub Copilot CLI 1.0.102.\nRun 'copilot update'", "1.0.102"),
        ("Hermes Agent v0.19.0 (2026.7.20)", "0.19.0"),
        ("deepagents-code 0.1.57\ndeepagents (SDK) 0.7.6", "0.1.57"),
        ("dsh 0.1.5-rc.2", "0.1.5-rc.2"),
        ("version 12.4", "12.4"),
        ("no version here 3", None),
    ],
)
def test_parse_version(text: str, version: str | None) -> None:
    assert parse_version(text) == version


async def test_a_program_that_prints_its_version(tmp_path: Path, private: Path) -> None:
    _program(private, "foo", "echo 'foo 1.2.3'")
    probe = await probe_backend(_spec(), _options(tmp_path, private))
    assert probe.installed
    assert probe.executable == str(private / "foo")
    assert probe.version == "1.2.3"
    assert probe.speaks_acp is True
    assert probe.problem is None
    assert probe.install_hint == "make install-foo"


async def test_the_version_can_come_on_stderr(tmp_path: Path, private: Path) -> None:
    _program(private, "foo", "echo 'foo version 4.5.6' >&2")
    probe = await probe_backend(_spec(), _options(tmp_path, private))
    assert probe.version == "4.5.6"


async def test_a_missing_program_is_reported_not_raised(tmp_path: Path, empty: Path) -> None:
    probe = await probe_backend(_spec(), _options(tmp_path, empty))
    assert not probe.installed
    assert probe.executable is None
    assert probe.version is None
    assert probe.problem == "not installed: no foo on PATH; install it with: make install-foo"
    missing = await probe_backend(_spec(), BackendOptions(cwd=tmp_path, executable=str(tmp_path / "nowhere")))
    assert not missing.installed


@pytest.mark.parametrize("spec", BUILTIN_SPECS, ids=lambda spec: spec.name)
async def test_every_builtin_probes_without_raising_when_missing(
    tmp_path: Path, empty: Path, spec: LaunchSpec
) -> None:
    probe = await probe_backend(spec, _options(tmp_path, empty))
    assert probe.name == spec.name
    assert not probe.installed
    assert probe.install_hint == spec.install_hint
    assert probe.problem == (
        f"not installed: no {' or '.join(spec.executables)} on PATH; install it with: {spec.install_hint}"
    )
    assert probe.speaks_acp == (spec.wire == "acp")


async def test_a_program_that_fails(tmp_path: Path, private: Path) -> None:
    _program(private, "foo", "echo 'foo: cannot open config' >&2; exit 1")
    probe = await probe_backend(_spec(), _options(tmp_path, private))
    assert probe.installed
    assert probe.version is None
    assert probe.problem == "`foo --version` failed with exit code 1: foo: cannot open config"


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, not yet reaped by its new parent


def _wait_gone(*pids: int) -> None:
    """Poll until every one of ``pids`` is dead (nothing else runs by then: nothing waits on the event loop)."""
    deadline = time.monotonic() + 5
    for pid in pids:
        while _running(pid):
            assert time.monotonic() < deadline, f"process {pid} still runs"
            time.sleep(0.01)


def _pids(path: Path) -> tuple[int, ...]:
    return tuple(int(pid) for pid in path.read_text().split())


async def test_a_program_that_hangs_is_killed_with_its_group(tmp_path: Path, private: Path) -> None:
    pids = tmp_path / "pids"
    _program(private, "foo", f"sleep 300 & echo $$ $! > {pids}; wait")
    with anyio.fail_after(10):
        probe = await probe_backend(_spec(), _options(tmp_path, private), timeout=0.5)
    assert probe.installed
    assert probe.version is None
    assert probe.problem == "`foo --version` did not answer within 0.5 s (it was stopped)"
    _wait_gone(*_pids(pids))


async def test_a_probe_cancelled_leaves_nothing_running(tmp_path: Path, private: Path) -> None:
    pids = tmp_path / "pids"
    _program(private, "foo", f"sleep 300 & echo $$ $! > {pids}; wait")
    with anyio.move_on_after(0.5):
        await probe_backend(_spec(), _options(tmp_path, private), timeout=60)
    _wait_gone(*_pids(pids))


async def test_the_version_runs_with_a_throwaway_home_unless_given_one(tmp_path: Path, private: Path) -> None:
    seen = tmp_path / "seen"
    _program(private, "foo", f'echo "$HOME $XDG_CONFIG_HOME" > {seen}; echo 1.0.0')
    await probe_backend(_spec(), _options(tmp_path, private))
    home, config = seen.read_text().split()
    assert home not in {os.environ["HOME"], str(Path.home())}
    assert config == f"{home}/.config"
    assert not await anyio.Path(home).exists()  # removed with the probe
    given = tmp_path / "given-home"
    await probe_backend(_spec(), _options(tmp_path, private, HOME=str(given)))
    assert seen.read_text().split()[0] == str(given)


async def test_the_spec_environment_reaches_the_program(tmp_path: Path, private: Path) -> None:
    _program(private, "foo", 'echo "foo $FOO_LEVEL"')
    spec = _spec(environment={"FOO_LEVEL": "1.0", "DO_NOT_TRACK": "1"})
    assert (await probe_backend(spec, _options(tmp_path, private))).version == "1.0"
    assert (await probe_backend(spec, _options(tmp_path, private, FOO_LEVEL="2.5"))).version == "2.5"


def test_find_executable_order_and_override(tmp_path: Path, private: Path) -> None:
    second = _program(private, "foo-cli", "true")
    spec = _spec(executables=("foo", "foo-cli"))
    options = _options(tmp_path, private)
    assert find_executable(spec, options) == str(second)
    first = _program(private, "foo", "true")
    assert find_executable(spec, options) == str(first)
    other = _program(tmp_path / "elsewhere", "my-foo", "true")
    assert find_executable(spec, BackendOptions(cwd=tmp_path, executable=str(other))) == str(other)


def test_find_executable_looks_in_the_private_prefix(tmp_path: Path, private: Path) -> None:
    prefix_bin = Path(os.environ["HOME"]) / ".local/share/hive/agents/node_modules/.bin"
    program = _program(prefix_bin, "foo", "true")
    private.mkdir()
    assert find_executable(_spec(), _options(tmp_path, private)) == str(program)


async def test_a_dsh_that_is_another_program_is_not_this_cli(tmp_path: Path, private: Path) -> None:
    spec = resolve_backend("dsh")
    _program(
        private, "dsh", 'case "$1" in --help) echo "dsh - the distributed shell";; *) echo "dsh 3.4";; esac'
    )
    probe = await probe_backend(spec, _options(tmp_path, private))
    assert not probe.installed
    assert probe.executable == str(private / "dsh")
    assert probe.problem is not None
    assert "is another program than DeepSeek Harness" in probe.problem
    assert await check_identity(spec, str(private / "dsh")) == probe.problem


async def test_a_dsh_that_is_deepseek_harness(tmp_path: Path, private: Path) -> None:
    spec = resolve_backend("dsh")
    banner = 'case "$1" in --help) echo "DeepSeek Harness (dsh)";; *) echo "0.1.5-rc.2";; esac'
    _program(private, "dsh", banner)
    probe = await probe_backend(spec, _options(tmp_path, private))
    assert probe.installed
    assert probe.version == "0.1.5-rc.2"
    assert await check_identity(spec, str(private / "dsh")) is None
    assert await check_identity(resolve_backend("gemini"), "/nonexistent/gemini") is None  # no check needed


async def test_a_cli_that_needs_a_login_says_so(tmp_path: Path, private: Path) -> None:
    _program(private, "qodercli", "echo 1.1.76")
    qoder = await probe_backend(resolve_backend("qoder"), _options(tmp_path, private))
    assert qoder.installed
    assert qoder.version == "1.1.76"
    assert qoder.problem == resolve_backend("qodercli").needs_login
    assert not qoder.offline


async def test_offline_needs_a_recipe(tmp_path: Path, empty: Path) -> None:
    for spec in (resolve_backend(name) for name in ("gemini", "omp", "qodercli", "junie", "dsh")):
        probe = await probe_backend(spec, _options(tmp_path, empty))
        assert probe.offline == (spec.offline and spec.name in OFFLINE_RECIPES)
    assert (await probe_backend(resolve_backend("gemini"), _options(tmp_path, empty))).offline


REAL_VERSIONS = {
    "gemini": "0.61.0",
    "copilot": "1.0.102",
    "copilot-acp": "1.0.102",
    "opencode": "1.18.33",
    "opencode-acp": "1.18.33",
    "kimi": "2.1.0",
    "reasonix": "1.38.11",
    "hermes": "0.19.0",
    "deepagents": "0.1.57",
    "codebuddy": "2.163.0",
}


@pytest.mark.parametrize(("name", "version"), REAL_VERSIONS.items())
async def test_real_cli_versions(tmp_path: Path, name: str, version: str) -> None:
    spec = resolve_backend(name)
    if not any((REAL_CLIS / program).exists() for program in spec.executables):
        pytest.skip(f"{name} is not installed under {REAL_CLIS} (.ci/agent-clis installs it)")
    home = tmp_path / "home"
    home.mkdir()
    options = BackendOptions(
        cwd=tmp_path, environment={"PATH": f"{REAL_CLIS}{os.pathsep}{os.environ['PATH']}", "HOME": str(home)}
    )
    with anyio.fail_after(120):
        probe = await probe_backend(spec, options, timeout=90)
    assert probe.installed, probe.problem
    assert probe.executable is not None
    assert Path(probe.executable).parent == REAL_CLIS
    assert probe.version == version
    assert probe.problem is None
    assert probe.speaks_acp == (spec.wire == "acp")
