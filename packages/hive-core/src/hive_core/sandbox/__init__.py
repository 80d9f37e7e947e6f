"""Confining ``execute_command``: an OS sandbox where the machine has one, and an environment without secrets.

On Linux, bubblewrap (``bwrap``) runs each command with the project writable, the rest of the file system
read-only, the hive home and credential stores hidden, the project's files the read rules refuse unreadable
(:mod:`.refused`), and no network unless ``sandbox.networkAccess`` allows it. Elsewhere (macOS, Windows) there
is no sandbox: ``auto`` runs commands unconfined, a mode that asks for a sandbox refuses them. Every command, sandboxed or not, inherits only an allow-list of variables.

:class:`SandboxSettings` is the ``sandbox`` configuration section; :func:`launch_command` turns a command into
what to start; :func:`sandbox_status` says how commands run here (``hive doctor`` shows it).
"""

from .bubblewrap import CREDENTIAL_STORES, BubblewrapProbe, bubblewrap_arguments, probe_bubblewrap
from .environment import PASSED_VARIABLES, command_environment
from .launch import (
    SANDBOX_ADVICE,
    CommandLaunch,
    Confinement,
    SandboxStatus,
    SandboxUnavailable,
    launch_command,
    sandbox_status,
)
from .refused import (
    HIDDEN_LIMIT,
    SCAN_LIMIT,
    ReadJudge,
    RefusedFinder,
    RefusedPaths,
    RefusedScanTooLarge,
    refused_paths,
)
from .settings import SANDBOX_MODES, SandboxMode, SandboxSettings

__all__ = [
    "CREDENTIAL_STORES",
    "HIDDEN_LIMIT",
    "PASSED_VARIABLES",
    "SANDBOX_ADVICE",
    "SANDBOX_MODES",
    "SCAN_LIMIT",
    "BubblewrapProbe",
    "CommandLaunch",
    "Confinement",
    "ReadJudge",
    "RefusedFinder",
    "RefusedPaths",
    "RefusedScanTooLarge",
    "SandboxMode",
    "SandboxSettings",
    "SandboxStatus",
    "SandboxUnavailable",
    "bubblewrap_arguments",
    "command_environment",
    "launch_command",
    "probe_bubblewrap",
    "refused_paths",
    "sandbox_status",
]
