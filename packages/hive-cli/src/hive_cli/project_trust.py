"""The trust gate a session passes before it opens: the project root may not be the home folder or ``/``, and the
project's settings that lower protection are used only when the user trusts the project.

At a terminal (stdin and stdout a tty, not a served session) the user is asked once, y/N, default No; anywhere
else the settings are ignored with one line on stderr naming them and ``hive trust``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

from hive_core.config import HIVE_DIR_NAME
from hive_core.config import RULES_FILE_NAMES
from hive_core.config import ConfigSchema
from hive_core.config import IgnoredSetting
from hive_core.config import LoadedConfig
from hive_core.config import TrustStore
from hive_core.config import hive_home
from hive_core.config import home_project_problem
from hive_core.config import load_config
from hive_core.errors import UserError

__all__ = [
    "ProjectRootRefused",
    "at_terminal",
    "check_project_root",
    "ignored_line",
    "load_trusted_config",
    "settings_needing_trust",
]

Confirm = Callable[[str], bool]
"""Asks the user a y/N question (the text ends with the question) and says whether they answered yes."""

_ACCEPTED_ROOTS: set[Path] = set()
"""Roots the user accepted at the prompt in this process (a session opened again asks no more)."""


class ProjectRootRefused(UserError):
    """The project root is the home folder, a folder holding it, or ``/``."""


def at_terminal() -> bool:
    """Whether a person can be asked: stdin and stdout are both terminals."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _confirm(text: str) -> bool:
    """Ask on stderr, read the answer from stdin: yes only for ``y`` or ``yes``."""
    sys.stderr.write(f"{text} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def check_project_root(root: Path, *, ask: bool, confirm: Confirm = _confirm) -> None:
    """Refuse a project root at the home folder, above it, or at ``/`` (at a terminal, ``ask`` first).

    Raises :class:`ProjectRootRefused` with a one-line message saying what to do.
    """
    problem = home_project_problem(root)
    if problem is None or root in _ACCEPTED_ROOTS:
        return
    if ask and confirm(
        f"hive: {problem}: as a project, every file under it (~/.ssh, ~/.aws, the hive home...) would be open "
        "to the agent. Use it as the project anyway?"
    ):
        _ACCEPTED_ROOTS.add(root)
        return
    raise ProjectRootRefused(
        f"{problem}, which is never a project; start hive in a project's folder (a repository, or a folder "
        "of its own)"
    )


def settings_needing_trust(root: Path, loaded: LoadedConfig) -> list[IgnoredSetting]:
    """Every setting of the project at ``root`` that lowers protection and was ignored while loading ``loaded``
    untrusted: config keys and ``.env`` variables, the loosening parts of its rules, its MCP plugins."""
    from hive_core.mcp.config import project_plugin_settings

    from .delegation import untrusted_agent_endpoints

    return [
        *loaded.ignored,
        *_loosening_rules(root, loaded),
        *project_plugin_settings(root),
        *untrusted_agent_endpoints(loaded),
    ]


def _loosening_rules(root: Path, loaded: LoadedConfig) -> list[IgnoredSetting]:
    # The permissions package loads the shell parser (tens of milliseconds): a project with no rules of its own
    # is not worth it, and a one-shot run on the local model is loading the model meanwhile.
    rules_files = (root / HIVE_DIR_NAME / name for name in RULES_FILE_NAMES)
    if loaded.project_permissions is None and not any(path.exists() for path in rules_files):
        return []
    from hive_core.permissions import loosening_settings

    return loosening_settings(root, loaded.project_permissions, loaded.project_permissions_source)


def _relative(found: IgnoredSetting, root: Path) -> str:
    source = Path(found.source)
    shown = str(source.relative_to(root)) if source.is_relative_to(root) else found.source
    where = shown if found.line is None else f"{shown}:{found.line}"
    return f"{found.setting} ({where})"


def ignored_line(root: Path, found: Sequence[IgnoredSetting]) -> str:
    """The one line saying which settings of the untrusted project at ``root`` are ignored, and what to do."""
    listed = "; ".join(_relative(item, root) for item in found)
    return (
        f"hive: ignored the settings of {root} that lower protection, as the project is not trusted: {listed}; "
        "run `hive trust` to use them"
    )


def load_trusted_config(
    root: Path,
    schema: ConfigSchema,
    *,
    ask: bool,
    say: Callable[[str], None],
    confirm: Confirm = _confirm,
) -> LoadedConfig:
    """The configuration of the project at ``root``, its settings that lower protection used only when the user
    trusts it (or, with ``ask``, says yes now: recorded in the trust store, like a no).

    Writes (with ``say``) one line naming what was ignored. The permission rules and plugins are loaded after,
    with :attr:`LoadedConfig.trusted`.
    """
    store = TrustStore(hive_home())
    state = store.state(root)
    loaded = load_config(root, schema=schema, trusted=state == "trusted")
    if loaded.trusted:
        return loaded
    found = settings_needing_trust(root, loaded)
    if not found:
        return loaded
    if ask and state != "declined":
        listed = "\n".join(f"  {_relative(item, root)}" for item in found)
        changed = " (its files changed since you trusted it)" if state == "changed" else ""
        question = (
            f"hive: the project {root}{changed} has settings that lower protection:\n{listed}\n"
            "Trust this project and use them?"
        )
        if confirm(question):
            store.trust(root)
            return load_config(root, schema=schema, trusted=True)
        store.decline(root)
    say(ignored_line(root, found))
    return loaded
