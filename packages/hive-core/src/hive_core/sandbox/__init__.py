"""Confining ``execute_command``: an OS sandbox where the machine has one, and an environment without secrets.

On Linux, bubblewrap (``bwrap``) runs each command with the project writable, the rest of the file system
read-only, the hive home and credential stores hidden, the project's files the read rules refuse unreadable
(:mod:`.refused`), and no network unless ``sandbox.networkAccess`` allows it. Elsewhere (macOS, Windows) there
is no sandbox: ``auto`` runs commands unconfined, a mode that asks for a sandbox refuses them. Every command, sandboxed or not, inherits only an allow-list of variables.

:class:`SandboxSettings` is the ``sandbox`` configuration section; :func:`launch_command` turns a command into
what to start; :func:`sandbox_status` says how commands run here (``hive doctor`` shows it).
"""

from .bubblewrap import CREDENTIAL_STORES
from .bubblewrap import BubblewrapProbe
from .bubblewrap import bubblewrap_arguments
from .bubblewrap import probe_bubblewrap
from .environment import PASSED_VARIABLES
from .environment import command_environment
from .launch import SANDBOX_ADVICE
from .launch import CommandLaunch
from .launch import Confinement
from .launch import SandboxStatus
from .launch import SandboxUnavailable
from .launch import launch_command
from .launch import sandbox_status
from .refused import HIDDEN_LIMIT
from .refused import SCAN_LIMIT
from .refused import ReadJudge
from .refused import RefusedFinder
from .refused import RefusedPaths
from .refused import RefusedScanTooLarge
from .refused import refused_paths
from .settings import SANDBOX_MODES
from .settings import SandboxMode
from .settings import SandboxSettings

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
