"""What the ``sandbox`` section of the configuration asks for, as one value the command tool reads."""

from __future__ import annotations

from pathlib import Path
from typing import Final
from typing import Literal
from typing import cast

import msgspec

from hive_core.config import LoadedConfig
from hive_core.config import project_env_path

__all__ = ["SANDBOX_MODES", "SandboxMode", "SandboxSettings"]

SandboxMode = Literal["auto", "workspace-write", "read-only", "off"]
"""How commands are confined.

- ``workspace-write``: the project (and :attr:`SandboxSettings.writable_paths`) writable, the rest of the file
  system read-only, credential stores hidden; refused where no sandbox can run.
- ``read-only``: the same, with the project read-only too (only a private ``/tmp`` is writable).
- ``off``: commands run unconfined (their environment is still scrubbed).
- ``auto`` (the default): ``workspace-write`` where the machine offers a sandbox, else ``off``.
"""

SANDBOX_MODES: Final[tuple[SandboxMode, ...]] = ("auto", "workspace-write", "read-only", "off")
"""Every mode, as ``sandbox.mode`` accepts it."""


class SandboxSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How ``execute_command`` confines a command and which variables it inherits.

    The default value is what an SDK user gets without configuration: ``auto`` mode, no network, only the
    built-in variables passed.
    """

    mode: SandboxMode = "auto"
    """How commands are confined (``sandbox.mode``)."""
    network_access: bool = False
    """Whether a sandboxed command may use the network (``sandbox.networkAccess``); unconfined commands always
    can."""
    passed_variables: tuple[str, ...] = ()
    """Variables commands inherit besides the built-in list (``sandbox.passVariables``): names, where ``*``
    matches any run of characters."""
    writable_paths: tuple[Path, ...] = ()
    """More directories a ``workspace-write`` command may write to (``sandbox.writablePaths``), absolute."""
    withheld_variables: frozenset[str] = frozenset()
    """Variables never passed, whatever lists them: the ones hive reads its configuration and keys from."""
    hive_home: Path | None = None
    """The hive home, hidden from sandboxed commands; ``None`` for the one the environment names."""
    hidden_paths: tuple[Path, ...] = ()
    """More files and directories a sandboxed command cannot see (the project's ``.env`` when hive reads keys
    from it)."""

    @classmethod
    def from_config(cls, loaded: LoadedConfig) -> SandboxSettings:
        """The ``sandbox`` section of ``loaded`` (defaults when its schema has none), with every variable the
        schema reads withheld and the project's ``.env`` hidden when it sets one of them."""
        section = loaded.section("sandbox") if "sandbox" in loaded.schema else {}
        withheld = frozenset(variable.name for variable in loaded.schema.environment)
        hidden: tuple[Path, ...] = ()
        if withheld & loaded.dotenv.keys():
            hidden = (project_env_path(loaded.project_root),)
        return cls(
            mode=cast("SandboxMode", section.get("mode") or "auto"),
            network_access=bool(section.get("networkAccess", False)),
            passed_variables=tuple(cast("list[str]", section.get("passVariables") or [])),
            writable_paths=tuple(
                _absolute(text, loaded.project_root)
                for text in cast("list[str]", section.get("writablePaths") or [])
            ),
            withheld_variables=withheld,
            hive_home=loaded.home,
            hidden_paths=hidden,
        )


def _absolute(text: str, root: Path) -> Path:
    """A configured path: ``~`` expanded, relative paths from the project root."""
    return (root / Path(text).expanduser()).absolute()
