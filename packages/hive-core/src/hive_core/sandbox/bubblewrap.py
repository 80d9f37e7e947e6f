"""bubblewrap (``bwrap``): whether it can build a sandbox here, and the arguments that build hive's.

The sandbox sees the whole file system read-only (``--ro-bind / /``), a private ``/tmp``, ``/dev`` and
``/proc``; the project bound writable (or read-only) over that; the project's ``.git`` (all of it), ``.hive/``,
``.env``, ``.gitattributes``, ``.gitmodules`` and what git's configuration names in the project read-only, absent
ones too, so a command cannot rewrite its own rules or hive's endpoints, or plant code that git runs outside the
sandbox; the hive home, credential stores and daemon sockets hidden. It runs in new pid, ipc and (without network
access) network namespaces, in a session of its own, with every capability dropped, and it dies with its parent.

Capabilities matter when hive runs as root: without ``--cap-drop ALL`` a command keeps root's capabilities
inside the sandbox and can simply unmount what hides a file.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import msgspec

from .git_config_files import git_config_paths
from .placeholders import Placeholder

__all__ = [
    "CREDENTIAL_STORES",
    "GUARDED_NAMES",
    "BubblewrapProbe",
    "bubblewrap_arguments",
    "guarded_paths",
    "probe_bubblewrap",
]

CREDENTIAL_STORES: Final[tuple[str, ...]] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/containers",
    ".config/op",
    ".config/git/credentials",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".codex",
    ".claude",
    ".claude.json",
)
"""Files and directories under the home directory that hold credentials; each one that exists is hidden."""

_DAEMON_SOCKETS: Final = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
)
"""Sockets a read-only mount leaves connectable (connecting is not writing), each as good as root."""

_PROBE_TIMEOUT: Final = 10.0

_ISOLATION: Final = (
    "--unshare-pid",
    "--unshare-ipc",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)
_BASE_VIEW: Final = (
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--perms",
    "1777",
    "--tmpfs",
    "/dev/shm",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
)


class BubblewrapProbe(msgspec.Struct, frozen=True, kw_only=True):
    """What a trial run of bubblewrap found."""

    path: str | None
    """The ``bwrap`` program, when one is installed."""
    version: str | None = None
    """Its ``--version`` line (``bubblewrap 0.8.0``)."""
    problem: str | None = None
    """Why it cannot build hive's sandbox here; ``None`` when it can."""

    @property
    def usable(self) -> bool:
        """Whether commands can run in the sandbox."""
        return self.path is not None and self.problem is None


def probe_bubblewrap() -> BubblewrapProbe:
    """Whether the ``bwrap`` on ``PATH`` can build hive's sandbox: a trial run of ``true`` inside one.

    The answer is kept for the process (per ``bwrap`` program found), so only the first call costs a few
    milliseconds.
    """
    if sys.platform != "linux":
        return BubblewrapProbe(path=None, problem=f"there is no command sandbox on {_system_name()}")
    return _probe(shutil.which("bwrap"))


@functools.cache
def _probe(path: str | None) -> BubblewrapProbe:
    if path is None:
        return BubblewrapProbe(path=None, problem="bubblewrap (bwrap) is not installed")
    true = shutil.which("true") or "/bin/true"
    try:
        version = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=_PROBE_TIMEOUT, check=False
        ).stdout.strip()
        trial = subprocess.run(
            [path, *_BASE_VIEW, "--unshare-net", *_ISOLATION, "--", true],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env={},
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return BubblewrapProbe(path=path, problem=f"bubblewrap ({path}) cannot be run: {exc}")
    if trial.returncode == 0:
        return BubblewrapProbe(path=path, version=version or None)
    said = next(iter(reversed(trial.stderr.strip().splitlines())), f"exit code {trial.returncode}")
    problem = f"bubblewrap ({path}) cannot build a sandbox here: {said}"
    if "namespace" in said or "not permitted" in said:
        problem += (
            " (the system does not let it create namespaces: check sysctl kernel.unprivileged_userns_clone "
            "and, on Ubuntu, kernel.apparmor_restrict_unprivileged_userns; a container needs the right to)"
        )
    return BubblewrapProbe(path=path, version=version or None, problem=problem)


def _system_name() -> str:
    return {"darwin": "macOS", "win32": "Windows"}.get(sys.platform, sys.platform)


def bubblewrap_arguments(
    bwrap: str,
    command: Sequence[str],
    *,
    working_dir: Path,
    writable: bool,
    network: bool,
    writable_paths: Iterable[Path] = (),
    hidden_paths: Iterable[Path] = (),
    unreadable_paths: Iterable[Path] = (),
    home: Path | None = None,
    environ: Mapping[str, str] = os.environ,
) -> list[str]:
    """The command line that runs ``command`` in hive's sandbox, in ``working_dir``.

    The sandbox's ``/tmp`` is private, but the ``PATH`` directories and the Python installation that lie under
    the host's ``/tmp`` stay visible, read-only. ``writable`` binds the project (and ``writable_paths``) writable; otherwise it is read-only. ``hidden_paths``
    (the hive home, for one) are hidden as the credential stores under ``home`` (by default the user's) are:
    an empty directory over a directory, an unreadable file (``/dev/null`` on a mount without devices) over
    anything else. ``unreadable_paths`` (what the read rules refuse, see :mod:`.refused`) are covered last, so
    that nothing bound read-only inside the project shows them again, and so that a command opening one gets
    "Permission denied" rather than an empty file or folder it could take for the real one: a read-only folder
    no one may enter, an unreadable file; and the folders leading to them cannot be renamed. Paths that do not
    exist are skipped.
    """
    project = Path(os.path.realpath(working_dir))
    roots = [
        project,
        *(Path(os.path.realpath(path)) for path in writable_paths if writable and path.is_dir()),
    ]
    user_home = home if home is not None else _home(environ)
    hidden = [*hidden_paths, *(user_home / name for name in CREDENTIAL_STORES if user_home is not None)]
    hidden += [Path(socket) for socket in _DAEMON_SOCKETS]
    hidden += _runtime_dirs(environ)
    # A hidden directory that holds a root is covered before the roots are bound, so they stay seen;
    # everything else after, so a credential store inside the project is hidden too.
    before: list[str] = []
    after: list[str] = []
    seen: set[Path] = set()
    for path in hidden:
        real = Path(os.path.realpath(path))
        if real in seen or real == Path("/") or not real.exists():  # a dangling link has nothing to hide
            continue
        seen.add(real)
        cover = ["--tmpfs", str(real)] if real.is_dir() else ["--ro-bind", "/dev/null", str(real)]
        (before if any(root.is_relative_to(real) for root in roots) else after).extend(cover)
    arguments = [bwrap, *_BASE_VIEW, *_programs_under_tmp(environ), *before]
    for root in roots:
        arguments += ["--bind" if writable else "--ro-bind", str(root), str(root)]
    unreadable = [Path(os.path.realpath(path)) for path in unreadable_paths]
    if writable:
        # Before anything is bound inside the project: a bind shows the host's view of its source.
        arguments += _pinned(unreadable, roots)
        arguments += _guarded(project, roots)
    arguments += after
    arguments += _unreadable(unreadable, seen)
    if not network:
        arguments.append("--unshare-net")
    arguments += [*_ISOLATION, "--chdir", str(project), "--", *command]
    return arguments


GUARDED_NAMES: Final[tuple[tuple[str, bool], ...]] = (
    (".git", True),
    (".hive", True),
    (".env", False),
    # Directories where absent: git reads nothing from them and lists no empty directory as untracked, so the
    # command's `git status` shows no placeholder.
    (".gitattributes", True),
    (".gitmodules", True),
)
"""What stays read-only at the top of a writable project, present or not (name, whether an absent one is a
directory): what git runs or takes instructions from (the repository, its attributes and submodules) and what hive
reads its rules, configuration and keys from. An absent ``.env`` is an empty file, which tools that load it read
as no variables."""


def guarded_paths(project: Path) -> list[Placeholder]:
    """The paths of ``project`` (a writable one) that stay read-only in the sandbox, present or not: the
    :data:`GUARDED_NAMES`, the ``.env.*`` files there are, and the hooks directory and included configuration files
    git's configuration names inside the project (:func:`~hive_core.sandbox.git_config_files.git_config_paths`).

    Where one is absent, :func:`~hive_core.sandbox.placeholders.claim_placeholders` makes it before the sandbox
    starts, so it can be bound read-only (an empty ``.git`` directory: no ``git init`` or planted repository
    either).
    """
    real = Path(os.path.realpath(project))
    found = [Placeholder(real / name, directory) for name, directory in GUARDED_NAMES]
    found += [Placeholder(real / name, False) for name in _other_env_files(real)]
    configured = git_config_paths(real)
    named = [(configured.hooks, True)] if configured.hooks is not None else []
    named += [(path, False) for path in configured.includes]
    for path, directory in named:
        # Inside .git it is covered already; the project itself cannot be (a hooks path of ".").
        if path.is_relative_to(real) and path != real and not path.is_relative_to(real / ".git"):
            found.append(Placeholder(path, directory))
    return found


def _other_env_files(project: Path) -> list[str]:
    """The ``.env.*`` files (``.env.local``...) at the top of ``project``: read-only where they exist, like
    ``.env``; absent ones are not made up."""
    try:
        with os.scandir(project) as entries:
            return sorted(entry.name for entry in entries if entry.name.startswith(".env."))
    except OSError:
        return []


def _guarded(project: Path, roots: Sequence[Path]) -> list[str]:
    """The binds that keep :data:`GUARDED_NAMES` read-only inside a writable project, and every root's ``.git``
    (with the repository a ``.git`` file names, and that one's common directory, where they lie in a root).

    The whole ``.git`` is bound, as a mount point it cannot be renamed or removed either: its configuration,
    hooks, ``commondir``, ``info/``, ``modules/``, ``objects/info/alternates``... A command in the sandbox cannot
    commit. A guarded path still absent here (no placeholder could be made) is covered all the same: an empty
    read-only directory or an unwritable file, whose mount point bubblewrap leaves behind.
    """
    arguments: list[str] = []
    bound: set[Path] = set()

    def bind(path: Path) -> None:
        real = Path(os.path.realpath(path))
        if real not in bound and real.exists() and any(real.is_relative_to(root) for root in roots):
            bound.add(real)
            arguments.extend(["--ro-bind", str(real), str(real)])

    for path, directory in guarded_paths(project):
        if os.path.lexists(path):
            bind(path)
        elif not os.access(_nearest_existing(path.parent), os.W_OK):
            continue  # no mount point can be made, and nothing can be created there either
        elif directory:
            arguments += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            arguments += ["--ro-bind", "/dev/null", str(path)]
    for root in roots:
        git = root / ".git"
        if root != roots[0] and os.path.lexists(git):
            bind(git)
        for repository in _repositories_named_by(git):
            bind(repository)
    return arguments


def _nearest_existing(path: Path) -> Path:
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path


def _repositories_named_by(git: Path) -> list[Path]:
    """Where a ``.git`` sends git besides itself: a ``.git`` file's (a worktree's, a submodule's) ``gitdir:``, and
    the ``commondir`` of the repository (the main repository of a worktree)."""
    found: list[Path] = []
    gitdir = git
    try:
        if git.is_file():
            lines = git.read_text(encoding="utf-8", errors="replace").splitlines()
            if not lines or not lines[0].startswith("gitdir:"):
                return []
            gitdir = git.parent / lines[0].removeprefix("gitdir:").strip()
            found.append(gitdir)
        elif not git.is_dir():
            return []
        common = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return found
    if common:
        found.append(gitdir / common)
    return found


def _pinned(paths: Sequence[Path], roots: Sequence[Path]) -> list[str]:
    """Binds of each folder between a writable root and each of ``paths`` onto itself. A mount point cannot be
    renamed, so a command cannot move a refused file out from under the rule that names it (once ``data`` is
    renamed, ``data/private/**`` no longer matches) for the next command to read."""
    folders: set[Path] = set()
    for path in paths:
        root = next((root for root in roots if path.is_relative_to(root) and path != root), None)
        if root is not None:
            folders.update(
                parent for parent in path.parents if parent != root and parent.is_relative_to(root)
            )
    arguments: list[str] = []
    for folder in sorted(folders, key=lambda folder: len(folder.parts)):  # outer folders first
        if folder.is_dir() and not folder.is_symlink():
            arguments += ["--bind", str(folder), str(folder)]
    return arguments


def _unreadable(paths: Iterable[Path], covered: set[Path]) -> list[str]:
    """Covers that make each of ``paths`` (resolved) unreadable, even to a command owning the mount (a folder
    mounted read-only cannot be given its permissions back)."""
    arguments: list[str] = []
    for real in paths:
        if real in covered or real == Path("/") or not real.exists():
            continue
        covered.add(real)
        if real.is_dir():
            arguments += ["--perms", "0000", "--tmpfs", str(real), "--remount-ro", str(real)]
        else:
            arguments += ["--ro-bind", "/dev/null", str(real)]
    return arguments


def _programs_under_tmp(environ: Mapping[str, str]) -> list[str]:
    """Read-only binds that keep the programs a command can run outside runnable inside, where they live under
    ``/tmp``: the directories on ``PATH`` and the Python installation running hive (a checkout or virtual
    environment made in ``/tmp``). The rest of the host's ``/tmp`` stays out of sight, its sockets above all
    (a terminal multiplexer's socket there would run commands outside the sandbox)."""
    tmp = Path("/tmp")
    candidates = [sys.prefix, sys.base_prefix, *environ.get("PATH", "").split(os.pathsep)]
    arguments: list[str] = []
    seen: set[Path] = set()
    for text in candidates:
        if not text.startswith("/"):
            continue
        real = Path(os.path.realpath(text))
        if real in seen or real == tmp or not real.is_relative_to(tmp) or not real.is_dir():
            continue
        seen.add(real)
        arguments += ["--ro-bind", str(real), str(real)]
    return arguments


def _home(environ: Mapping[str, str]) -> Path | None:
    home = environ.get("HOME", "")
    return Path(home) if home.startswith("/") else None


def _runtime_dirs(environ: Mapping[str, str]) -> list[Path]:
    """The user's runtime directories: agent, bus and keyring sockets live there."""
    found = [Path(f"/run/user/{os.getuid()}")]
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        found.append(Path(runtime))
    return found
