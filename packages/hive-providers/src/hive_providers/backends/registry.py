"""Every coding-agent backend hive knows, by name: the built-in launch specs and those third parties install.

:data:`BUILTIN_SPECS` declares each CLI once (names, programs, arguments, environment, modes, install command).
A package adds a backend by declaring an entry point in the group ``hive.backends`` that loads to a
:class:`~hive_providers.backends.kit.specs.LaunchSpec` (an ACP CLI hive drives itself) or a
:class:`BackendDefinition` (a spec plus a factory of its own)::

    [project.entry-points."hive.backends"]
    mycli = "mycli_hive:SPEC"

Names resolve case-insensitively, by canonical name or alias. A built-in always wins: an entry point whose name
or alias is already taken (by a built-in or by an entry point read before it) is skipped, and so is one that
cannot be loaded; each is logged and listed by :func:`backend_problems`, so a broken package never breaks
``hive agents``. ``hive`` (hive's own loop) is not in this table: the command line handles it before asking here.
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import cast

import msgspec

from hive_core.backends import HIVE_BACKEND
from hive_core.backends import AgentBackend

from .kit.errors import BackendNotInstalled
from .kit.errors import BackendUnavailable
from .kit.errors import UnknownBackend
from .kit.specs import BackendOptions
from .kit.specs import LaunchSpec

if TYPE_CHECKING:
    from .pool import AcpSessionPool

__all__ = [
    "BUILTIN_SPECS",
    "ENTRY_POINT_GROUP",
    "BackendDefinition",
    "backend_definition",
    "backend_problems",
    "backend_specs",
    "create_backend",
    "reload_backends",
    "resolve_backend",
]

ENTRY_POINT_GROUP: Final = "hive.backends"
"""The entry-point group third-party backends are declared in."""

_log = logging.getLogger(__name__)

_PREFIX: Final = "~/.local/share/hive/agents"
"""The private prefix the install commands use (see :mod:`hive_providers.backends.probe`, which looks there)."""


def _npm(package: str) -> str:
    return f"npm install --prefix {_PREFIX} {package}"


_QUIET: Final = {"DO_NOT_TRACK": "1"}
"""Telemetry off, for every CLI that honours the convention (harmless when one does not)."""

# The mode ids are the ones the pinned CLIs announce (gemini 0.61.0, kimi 2.1.0, codebuddy 2.163.0, hermes 0.19.0);
# ``None`` where a CLI asks by default or through the private configuration hive writes (offline.py).
BUILTIN_SPECS: Final[tuple[LaunchSpec, ...]] = (
    LaunchSpec(
        name="gemini",
        title="Gemini CLI",
        aliases=("gemini-cli",),
        executables=("gemini", "gemini-cli"),
        arguments=("--acp",),
        # Headless, it refuses to work in a folder the user never trusted: hive's own rules judge what it does.
        environment={**_QUIET, "GEMINI_CLI_TRUST_WORKSPACE": "true"},
        ask_mode="default",
        bypass_mode="yolo",
        install_hint=_npm("@google/gemini-cli"),
        offline=True,
    ),
    LaunchSpec(
        name="copilot-acp",
        title="GitHub Copilot CLI (ACP)",
        aliases=("github-copilot-acp",),
        executables=("copilot",),
        arguments=("--acp",),
        environment=dict(_QUIET),
        install_hint=_npm("@github/copilot"),
        offline=True,
    ),
    LaunchSpec(
        name="opencode-acp",
        title="OpenCode (ACP)",
        aliases=("opencode-acp-cli",),
        executables=("opencode",),
        arguments=("acp",),
        environment={**_QUIET, "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"},
        # Its model is a configuration option (``provider/model``), not session/set_model.
        model_passing="config_option",
        install_hint=_npm("opencode-ai"),
        offline=True,
    ),
    LaunchSpec(
        name="kimi",
        title="Kimi Code",
        aliases=("kimi-cli", "kimi-code"),
        executables=("kimi", "kimi-cli"),
        arguments=("acp",),
        environment=dict(_QUIET),
        ask_mode="default",
        bypass_mode="yolo",
        install_hint=_npm("@moonshot-ai/kimi-code") + "  (needs Node >= 22.19)",
        offline=True,
    ),
    LaunchSpec(
        name="codebuddy",
        title="CodeBuddy Code",
        aliases=("codebuddy-cli", "codebuddy-code"),
        # ``codebuddy-headless`` is the binary inside the codebuddy-agent-sdk wheel.
        executables=("codebuddy", "codebuddy-cli", "codebuddy-headless"),
        arguments=("--acp",),
        environment=dict(_QUIET),
        ask_mode="default",
        bypass_mode="bypassPermissions",
        install_hint=_npm("@tencent-ai/codebuddy-code"),
        offline=True,
    ),
    LaunchSpec(
        name="reasonix",
        title="Reasonix",
        executables=("reasonix",),
        arguments=("acp",),
        environment={**_QUIET, "REASONIX_TELEMETRY": "0"},
        # Reasonix takes its model (a provider name of its configuration) only when it starts.
        model_passing="argument",
        model_argument="-model",
        # Its ACP sessions run tools without asking until told otherwise, and only this option tells them.
        ask_config={"tool_approval": "read-only"},
        install_hint=_npm("reasonix"),
        offline=True,
    ),
    LaunchSpec(
        name="hermes",
        title="Hermes Agent",
        aliases=("hermes-cli", "hermes-agent"),
        executables=("hermes", "hermes-cli"),
        arguments=("acp",),
        environment=dict(_QUIET),
        model_passing="new_session_settings",
        ask_mode="default",
        bypass_mode="dont_ask",
        install_hint="uv tool install 'hermes-agent[acp]'",
        offline=True,
    ),
    LaunchSpec(
        name="deepagents",
        title="Deep Agents Code",
        aliases=("deepagents-acp", "deepagents-code", "dcode"),
        executables=("dcode", "deepagents", "deepagents-code"),
        arguments=("--acp",),
        environment=dict(_QUIET),
        model_passing="argument",
        model_argument="--model",
        install_hint="uv tool install deepagents-code",
        offline=True,
    ),
    LaunchSpec(
        name="qodercli",
        title="Qoder CLI",
        aliases=("qoder", "qoder-cli"),
        executables=("qodercli", "qoder"),
        arguments=("--acp",),
        environment=dict(_QUIET),
        install_hint=_npm("@qoder-ai/qodercli"),
        needs_login="Qoder CLI needs a Qoder account (run `qodercli` and /login); it has no local-model setup",
    ),
    LaunchSpec(
        name="kiro-cli",
        title="Kiro CLI",
        # Only the name: the programs are strictly ``kiro-cli`` (a generic ``kiro`` launcher is another thing).
        aliases=("kiro",),
        executables=("kiro-cli",),
        arguments=("acp",),
        environment=dict(_QUIET),
        install_hint="curl -fsSL https://cli.kiro.dev/install | bash",
        needs_login="Kiro CLI needs a Kiro account (`kiro-cli login`, or KIRO_API_KEY); it has no local-model setup",
    ),
    LaunchSpec(
        name="junie",
        title="Junie CLI",
        aliases=("junie-cli",),
        executables=("junie", "junie-cli"),
        arguments=("--acp=true", "--skip-update-check"),
        environment=dict(_QUIET),
        model_passing="argument",
        model_argument="--model",
        startup_timeout=45.0,
        install_hint=_npm("@jetbrains/junie"),
        offline=True,
        poolable=False,
    ),
    LaunchSpec(
        name="dsh",
        title="DeepSeek Harness",
        aliases=("dsh-cli", "deepseek-harness"),
        executables=("dsh", "dsh-cli"),
        # Its ACP server is a profile of its own; another ``dsh`` (a distributed shell) is told apart by its
        # ``--help`` banner before it is driven (hive_providers.backends.probe.IDENTITY_CHECKS).
        arguments=("--profile", "acp"),
        environment=dict(_QUIET),
        install_hint=_npm("@deepseek-ai/dsh @deepseek-ai/dsh-acp"),
        offline=True,
    ),
    # The CLIs driven on protocols of their own.
    LaunchSpec(
        name="copilot",
        title="GitHub Copilot CLI",
        aliases=("github-copilot", "githubcopilot"),
        executables=("copilot",),
        # The backend starts `copilot --headless --stdio`: its server protocol carries `ask_user`, which ACP
        # does not (verified against Copilot 1.0.102).
        arguments=(),
        wire="copilot_server",
        environment=dict(_QUIET),
        install_hint=_npm("@github/copilot"),
        offline=True,
        poolable=False,  # the backend keeps its own server between turns
    ),
    LaunchSpec(
        name="opencode",
        title="OpenCode",
        aliases=("open-code", "opencode-cli"),
        executables=("opencode",),
        # The backend starts `opencode serve` on a free loopback port with a password of its own.
        arguments=(),
        wire="opencode_http",
        environment={**_QUIET, "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"},
        install_hint=_npm("opencode-ai"),
        offline=True,
        poolable=False,  # the backend keeps its own server warm between turns
    ),
    LaunchSpec(
        name="claude-code",
        title="Claude Code",
        aliases=("claude", "claudecode", "anthropic-claude"),
        executables=("claude", "claude-code"),
        # stream-json both ways, text deltas, and every permission on the control channel (stdin and stdout). No
        # `-p`, as claude-agent-sdk drives it: print mode cost about 140 ms more per turn (benchmarks/agent_backends).
        arguments=(
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            "--permission-prompt-tool",
            "stdio",
        ),
        wire="claude_stream",
        environment={**_QUIET, "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
        model_passing="argument",
        model_argument="--model",
        bypass_mode="bypassPermissions",
        install_hint=_npm("@anthropic-ai/claude-code"),
        offline=True,
        poolable=False,
    ),
    LaunchSpec(
        name="codex",
        title="Codex CLI",
        aliases=("codex-cli", "openai-codex"),
        executables=("codex", "codex-cli"),
        arguments=("app-server", "--listen", "stdio://"),
        wire="codex_app_server",
        environment=dict(_QUIET),
        bypass_mode="yolo",
        install_hint=_npm("@openai/codex"),
        offline=True,
    ),
    LaunchSpec(
        name="omp",
        title="OMP (oh-my-pi)",
        aliases=("omp-cli", "oh-my-pi"),
        executables=("omp", "omp-cli"),
        # Like Pi: `--mode json -p`, or `--mode rpc-ui` with its structured ask dialog when questions can be
        # answered (the seed's way; `omp acp` is not used).
        arguments=(),
        wire="omp_rpc",
        environment=dict(_QUIET),
        install_hint=_npm("@oh-my-pi/pi-coding-agent") + "  (needs Bun >= 1.3.14)",
        offline=True,
        poolable=False,
    ),
    LaunchSpec(
        name="pi",
        title="Pi",
        aliases=("pi-cli",),
        executables=("pi", "pi-cli"),
        # The mode is chosen per turn: ``--mode json -p``, or ``--mode rpc`` with the question extension.
        arguments=(),
        wire="pi_rpc",
        environment=dict(_QUIET),
        install_hint=_npm("@earendil-works/pi-coding-agent") + "  (needs Node >= 22.19)",
        offline=True,
    ),
)


class BackendDefinition(msgspec.Struct, frozen=True, kw_only=True):
    """A backend a third party declares: its launch spec, and how to build it when hive's ACP client will not do."""

    spec: LaunchSpec
    """Its names, programs and launch arguments, listed and resolved like a built-in's."""
    factory: str | None = None
    """``"module:function"`` called with ``(spec, options)`` to build its
    :class:`~hive_core.backends.AgentBackend`; ``None`` drives the spec with hive's ACP client."""


@dataclass(frozen=True)
class _Table:
    definitions: tuple[BackendDefinition, ...]
    by_name: dict[str, BackendDefinition]
    problems: tuple[str, ...]


def _key(name: str) -> str:
    return name.strip().lower()


def _names(spec: LaunchSpec) -> tuple[str, ...]:
    return (spec.name, *spec.aliases)


def _add(table: dict[str, BackendDefinition], definition: BackendDefinition) -> str | None:
    """Index ``definition`` under all its names; the name already taken, if one is (then nothing is added)."""
    keys = [_key(name) for name in _names(definition.spec)]
    for key in keys:
        if key in table or key == HIVE_BACKEND:
            return key
    for key in keys:
        table[key] = definition
    return None


def _build(entry_points: Iterable[Any]) -> _Table:
    by_name: dict[str, BackendDefinition] = {}
    definitions: list[BackendDefinition] = []
    problems: list[str] = []
    for spec in BUILTIN_SPECS:
        definition = BackendDefinition(spec=spec)
        taken = _add(by_name, definition)
        assert taken is None, f"two built-in backends are named {taken!r}"
        definitions.append(definition)
    for entry in entry_points:
        where = f"entry point {entry.name!r} ({entry.value}) of group {ENTRY_POINT_GROUP}"
        try:
            loaded: object = entry.load()
        except Exception as error:  # a broken package must not break the listing
            problems.append(f"{where} cannot be loaded: {type(error).__name__}: {error}")
            continue
        if isinstance(loaded, LaunchSpec):
            definition = BackendDefinition(spec=loaded)
        elif isinstance(loaded, BackendDefinition):
            definition = loaded
        else:
            problems.append(f"{where} is a {type(loaded).__name__}, not a LaunchSpec or a BackendDefinition")
            continue
        taken = _add(by_name, definition)
        if taken is not None:
            problems.append(f"{where} is skipped: the name {taken!r} is already a backend")
            continue
        definitions.append(definition)
    for problem in problems:
        _log.warning("%s", problem)
    return _Table(tuple(definitions), by_name, tuple(problems))


def _entry_points() -> Iterable[Any]:
    from importlib.metadata import entry_points

    # Sorted, so which of two clashing third-party backends wins does not depend on the order of sys.path.
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda entry: (entry.name, entry.value))


@functools.cache
def _table() -> _Table:
    return _build(_entry_points())


def reload_backends() -> None:
    """Forget the table read from the entry points (after installing a package, or in tests)."""
    _table.cache_clear()


def backend_specs() -> tuple[LaunchSpec, ...]:
    """Every backend: the built-ins in their order, then the entry points' by name (read once, cached)."""
    return tuple(definition.spec for definition in _table().definitions)


def backend_problems() -> tuple[str, ...]:
    """What went wrong reading the entry points: one line each, fit to show under ``hive agents``."""
    return _table().problems


def _known() -> list[tuple[str, tuple[str, ...]]]:
    return [(spec.name, spec.aliases) for spec in backend_specs()]


def backend_definition(name: str) -> BackendDefinition:
    """The definition of the backend named ``name`` (canonical or alias, any case, spaces around ignored).

    Raises :class:`~hive_providers.backends.kit.errors.UnknownBackend` for a name that is none, listing them all.
    """
    found = _table().by_name.get(_key(name))
    if found is None:
        raise UnknownBackend(name, _known())
    return found


def resolve_backend(name: str) -> LaunchSpec:
    """The launch spec of the backend named ``name`` (canonical or alias, any case, spaces around ignored).

    Raises :class:`~hive_providers.backends.kit.errors.UnknownBackend` for a name that is none, listing them all.
    """
    return backend_definition(name).spec


def _load_factory(reference: str, spec: LaunchSpec) -> Callable[[LaunchSpec, BackendOptions], AgentBackend]:
    module_name, _, attribute = reference.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else ():
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        raise BackendUnavailable(
            f"the backend {spec.name!r} cannot be built: its factory {reference!r} cannot be loaded ({error})"
        ) from error
    if not attribute or not callable(target):
        raise BackendUnavailable(
            f"the backend {spec.name!r} names a factory {reference!r} that is not callable"
        )
    return cast("Callable[[LaunchSpec, BackendOptions], AgentBackend]", target)


def create_backend(
    name_or_spec: str | LaunchSpec, options: BackendOptions, *, pool: AcpSessionPool[Any] | None = None
) -> AgentBackend:
    """The backend that runs turns with the CLI ``name_or_spec`` names, as ``options`` say.

    A third-party factory builds its own; a CLI that speaks ACP gets hive's ACP client
    (:class:`~hive_providers.backends.acp.backend.AcpBackend`, which keeps warm sessions in ``pool``).
    Raises :class:`~hive_providers.backends.kit.errors.UnknownBackend` for an unknown name,
    :class:`~hive_providers.backends.kit.errors.BackendUnavailable` for a CLI whose protocol hive does not drive yet,
    and :class:`~hive_providers.backends.kit.errors.BackendNotInstalled` when its program is not found.
    """
    if isinstance(name_or_spec, LaunchSpec):
        spec = name_or_spec
        known = _table().by_name.get(_key(spec.name))
        definition = known if known is not None and known.spec == spec else BackendDefinition(spec=spec)
    else:
        definition = backend_definition(name_or_spec)
        spec = definition.spec
    if definition.factory is not None:
        return _load_factory(definition.factory, spec)(spec, options)
    from .probe import find_executable

    if find_executable(spec, options) is None:
        raise BackendNotInstalled(
            spec.name, (options.executable,) if options.executable else spec.executables, spec.install_hint
        )
    if spec.wire == "claude_stream":
        from .claude.backend import ClaudeCodeBackend

        return ClaudeCodeBackend(spec, options)  # one process per turn: never pooled
    if spec.wire == "codex_app_server":
        from .codex.backend import CodexBackend

        return CodexBackend(spec, options)  # keeps its own app-server between turns
    if spec.wire == "copilot_server":
        from .copilot.backend import CopilotBackend

        return CopilotBackend(spec, options)  # keeps its own server between turns
    if spec.wire == "opencode_http":
        from .opencode.backend import OpenCodeServeBackend

        return OpenCodeServeBackend(spec, options)  # keeps its own server between turns
    if spec.wire == "omp_rpc":
        from .omp.backend import OmpBackend

        return OmpBackend(spec, options)  # one process per turn: never pooled
    if spec.wire == "pi_rpc":
        from .pi.backend import PiBackend

        return PiBackend(spec, options)  # one process per turn: never pooled
    from .acp.backend import AcpBackend

    return AcpBackend(spec, options, pool=pool)
