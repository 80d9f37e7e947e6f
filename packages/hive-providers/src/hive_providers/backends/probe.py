"""Whether a coding-agent CLI is installed here, which version, and whether hive can run it.

:func:`probe_backend` finds the program and runs its version command (``gemini --version``) as hive runs every
child: in a process group of its own, killed whole when it does not answer in time. It never raises for a
missing or broken program: what is wrong is the probe's :attr:`~hive_core.backends.BackendProbe.problem`.

The version command runs with a throwaway ``HOME`` (and XDG directories under it) unless the options give one:
several CLIs create their configuration directory on any start, and a listing must not write into the user's.
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import anyio
import msgspec
from anyio.abc import ByteReceiveStream

from hive_core.backends import BackendProbe

from .kit.errors import BackendNotInstalled
from .kit.specs import BackendOptions
from .kit.specs import LaunchSpec

__all__ = [
    "IDENTITY_CHECKS",
    "PRIVATE_PREFIX",
    "check_identity",
    "find_executable",
    "parse_version",
    "probe_backend",
    "program_environment",
    "require_executable",
]

PRIVATE_PREFIX: Final = Path("~/.local/share/hive/agents")
"""The prefix the install commands of :mod:`~hive_providers.backends.registry` install into; its ``bin`` and
``node_modules/.bin`` are searched after ``PATH``."""

IDENTITY_CHECKS: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    # The seed's rule: an unrelated distributed shell is also called dsh, so the banner decides.
    "dsh": (("--help",), "DeepSeek Harness"),
}
"""Per backend: the arguments that print a banner, and the text it must contain for the program to be that CLI
(for names other programs also use)."""

_VERSION: Final = re.compile(r"(?<![\d.])\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?")
_OUTPUT_LIMIT: Final = 64 * 1024
_PIPE_GRACE: Final = 2.0


def parse_version(text: str) -> str | None:
    """The first version-looking token of ``text`` (``1.2.3``, ``0.19.0`` of ``v0.19.0``, ``0.1.5-rc.2``)."""
    found = _VERSION.search(text)
    return found.group(0) if found else None


def _search_path(options: BackendOptions | None) -> str:
    given = options.environment.get("PATH") if options is not None else None
    directories = [given if given is not None else os.environ.get("PATH", os.defpath)]
    prefix = PRIVATE_PREFIX.expanduser()
    directories += [str(prefix / "bin"), str(prefix / "node_modules" / ".bin")]
    return os.pathsep.join(directories)


def find_executable(spec: LaunchSpec, options: BackendOptions | None = None) -> str | None:
    """The program that would run: ``options.executable`` when given, else the first of the spec's
    :attr:`~LaunchSpec.executables` found on ``PATH`` (the options' ``PATH`` when they set one), then in
    :data:`PRIVATE_PREFIX`. ``None`` when there is none."""
    path = _search_path(options)
    if options is not None and options.executable:
        return shutil.which(options.executable, path=path)
    for name in spec.executables:
        found = shutil.which(name, path=path)
        if found is not None:
            return found
    return None


def require_executable(spec: LaunchSpec, options: BackendOptions | None = None) -> str:
    """:func:`find_executable`, or :class:`BackendNotInstalled` when there is none."""
    executable = find_executable(spec, options)
    if executable is None:
        raise BackendNotInstalled(spec.name, spec.executables, spec.install_hint)
    return executable


def program_environment(
    spec: LaunchSpec, options: BackendOptions | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment a CLI's process gets: ``base`` (default: this process's), the spec's variables, then the
    options' (which win)."""
    environment = dict(os.environ if base is None else base)
    environment.update(spec.environment)
    if options is not None:
        environment.update(options.environment)
    return environment


class _Captured:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.done = anyio.Event()

    @property
    def text(self) -> str:
        return "".join(self.parts)


async def _collect(stream: ByteReceiveStream, into: _Captured) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:
        async for chunk in stream:
            if into.size < _OUTPUT_LIMIT:
                into.parts.append(decoder.decode(chunk[: _OUTPUT_LIMIT - into.size]))
                into.size += len(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        into.done.set()


async def _run(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path, timeout: float
) -> tuple[int | None, str, str]:
    """Run ``argv`` reading no input; its exit code (``None`` when it was killed for running past ``timeout``)
    and what it printed on each stream. Nothing it started is left running."""
    from hive_core.child_processes import SupervisedProcess
    from hive_core.child_processes import open_child

    process: SupervisedProcess | None = None
    with anyio.CancelScope(shield=True):
        process = await open_child(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL)
    assert process is not None
    assert process.stdout is not None
    assert process.stderr is not None
    out, err = _Captured(), _Captured()
    finished = False
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_collect, process.stdout, out)
            tasks.start_soon(_collect, process.stderr, err)
            with anyio.move_on_after(timeout):
                await process.wait()
            finished = process.returncode is not None
            process.kill_tree()
            with anyio.move_on_after(_PIPE_GRACE):
                await out.done.wait()
                await err.done.wait()
            tasks.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            process.kill_tree()
        with anyio.CancelScope(shield=True):
            await process.aclose()
    return (process.returncode if finished else None), out.text, err.text


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


async def check_identity(
    spec: LaunchSpec,
    executable: str,
    env: Mapping[str, str] | None = None,
    *,
    cwd: Path | None = None,
    timeout: float = 15.0,
) -> str | None:
    """Why ``executable`` is not the CLI ``spec`` describes, for names other programs share (``dsh``, see
    :data:`IDENTITY_CHECKS`); ``None`` when it is, or when the spec needs no check. Run it before starting such
    a CLI, with the environment it will run with."""
    check = IDENTITY_CHECKS.get(spec.name)
    if check is None:
        return None
    arguments, banner = check
    shown = " ".join([Path(executable).name, *arguments])
    try:
        code, out, err = await _run([executable, *arguments], env or os.environ, cwd or Path.cwd(), timeout)
    except OSError as error:
        return f"{executable} cannot be started ({error})"
    if banner.lower() in (out + err).lower():
        return None
    if code is None:
        return f"`{shown}` did not answer within {timeout:g} s, so it is not known to be {spec.title}"
    return f"{executable} is another program than {spec.title}: its `{shown}` does not mention {banner!r}"


def _scratch_home(environment: dict[str, str], scratch: Path) -> dict[str, str]:
    """``environment`` with ``HOME`` and the XDG directories in ``scratch``."""
    home = scratch / "home"
    home.mkdir(exist_ok=True)
    environment["HOME"] = str(home)
    for variable, below in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ):
        environment[variable] = str(home / below)
    return environment


def _offline(spec: LaunchSpec) -> bool:
    if not spec.offline:
        return False
    try:
        from .offline import OFFLINE_RECIPES
    except ImportError:  # a tree without the recipes: nothing can be pointed at an endpoint
        return False
    return spec.name in OFFLINE_RECIPES


async def probe_backend(
    spec: LaunchSpec, options: BackendOptions | None = None, *, timeout: float = 15.0
) -> BackendProbe:
    """Whether ``spec``'s CLI is installed, its version, whether it speaks ACP and can run offline, and what
    stops it from running, if anything. Never raises for a missing, hanging or failing program."""
    executable = find_executable(spec, options)
    speaks_acp = spec.wire == "acp"
    offline = _offline(spec)
    found = BackendProbe(
        name=spec.name,
        installed=False,
        speaks_acp=speaks_acp,
        offline=offline,
        install_hint=spec.install_hint,
    )
    if executable is None:
        programs = (
            options.executable
            if options is not None and options.executable
            else " or ".join(spec.executables)
        )
        return _replace(
            found, problem=f"not installed: no {programs} on PATH; install it with: {spec.install_hint}"
        )
    found = _replace(found, executable=executable)
    keep_home = options is not None and "HOME" in options.environment
    with tempfile.TemporaryDirectory(prefix="hive-probe-") as scratch:
        environment = program_environment(spec, options)
        if not keep_home:
            environment = _scratch_home(environment, Path(scratch))
        cwd = options.cwd if options is not None else Path(scratch)
        mismatch = await check_identity(spec, executable, environment, cwd=cwd, timeout=timeout)
        if mismatch is not None:
            return _replace(found, problem=mismatch)
        version, trouble = await _read_version(spec, executable, environment, cwd, timeout)
    problem = trouble or spec.needs_login
    return _replace(found, installed=True, version=version, problem=problem)


async def _read_version(
    spec: LaunchSpec, executable: str, environment: Mapping[str, str], cwd: Path, timeout: float
) -> tuple[str | None, str | None]:
    """The version the program printed, and what went wrong running it, if anything."""
    shown = " ".join([Path(executable).name, *spec.version_arguments])
    try:
        code, out, err = await _run([executable, *spec.version_arguments], environment, cwd, timeout)
    except OSError as error:
        return None, f"{executable} cannot be started ({error})"
    if code is None:
        return None, f"`{shown}` did not answer within {timeout:g} s (it was stopped)"
    version = parse_version(out) or parse_version(err)
    if code != 0:
        said = _first_line(err) or _first_line(out)
        return version, f"`{shown}` failed with exit code {code}" + (f": {said}" if said else "")
    return version, None


def _replace(probe: BackendProbe, **changes: object) -> BackendProbe:
    return msgspec.structs.replace(probe, **changes)
