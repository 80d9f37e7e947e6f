"""``hive doctor``: configuration, providers, connectivity and environment, with advice."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import anyio

from hive_cli.errors import USER_ERRORS
from hive_core import Capabilities
from hive_core.config import ConfigError
from hive_core.config import LoadedConfig
from hive_core.config import find_project_root
from hive_core.config import global_config_path
from hive_core.config import hive_home
from hive_core.config import load_config
from hive_core.context import CompactionSettings
from hive_core.context import ContextWindow
from hive_core.context import resolve_window
from hive_core.redaction import mask_urls
from hive_core.sandbox import SANDBOX_ADVICE
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import sandbox_status
from hive_providers import CONFIG_SCHEMA
from hive_providers import ProviderSettings

from .doctor_knowledge import check_knowledge

__all__ = ["doctor_main"]

_CONNECT_TIMEOUT = 30.0


async def _list_within(settings: ProviderSettings) -> list[str]:
    from hive_providers.registry import list_models

    with anyio.fail_after(_CONNECT_TIMEOUT):
        return await list_models(settings)


async def _window_within(settings: ProviderSettings, configured: int | None) -> ContextWindow:
    from hive_providers.registry import model_capabilities

    with anyio.fail_after(_CONNECT_TIMEOUT):
        capabilities = await model_capabilities(settings)
    return resolve_window(capabilities, configured)


def _window(settings: ProviderSettings, configured: int | None) -> tuple[ContextWindow, str | None]:
    """The window hive uses with the provider's model and where it came from, as sessions resolve it
    (``configured``: ``compaction.maxContextTokens``); when the client cannot be built or asked, the fallback a
    session would use, with why."""
    try:
        return anyio.run(_window_within, settings, configured), None
    except Exception as exc:  # the window line still says what a session would assume
        return resolve_window(Capabilities(), configured), mask_urls(str(exc))


def _model_key(settings: ProviderSettings) -> str:
    """The configuration key that names a provider's model, for advice."""
    from hive_providers.registry import provider_spec

    spec = provider_spec(settings.provider)
    key = spec.key_of("model")
    return f"{spec.section.name}.{key.name if key is not None else 'model'}"


class _Report:
    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.errors = 0
        self.warnings = 0
        self.advice: list[str] = []

    def section(self, title: str) -> None:
        sys.stdout.write(f"\n{title}\n")

    def ok(self, text: str) -> None:
        sys.stdout.write(f"  ✓ {text}\n")

    def warn(self, text: str, advice: str | None = None) -> None:
        self.warnings += 1
        sys.stdout.write(f"  ! {text}\n")
        if advice and advice not in self.advice:
            self.advice.append(advice)

    def error(self, text: str, advice: str | None = None, detail: str | None = None) -> None:
        self.errors += 1
        sys.stdout.write(f"  ✗ {text}\n")
        if detail and self.verbose:
            sys.stdout.write(f"      {detail}\n")
        if advice and advice not in self.advice:
            self.advice.append(advice)


def _check_local(report: _Report, settings: ProviderSettings, *, alone: bool) -> bool:
    """The local runtime (llama-cpp-python, imported to know) and model file: there, or what to install (an
    error when local inference is the only provider, else a warning). Whether both are there."""
    from hive_providers.local import DEFAULT_MODEL_DISTRIBUTION
    from hive_providers.local import local_status

    status = local_status(settings.model)

    def missing(text: str, advice: str, detail: str | None = None) -> None:
        if alone:
            report.error(text, advice, detail)
        else:
            report.warn(text, advice)

    if status.runtime_version is not None:
        report.ok(f"local runtime: llama-cpp-python {status.runtime_version}")
    else:
        missing(
            "local runtime: llama-cpp-python is not installed",
            status.runtime_advice(),
            status.runtime_problem,
        )
    if status.source is None:
        missing(status.choice(), "set it to a GGUF path, a Hugging Face repository or an alias, or unset it")
        return False
    report.ok(status.choice())
    if status.model is not None and status.model_found:
        report.ok(f"local model: {status.model.name} ({status.model.stat().st_size / 1e6:.0f} MB)")
    elif status.source.kind == "hub":
        # Not an error: the first run downloads it (and says so), or says to pull it when the hub is unreachable.
        report.warn(f"local model: {status.source.name} is not downloaded yet", status.model_advice())
        return status.runtime_version is not None
    elif status.model is None:
        missing(
            f"local model: the default model ({DEFAULT_MODEL_DISTRIBUTION}) is not installed",
            status.model_advice(),
        )
    else:
        missing(f"local model: {status.model} not found", status.model_advice())
    return status.ready


def _inside_git_repository(root: Path) -> bool:
    from hive_cli.git_commands import HiveGit
    from hive_cli.git_commands import UnsafeRepository

    try:
        return HiveGit(root).run("rev-parse", "--is-inside-work-tree").returncode == 0
    except (UnsafeRepository, OSError):
        return True  # a repository, only one whose configuration hive refuses to run git in


def _check_sandbox(report: _Report, settings: SandboxSettings) -> None:
    """How execute_command runs here: sandboxed, unconfined on purpose, unconfined for want of a sandbox
    (a warning), or refused (an error)."""
    status = sandbox_status(settings)
    line = f"sandbox: {status.summary}"
    if status.refuses:
        report.error(line, SANDBOX_ADVICE)
    elif status.confinement is None and status.mode == "auto":
        report.warn(line, SANDBOX_ADVICE)
    else:
        report.ok(line)


def _check_agents(report: _Report) -> None:
    """How many coding-agent CLIs are on ``PATH`` (found, not started: ``hive agents`` reads their versions)."""
    from hive_providers.backends.probe import find_executable
    from hive_providers.backends.registry import backend_specs

    specs = backend_specs()
    found = [spec.name for spec in specs if find_executable(spec) is not None]
    names = f": {', '.join(found)}" if found and report.verbose else ""
    report.ok(f"{len(found)} of {len(specs)} coding-agent CLIs installed{names} (`hive agents` lists them)")


def _check_files(report: _Report, root: Path, fix: bool) -> None:
    """hive's own files: the home, the modes of files holding keys, a legacy settings.json; repaired with
    ``fix`` (each repair said), else reported with the advice to run ``--fix``."""
    from .repair import find_problems
    from .repair import repair_all

    findings = find_problems(hive_home(), root)
    if not fix:
        for finding in findings:
            report.warn(finding.problem, "`hive doctor --fix` repairs what is marked ! under Files")
        if not findings:
            report.ok("the hive home and the files holding keys are in order")
        return
    for finding, done, repaired in repair_all(findings):
        if repaired:
            report.ok(f"fixed: {done}")
        else:
            report.error(f"{finding.problem}: cannot fix ({done})")
    if not findings:
        report.ok("the hive home and the files holding keys are in order: nothing to fix")


def _check_choice(report: _Report, loaded: LoadedConfig) -> str | None:
    """The provider a run would use, chosen exactly as a run chooses it (the same function, no ``-m`` or
    ``--provider``): its notices as warnings, or the error every run would stop with. The provider's name, or
    ``None`` when a run would fail."""
    from hive_providers.registry import choose_provider

    try:
        choice = choose_provider(loaded)
    except USER_ERRORS as exc:
        message = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        report.error(f"a run would fail: {message}", "set what is missing (`hive get` shows what is set)")
        return None
    for notice in choice.notices:
        report.warn(notice)
    model = choice.settings.model or "the default model"
    if choice.settings.provider == "local" and choice.settings.model:
        from hive_providers.local.model_source import UnknownModel
        from hive_providers.local.model_source import model_source

        # A file's name is enough; a hub repository's ``ORG/NAME`` is its name and must stay whole.
        try:
            is_file = model_source(choice.settings.model).kind == "path"
        except UnknownModel:
            is_file = False
        if is_file:
            model = Path(choice.settings.model).name
    report.ok(f"a run uses {choice.settings.provider}: {model}")
    return choice.settings.provider


def _check_fallback(report: _Report, loaded: LoadedConfig) -> None:
    """The ``fallback`` chain a run would build after its own provider, in order, or the error it would stop
    with."""
    from hive_providers.registry import fallback_providers

    try:
        chain = fallback_providers(loaded)
    except USER_ERRORS as exc:
        report.error(f"a run would fail: {exc}", "set up that provider, or take it out of the fallback list")
        return
    for number, settings in enumerate(chain, 1):
        report.ok(f"fallback {number}: {settings.provider}: {settings.model or 'the default model'}")


def _check_tracing(report: _Report) -> None:
    """One line: tracing on and where to, or off and why (a destination set without the extra is a warning)."""
    from hive_cli.telemetry import tracing_status

    status = tracing_status()
    if status.missing_extra:
        report.warn(f"tracing: {status.reason}", "`pip install 'hive-agent-cli[otel]'` adds OpenTelemetry")
    else:
        report.ok(f"tracing: {status.reason}")


def _check_store(report: _Report) -> None:
    """Which session store this project uses, whether it can be opened, and its schema version."""
    from hive_cli.session_store import open_session_store
    from hive_cli.session_store import session_store_location
    from hive_core.sessions import SessionStoreError
    from hive_core.sessions import SqliteSessionStore
    from hive_core.sessions import UnsupportedSchema

    try:
        where = mask_urls(session_store_location())
        with open_session_store() as store:
            if isinstance(store, SqliteSessionStore):
                kind = "SQLite"
                if not store.path.exists():  # the check creates nothing
                    report.ok(f"session store: SQLite file {where} (made by the first session)")
                    return
            else:
                kind = "PostgreSQL"
            version = store.schema_version()
    except (SessionStoreError, UnsupportedSchema, ConfigError) as exc:
        report.error(
            f"session store: {exc}", "check sessions.store (or --store) and that the database is reachable"
        )
        return
    report.ok(f"session store: {kind} {where}, reachable, schema version {version}")


_ENGINE_SECONDS = 10.0


def _check_engine(report: _Report, loaded: LoadedConfig | None, given: str | None) -> None:
    """The engine ``hive serve`` runs sessions on (``--engine``, else ``serve.engine``): whether it answers."""
    configured = loaded.get("serve.engine") if loaded is not None else None
    chosen = given or (configured if isinstance(configured, str) and configured else None)
    if chosen is None:
        report.ok("engine: none (hive serve runs sessions in its own process)")
        return
    from hive_cli.engine import EngineAddress
    from hive_cli.engine import EngineAddressError

    try:
        address = EngineAddress.parse(chosen)
    except EngineAddressError as exc:
        report.error(f"engine: {exc}", "fix serve.engine (or --engine)")
        return
    try:
        from hive_cli.engine.temporal import EngineUnreachable
        from hive_cli.engine.temporal import TemporalEngine
    except ImportError:
        report.error(
            f"engine: {address} needs the temporal extra", "`pip install 'hive-agent-cli[temporal]'`"
        )
        return

    async def answer() -> str:
        with anyio.fail_after(_ENGINE_SECONDS):
            engine = await TemporalEngine.connect(address)
            return await engine.check()

    try:
        said = anyio.run(answer)
    except EngineUnreachable as exc:
        report.error(f"engine: {exc}", "start the engine, or fix serve.engine (or --engine)")
        return
    except TimeoutError:
        report.error(
            f"engine: {address} did not answer within {_ENGINE_SECONDS:g} s",
            "start the engine, or fix serve.engine (or --engine)",
        )
        return
    report.ok(f"engine: Temporal {said}")


def doctor_main(*, verbose: bool, fix: bool = False, engine: str | None = None) -> int:
    """Run every check (``fix``: repairing hive's own files first); exit 1 when any error was found."""
    from hive_providers.registry import configured_providers

    report = _Report(verbose)
    root = find_project_root(Path.cwd())
    report.section("Files")
    _check_files(report, root, fix)
    report.section("Configuration")
    path = global_config_path()
    if path.exists():
        report.ok(f"global config: {path}")
    else:
        report.warn(f"no global config file ({path})", "`hive set <key> <value>` creates the global config")
    loaded = None
    try:
        loaded = load_config(root, schema=CONFIG_SCHEMA)
        report.ok(f"project: {root}")
        for warning in loaded.warnings:
            report.warn(str(warning))
    except ConfigError as exc:
        report.error(f"configuration cannot be read: {exc}", "fix the file named above")

    _check_store(report)
    _check_engine(report, loaded, engine)

    report.section("Providers")
    providers = configured_providers(loaded) if loaded is not None else []
    remote = [p for p in providers if p.provider != "local"]
    configured = CompactionSettings.from_config(loaded).max_context_tokens if loaded is not None else None
    local_missing = False
    for settings in providers:
        if settings.provider != "local" and not settings.model:
            report.warn(f"{settings.provider}: no model set", f"set {_model_key(settings)}")
            continue
        if settings.provider == "local" and not _check_local(report, settings, alone=not remote):
            local_missing = True
            continue
        model = settings.model or "the default model"
        if settings.provider == "local" and settings.model:
            model = Path(settings.model).name
        window, failure = _window(settings, configured)
        report.ok(f"{settings.provider}: {model}, window {window.describe()}")
        if failure is not None and report.verbose:
            sys.stdout.write(f"      the window could not be read: {failure}\n")
    chosen = _check_choice(report, loaded) if loaded is not None and providers else None
    if loaded is not None and chosen is not None:
        _check_fallback(report, loaded)
    if not providers:
        report.error(
            "no provider configured and local inference is off",
            "set OPENAI_API_KEY and OPENAI_MODEL (or another provider), or turn local inference back on",
        )
    elif chosen == "local" and not local_missing:
        report.ok("Using local inference only (local model, no key needed)")
        report.advice.append(
            "for faster or stronger answers, configure a remote provider (e.g. `hive set openai.apiKey ...`)"
        )

    report.section("Connectivity")
    for settings in providers[:3]:
        if settings.provider == "local" and local_missing:
            continue  # said under Providers
        try:
            names = anyio.run(_list_within, settings)
            report.ok(f"{settings.provider}: reachable ({len(names)} model(s))")
        except Exception as exc:  # every failure is reported, none stops the check
            report.error(
                f"{settings.provider}: not reachable",
                f"check the {settings.provider} endpoint and key",
                mask_urls(str(exc)),
            )

    report.section("Agents")
    _check_agents(report)

    if loaded is not None:
        report.section("Instructions and skills")
        check_knowledge(report, loaded, root, Path.cwd())

    report.section("Environment")
    if shutil.which("git"):
        report.ok("git is available")
        if _inside_git_repository(root):
            report.ok("the project is a git repository")
        else:
            report.warn(
                "the project is not a git repository",
                "`git init` lets you review and undo the agent's changes",
            )
    else:
        report.warn("git is not installed", "install git to review and undo the agent's changes")
    _check_sandbox(report, SandboxSettings.from_config(loaded) if loaded is not None else SandboxSettings())
    _check_tracing(report)
    free = shutil.disk_usage(root).free
    if free < 1 << 30:
        report.warn(f"less than 1 GB free on the disk of {root}")
    else:
        report.ok(f"{free / (1 << 30):.0f} GB free")

    sys.stdout.write("\n")
    if report.errors:
        sys.stdout.write("Some checks failed.\n")
    elif report.warnings:
        sys.stdout.write("Some warnings found.\n")
    else:
        sys.stdout.write("All checks passed!\n")
    for advice in report.advice:
        sys.stdout.write(f"  → {advice}\n")
    return 1 if report.errors else 0
