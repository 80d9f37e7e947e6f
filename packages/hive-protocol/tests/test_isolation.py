"""hive-protocol must work with msgspec alone: a client may install nothing else."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import msgspec
import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC.parent

PROBE = """
import sys
import hive_protocol
line = hive_protocol.encode(hive_protocol.TextDeltaEvent(content="ok"))
assert hive_protocol.decode_event(line) == hive_protocol.TextDeltaEvent(content="ok")
allowed = set(sys.stdlib_module_names) | {"hive_protocol", "msgspec", "__main__", "_distutils_hack"}
outside = sorted({name.split(".")[0] for name in sys.modules} - allowed)
print(",".join(outside))
"""


@pytest.mark.slow
def test_imports_with_only_msgspec_beside_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(Path(msgspec.__file__).parent, site / "msgspec")
    shutil.copytree(SRC / "hive_protocol", site / "hive_protocol")
    # As installed: the distribution's metadata beside the package (its __version__ is read from there).
    dist_info = site / f"hive_protocol-{metadata.version('hive-protocol')}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(metadata.distribution("hive-protocol").read_text("METADATA") or "")
    # -S leaves out site-packages, -E the environment: only the standard library and this folder are importable.
    code = f"import sys; sys.path.insert(0, {str(site)!r}); exec({PROBE!r})"
    result = subprocess.run(
        [sys.executable, "-S", "-E", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"hive_protocol imported modules outside msgspec: {result.stdout}"


@pytest.mark.slow
def test_wheel_requires_exactly_msgspec(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "uv",
            "build",
            "--wheel",
            "--no-sources",
            "--out-dir",
            str(tmp_path),
            str(PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("hive_protocol-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
    requires = metadata.get_all("Requires-Dist") or []
    assert [r.split(">")[0].split("=")[0].split("<")[0].strip() for r in requires] == ["msgspec"], requires
    assert "hive_protocol/schema.json" in names
    assert "hive_protocol/py.typed" in names
