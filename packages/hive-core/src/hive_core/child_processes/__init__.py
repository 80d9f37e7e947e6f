"""Child processes that die with hive, whatever ends hive: SIGKILL included.

Every process hive starts (a command, an MCP stdio server, a coding-agent CLI) goes through one
:class:`ChildSupervisor` (:func:`child_supervisor`): it is started in a session of its own, its environment
carries the owner marker ``HIVE_OWNER=<hive pid>:<nonce>.<n>`` (:data:`OWNER_VARIABLE`; ``n`` numbers the
children), which its descendants inherit, and its process group is registered. :func:`open_child` does all of
that around ``anyio.open_process``, and closing the process it returns also kills what that child left running
outside its group (found by its mark); a spawner that cannot use it (the ``mcp`` SDK spawns its servers itself)
passes :meth:`ChildSupervisor.environment` as the child's environment.

Why a watchdog. A parent-death signal (``PR_SET_PDEATHSIG``) reaches only the direct child, needs a hook
between fork and exec that neither anyio nor the ``mcp`` SDK offers, and is lost on the child's next exec of a
set-id program; a child subreaper keeps orphans only while hive lives, and once hive is killed they go to
init. So the first spawn also starts a tiny watchdog (``_watchdog.py``: a bare interpreter, the standard
library only, in a session of its own, immune to the Ctrl+C and SIGTERM meant for hive). It holds the read end
of a pipe whose only write end is hive's. However hive ends (exit, exception, signal, SIGKILL, a crash) the
kernel closes that end; the watchdog reads the end of the pipe, kills every registered process group, then
every process whose ``/proc/<pid>/environ`` carries the marker, scanning until none is left, and exits. The
marker catches what left the process group (``setsid``, daemons); the group catches what cleared its
environment. Only a descendant that does both escapes (the command sandbox's PID namespace catches even that).
A nested hive carries the outer marker, so the outer watchdog kills it, and its own watchdog kills its children.

Cost: nothing is started for a command that spawns no child (``hive --version`` never imports this package);
the first spawn pays one ``posix_spawn`` (about a millisecond; the watchdog's interpreter starts beside hive,
not before it).

Elsewhere: without ``/proc`` (macOS, the BSDs) the watchdog kills the registered process groups only, so a
descendant that left its group survives a SIGKILL of hive. On Windows there is no watchdog: a command's process
tree is ended with ``taskkill /T`` when its call ends, and the ``mcp`` SDK puts each server in a job object.
"""

from .supervisor import OWNER_VARIABLE
from .supervisor import ChildSupervisor
from .supervisor import SupervisedProcess
from .supervisor import child_supervisor
from .supervisor import open_child

__all__ = ["OWNER_VARIABLE", "ChildSupervisor", "SupervisedProcess", "child_supervisor", "open_child"]
