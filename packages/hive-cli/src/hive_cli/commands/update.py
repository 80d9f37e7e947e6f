"""``hive update``: is there a newer hive-cli on the package index, and how to get it."""

from __future__ import annotations

import re
import subprocess
import sys

from hive_cli import __version__

__all__ = ["latest_version", "update_main"]

_TIMEOUT = 30.0


def _parse(version: str) -> tuple[int | str, ...]:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"[.+-]", version))


def latest_version() -> str:
    """The newest hive-cli the configured package index offers (asked through pip, which knows the index).

    Raises ``RuntimeError`` with pip's explanation when the index cannot be reached or has no hive-cli.
    """
    command = [
        sys.executable,
        "-m",
        "pip",
        "index",
        "versions",
        "hive-cli",
        "--disable-pip-version-check",
        "--retries",
        "1",
        "--timeout",
        "15",
    ]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"could not ask the package index: {exc}") from None
    match = re.search(r"^hive-cli \(([^)]+)\)", result.stdout, re.MULTILINE)
    if result.returncode != 0 or match is None:
        lines = [line for line in (result.stderr or result.stdout).strip().splitlines() if line.strip()]
        detail = lines[-1] if lines else f"pip exited with {result.returncode}"
        raise RuntimeError(detail.removeprefix("ERROR: "))
    return match.group(1)


def update_main(*, check: bool) -> int:
    """Say whether an update exists. Exit 0, or 2 with ``--check`` when a newer version exists."""
    try:
        latest = latest_version()
    except RuntimeError as exc:
        sys.stderr.write(
            f"hive {__version__}: could not check for updates (offline, or the package index is unreachable): {exc}\n"
        )
        return 0
    if _parse(latest) <= _parse(__version__):
        sys.stdout.write(f"hive {__version__} is up to date.\n")
        return 0
    sys.stdout.write(
        f"hive-cli {latest} is available (you have {__version__}).\n"
        "Upgrade with the tool you installed it with:\n"
        "  pipx upgrade hive-cli\n"
        "  uv tool upgrade hive-cli\n"
        "  python -m pip install --upgrade hive-cli\n"
    )
    return 2 if check else 0
