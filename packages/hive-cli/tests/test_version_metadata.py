"""``hive --version`` reads the version from the package metadata, and nothing heavier than a file: it costs about
what ``python -c pass`` costs (``benchmarks/version_cpu.py`` measures it)."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from hive_cli.version import installed_version


def test_the_version_is_the_one_importlib_metadata_reads() -> None:
    assert installed_version() == metadata.version("hive-agent-cli")


def test_the_first_dist_info_on_the_path_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for entry, version in ((first, "1.2.3"), (second, "9.9.9")):
        info = entry / f"Some_Tool-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.4\nName: some-tool\nVersion: {version}\n\nVersion: 0.0.0 in the description\n",
            encoding="utf-8",
        )
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(first), str(second)])
    assert installed_version("some-tool") == "1.2.3"


def test_metadata_without_a_version_is_left_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "some_tool-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.4\nName: some-tool\n\nVersion: 1.0\n", encoding="utf-8"
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    monkeypatch.setattr(metadata, "version", lambda name: f"asked importlib.metadata for {name}")
    assert installed_version("some-tool") == "asked importlib.metadata for some-tool"


def test_version_imports_neither_importlib_metadata_nor_typing() -> None:
    entry = "import sys; from hive_cli.__main__ import main; sys.exit(main(['--version']))"
    shown = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", entry],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (shown.returncode, shown.stdout) == (0, f"hive {installed_version()}\n"), shown.stderr
    imported = {
        line.rpartition("|")[2].strip()
        for line in shown.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "hive_cli.version" in imported  # what importtime lists is what was imported
    assert not imported & {"importlib.metadata", "typing", "email"}, sorted(imported)
