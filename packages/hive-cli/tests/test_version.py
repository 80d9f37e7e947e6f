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


def test_version_and_help_import_no_provider_sdk_mcp_or_llama() -> None:
    probe = (
        "import sys\n"
        "from hive_cli.__main__ import main\n"
        "import contextlib, io\n"
        "for args in (['--version'], ['--help'], ['run', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main(args) == 0, args\n"
        "heavy = {'openai', 'anthropic', 'mcp', 'llama_cpp', 'httpx2'}\n"
        # The web tools' libraries (hive-core's `web` extra) load when a web tool first runs.
        "heavy |= {'httpcore2', 'ddgs', 'primp', 'trafilatura', 'lxml', 'protego'}\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
