from __future__ import annotations

import subprocess
import sys

import hive_cli


def test_hive_version_prints_the_package_version() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "hive_cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"hive {hive_cli.__version__}\n"


def test_unknown_command_says_it_is_not_there_yet() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "hive_cli", "-p", "hi"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "not implemented yet" in result.stderr
    assert result.stdout == ""
