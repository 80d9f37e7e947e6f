"""Deciding how a command runs: in the sandbox, unconfined, or not at all, and with which environment.

The rule, failing closed: a mode the user set (``workspace-write``, ``read-only``) is kept or the command is
refused; only ``auto`` (the default) falls back to running unconfined where no sandbox can run, which
``hive doctor`` reports as a warning. The environment is scrubbed in every case.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Final
from typing import Literal
from typing import NamedTuple

import msgspec

from hive_core.config import hive_home
from hive_core.errors import UserError

from .bubblewrap import bubblewrap_arguments
from .bubblewrap import guarded_paths
from .bubblewrap import probe_bubblewrap
from .environment import command_environment
from .placeholders import claim_placeholders
from .settings import SandboxMode
from .settings import SandboxSettings

__all__ = [
    "SANDBOX_ADVICE",
    "CommandLaunch",
    "Confinement",
    "SandboxStatus",
    "SandboxUnavailable",
    "launch_command",
    "sandbox_status",
]

Confinement = Literal["workspace-write", "read-only"]
"""How a sandboxed command is confined: the project writable, or nothing but ``/tmp``."""

SANDBOX_ADVICE: Final = (
    "install bubblewrap (Debian and Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap) where it "
    "may create namespaces, or set sandbox.mode: off to run commands unconfined"
    if sys.platform == "linux"
    else "hive sandboxes commands on Linux only; set sandbox.mode: off to run them unconfined"
)
"""What to do when no sandbox can run."""


class SandboxUnavailable(UserError, RuntimeError):
    """``sandbox.mode`` asks for a sandbox and none can run here; the command is not run."""


class SandboxStatus(msgspec.Struct, frozen=True, kw_only=True):
    """How commands run with some settings on this machine."""

    mode: SandboxMode
    """The mode the settings ask for."""
    confinement: Confinement | None
    """The sandbox commands get; ``None`` when they run unconfined or are refused."""
    network_access: bool
    """Whether a sandboxed command may use the network."""
    bubblewrap: str | None = None
    """The sandbox program's version line, when it works."""
    problem: str | None = None
    """Why no sandbox can run here; ``None`` when one can."""

    @property
    def refuses(self) -> bool:
        """Whether commands are refused: the mode needs a sandbox that cannot run."""
        return self.confinement is None and self.mode in ("workspace-write", "read-only")

    @property
    def summary(self) -> str:
        """One line for people: the mode, and what it means here."""
        if self.confinement is not None:
            network = "with network" if self.network_access else "no network"
            via = f" ({self.bubblewrap})" if self.bubblewrap else ""
            return f"{self.confinement}, {network}{via}"
        if self.refuses:
            return f"{self.mode}, but no sandbox can run here, so commands are refused: {self.problem}"
        if self.mode == "off":
            return "off (sandbox.mode): commands run unconfined"
        return f"unavailable, so commands run unconfined: {self.problem}"


def sandbox_status(settings: SandboxSettings) -> SandboxStatus:
    """How commands run with ``settings`` here (the first call tries the sandbox once, see
    :func:`~hive_core.sandbox.probe_bubblewrap`)."""
    if settings.mode == "off":
        return SandboxStatus(mode="off", confinement=None, network_access=True)
    probe = probe_bubblewrap()
    confinement: Confinement | None = None
    if probe.usable:
        confinement = "read-only" if settings.mode == "read-only" else "workspace-write"
    return SandboxStatus(
        mode=settings.mode,
        confinement=confinement,
        network_access=settings.network_access if confinement is not None else True,
        bubblewrap=probe.version if probe.usable else None,
        problem=probe.problem,
    )


class CommandLaunch(NamedTuple):
    """What to start for a command."""

    argv: list[str]
    """The program and its arguments (the sandbox program first when it is confined)."""
    env: dict[str, str]
    """Its whole environment."""
    status: SandboxStatus
    """How it is confined."""
    release: Callable[[], None] = lambda: None
    """Call once the command has ended (however it ended): removes the empty mount points the sandbox needed
    where guarded paths were absent (``.git``, ``.env``...), so the tree is left as it was."""


def launch_command(
    command: Sequence[str],
    *,
    working_dir: Path,
    settings: SandboxSettings,
    environ: Mapping[str, str] = os.environ,
    unreadable_paths: Iterable[Path] = (),
) -> CommandLaunch:
    """How to start ``command`` (a program and its arguments) in ``working_dir`` under ``settings``.

    A sandboxed command cannot read ``unreadable_paths`` (what the read rules refuse, see
    :func:`~hive_core.sandbox.refused_paths`); an unconfined one can, nothing can stop it.

    Raises :class:`SandboxUnavailable` when the settings ask for a sandbox that cannot run here.
    """
    status = sandbox_status(settings)
    if status.refuses:
        raise SandboxUnavailable(
            f"sandbox.mode is {status.mode}, but {status.problem}, so the command was not run; {SANDBOX_ADVICE}"
        )
    env = command_environment(environ, passed=settings.passed_variables, withheld=settings.withheld_variables)
    probe = probe_bubblewrap()
    if status.confinement is None or probe.path is None:
        return CommandLaunch(list(command), env, status)
    writable = status.confinement == "workspace-write"
    roots = [working_dir, *(settings.writable_paths if writable else ())]
    temporary = env.get("TMPDIR")
    if temporary is not None and not any(Path(temporary).is_relative_to(root) for root in roots):
        env["TMPDIR"] = "/tmp"  # the sandbox's own; the one outside is read-only in there
    home = settings.hive_home if settings.hive_home is not None else hive_home(environ)
    claim = claim_placeholders(guarded_paths(working_dir) if writable else ())
    try:
        argv = bubblewrap_arguments(
            probe.path,
            command,
            working_dir=working_dir,
            writable=writable,
            network=status.network_access,
            writable_paths=settings.writable_paths,
            hidden_paths=(home, *settings.hidden_paths),
            unreadable_paths=unreadable_paths,
            environ=environ,
        )
    except BaseException:
        claim.release()
        raise
    return CommandLaunch(argv, env, status, claim.release)
