"""The backend registry: every name and alias of the seed, the launch specs' promises (ask, never bypass, no
global install), the errors, create_backend, and third-party backends from a real distribution's entry points."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive_core.backends import AgentBackend
from hive_core.errors import UserError
from hive_providers.backends import AcpBackend
from hive_providers.backends import BackendDefinition
from hive_providers.backends import BackendNotInstalled
from hive_providers.backends import BackendOptions
from hive_providers.backends import BackendUnavailable
from hive_providers.backends import LaunchSpec
from hive_providers.backends import UnknownBackend
from hive_providers.backends import backend_specs
from hive_providers.backends import create_backend
from hive_providers.backends import resolve_backend
from hive_providers.backends.opencode.backend import OpenCodeServeBackend
from hive_providers.backends.registry import BUILTIN_SPECS
from hive_providers.backends.registry import backend_problems
from hive_providers.backends.registry import reload_backends

# seeds-upstream §E.3 and seed 002: canonical name -> the aliases that must resolve to it.
SEED_NAMES: dict[str, tuple[str, ...]] = {
    "claude-code": ("claude", "claudecode", "anthropic-claude"),
    "codex": ("codex-cli", "openai-codex"),
    "copilot": ("github-copilot", "githubcopilot"),
    "copilot-acp": ("github-copilot-acp",),
    "opencode": ("open-code", "opencode-cli"),
    "opencode-acp": ("opencode-acp-cli",),
    "deepagents": ("deepagents-acp",),
    "codebuddy": ("codebuddy-cli",),
    "gemini": ("gemini-cli",),
    "hermes": ("hermes-cli",),
    "kimi": ("kimi-cli",),
    "kiro-cli": (),
    "qodercli": ("qoder",),
    "junie": ("junie-cli",),
    "reasonix": (),
    "pi": ("pi-cli",),
    "omp": ("omp-cli",),
    "dsh": ("dsh-cli",),
}

# The launch arguments for every ACP CLI.
ACP_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "gemini": ("--acp",),
    "copilot-acp": ("--acp",),
    "opencode-acp": ("acp",),
    "kimi": ("acp",),
    "codebuddy": ("--acp",),
    "reasonix": ("acp",),
    "hermes": ("acp",),
    "deepagents": ("--acp",),
    "qodercli": ("--acp",),
    "kiro-cli": ("acp",),
    "junie": ("--acp=true", "--skip-update-check"),
    "dsh": ("--profile", "acp"),
}

RUN_OFFLINE_HERE = {
    "gemini",
    "copilot",
    "opencode",
    "opencode-acp",
    "kimi",
    "codebuddy",
    "reasonix",
    "hermes",
    "deepagents",
}


@pytest.fixture(autouse=True)
def fresh_table() -> Iterator[None]:
    """Each test reads the entry points again, and leaves no table read from its own sys.path behind."""
    reload_backends()
    yield
    reload_backends()


@pytest.mark.parametrize(("canonical", "aliases"), SEED_NAMES.items())
def test_every_seed_name_and_alias_resolves(canonical: str, aliases: tuple[str, ...]) -> None:
    for name in (canonical, *aliases):
        assert resolve_backend(name).name == canonical
        assert resolve_backend(f"  {name.upper()} ").name == canonical


def test_the_table_is_the_seeds_and_every_name_is_unique() -> None:
    assert {spec.name for spec in BUILTIN_SPECS} == set(SEED_NAMES)
    names = [name.lower() for spec in BUILTIN_SPECS for name in (spec.name, *spec.aliases)]
    assert len(names) == len(set(names))
    assert "hive" not in names
    assert backend_specs()[: len(BUILTIN_SPECS)] == BUILTIN_SPECS


def test_kiro_runs_only_a_program_named_kiro_cli() -> None:
    assert resolve_backend("kiro-cli").executables == ("kiro-cli",)


@pytest.mark.parametrize(("name", "arguments"), ACP_ARGUMENTS.items())
def test_acp_launch_specs(name: str, arguments: tuple[str, ...]) -> None:
    spec = resolve_backend(name)
    assert spec.wire == "acp"
    assert spec.arguments == arguments
    # Each starts in the mode where it asks: the bypass mode is never the one hive sets by itself.
    assert spec.ask_mode is None or spec.ask_mode != spec.bypass_mode
    assert not {"--yolo", "-y", "--dangerously-skip-permissions", "--trust-all-tools"} & set(spec.arguments)
    assert spec.startup_timeout > 0
    assert spec.version_arguments


@pytest.mark.parametrize("spec", BUILTIN_SPECS, ids=lambda spec: spec.name)
def test_install_hints_never_install_globally(spec: LaunchSpec) -> None:
    hint = spec.install_hint
    assert " -g" not in hint
    assert "--global" not in hint
    if hint.startswith("npm "):
        assert "--prefix ~/.local/share/hive/agents" in hint
    if spec.name in {"hermes", "deepagents"}:
        assert hint.startswith("uv tool install ")


@pytest.mark.parametrize("spec", BUILTIN_SPECS, ids=lambda spec: spec.name)
def test_environment_is_only_harmless_opt_outs(spec: LaunchSpec) -> None:
    # Variables that only make sense with an endpoint belong to the offline recipes (offline.py).
    for variable in spec.environment:
        assert not variable.endswith(("_API_KEY", "_BASE_URL", "_OFFLINE")), variable
    assert spec.environment.get("DO_NOT_TRACK") == "1"
    if spec.name == "reasonix":
        assert spec.environment["REASONIX_TELEMETRY"] == "0"


def test_offline_and_login_flags() -> None:
    offline = {spec.name for spec in BUILTIN_SPECS if spec.offline}
    assert offline >= RUN_OFFLINE_HERE
    for name in ("qodercli", "kiro-cli"):
        spec = resolve_backend(name)
        assert spec.needs_login
        assert not spec.offline


def test_non_acp_clis_carry_their_wire() -> None:
    assert resolve_backend("claude").wire == "claude_stream"
    assert resolve_backend("codex").wire == "codex_app_server"
    assert resolve_backend("pi").wire == "pi_rpc"
    assert resolve_backend("opencode").wire == "opencode_http"
    assert resolve_backend("opencode-acp").wire == "acp"
    assert resolve_backend("oh-my-pi").wire == "omp_rpc"
    assert resolve_backend("github-copilot").wire == "copilot_server"
    assert resolve_backend("copilot-acp").wire == "acp"


def test_unknown_name_lists_every_name_and_alias() -> None:
    with pytest.raises(UnknownBackend) as raised:
        resolve_backend("gemeni")
    message = str(raised.value)
    assert "'gemeni'" in message
    assert "hive (hive's own loop)" in message
    for spec in BUILTIN_SPECS:
        assert spec.name in message
        for alias in spec.aliases:
            assert alias in message
    assert isinstance(raised.value, UserError)
    assert isinstance(raised.value, LookupError)
    with pytest.raises(UnknownBackend):
        resolve_backend("   ")


def test_hive_is_not_a_cli_here() -> None:
    with pytest.raises(UnknownBackend, match="hive's own loop, not a coding-agent CLI"):
        resolve_backend("Hive")


def _options(tmp_path: Path, **environment: str) -> BackendOptions:
    return BackendOptions(cwd=tmp_path, environment=environment)


def test_create_backend_for_a_missing_cli_names_programs_and_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no private prefix to find it in either
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BackendNotInstalled) as raised:
        create_backend("gemini-cli", _options(tmp_path, PATH=str(empty)))
    message = str(raised.value)
    assert "no gemini or gemini-cli on PATH" in message
    assert "npm install --prefix ~/.local/share/hive/agents @google/gemini-cli" in message


def _program(directory: Path, name: str, body: str = "echo 'x 1.0.0'") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_create_backend_builds_the_acp_client(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _program(bin_dir, "opencode")
    backend = create_backend("OpenCode-ACP-CLI", _options(tmp_path, PATH=str(bin_dir)))
    assert isinstance(backend, AcpBackend)
    assert isinstance(backend, AgentBackend)
    assert backend.name == "opencode-acp"
    assert backend.session_id is None
    served = create_backend("OpenCode-CLI", _options(tmp_path, PATH=str(bin_dir)))
    assert isinstance(served, OpenCodeServeBackend)  # `opencode serve`: questions, subagents, fork
    assert served.name == "opencode"


def test_create_backend_takes_a_spec_of_ones_own(tmp_path: Path) -> None:
    program = _program(tmp_path / "bin", "my-agent")
    spec = LaunchSpec(name="mine", title="Mine", executables=("my-agent",), install_hint="make install")
    backend = create_backend(spec, BackendOptions(cwd=tmp_path, executable=str(program)))
    assert isinstance(backend, AcpBackend)
    assert backend.spec is spec


# -- entry points, from a real distribution on sys.path ----------------------------------------------------------

MODULE = """
from hive_core.backends import BackendProbe
from hive_providers.backends import BackendDefinition, LaunchSpec

SPEC = LaunchSpec(
    name="thirdparty", title="Third Party", aliases=("tp-agent",), executables=("tp-agent",),
    arguments=("serve-acp",), install_hint="pip install thirdparty-agent",
)

class Built:
    name = "builtin-by-factory"
    def __init__(self, spec, options):
        self.spec, self.options = spec, options
    async def __call__(self, request, emit):
        pass
    async def probe(self):
        return BackendProbe(name=self.name, installed=True)
    @property
    def session_id(self):
        return None
    async def aclose(self):
        pass

FACTORY = BackendDefinition(
    spec=LaunchSpec(name="factoried", title="Factoried", executables=("nothing-here",), install_hint="none",
                    wire="pi_rpc"),
    factory="thirdparty_agent:Built",
)
CLASH = LaunchSpec(name="CLAUDE", title="Impostor", executables=("claude",), install_hint="none")
NOT_A_SPEC = 42
"""

ENTRY_POINTS = """[hive.backends]
thirdparty = thirdparty_agent:SPEC
factoried = thirdparty_agent:FACTORY
impostor = thirdparty_agent:CLASH
numbers = thirdparty_agent:NOT_A_SPEC
broken = thirdparty_agent_missing:SPEC
"""


@pytest.fixture
def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    info = site / "thirdparty_agent-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdparty-agent\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (site / "thirdparty_agent.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(site))  # pyright: ignore[reportUnknownMemberType]
    monkeypatch.delitem(sys.modules, "thirdparty_agent", raising=False)
    reload_backends()
    return site


def test_entry_point_backends_resolve_and_list(third_party: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="hive_providers.backends.registry"):
        specs = backend_specs()
    assert resolve_backend("thirdparty").title == "Third Party"
    assert resolve_backend("TP-Agent").name == "thirdparty"
    names = [spec.name for spec in specs]
    assert names[: len(BUILTIN_SPECS)] == [spec.name for spec in BUILTIN_SPECS]
    assert names[len(BUILTIN_SPECS) :] == ["factoried", "thirdparty"]
    with pytest.raises(UnknownBackend) as raised:
        resolve_backend("nope")
    assert "thirdparty (also tp-agent)" in str(raised.value)


def test_a_builtin_wins_over_an_entry_point_of_its_name(third_party: Path) -> None:
    assert resolve_backend("claude").title == "Claude Code"
    problems = backend_problems()
    assert any("'impostor'" in problem and "'claude' is already a backend" in problem for problem in problems)


def test_broken_entry_points_are_problems_not_crashes(
    third_party: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="hive_providers.backends.registry"):
        problems = backend_problems()
    assert len(problems) == 3
    assert any("'broken'" in problem and "cannot be loaded" in problem for problem in problems)
    assert any(
        "'numbers'" in problem and "not a LaunchSpec or a BackendDefinition" in problem
        for problem in problems
    )
    assert [record.getMessage() for record in caplog.records] == list(problems)


def test_an_entry_points_factory_builds_its_backend(third_party: Path, tmp_path: Path) -> None:
    options = _options(tmp_path)
    backend = create_backend("factoried", options)
    assert type(backend).__name__ == "Built"
    assert backend.name == "builtin-by-factory"
    assert vars(backend)["options"] is options


def test_a_factory_that_cannot_be_loaded_is_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = LaunchSpec(name="ghost", title="Ghost", executables=("ghost",), install_hint="none")
    definition = BackendDefinition(spec=spec, factory="no_such_module_anywhere:build")
    monkeypatch.setattr(
        "hive_providers.backends.registry._entry_points", lambda: [_Loaded("ghost", definition)]
    )
    reload_backends()
    with pytest.raises(
        BackendUnavailable, match="its factory 'no_such_module_anywhere:build' cannot be loaded"
    ):
        create_backend("ghost", _options(tmp_path))


class _Loaded:
    """An entry point already loaded (for a definition whose factory is the thing under test)."""

    def __init__(self, name: str, value: object) -> None:
        self.name = name
        self.value = f"{name}:VALUE"
        self._loaded = value

    def load(self) -> object:
        return self._loaded
