"""The walls of DESIGN §3: what each package may import. A new import outside its wall fails here."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STDLIB = set(sys.stdlib_module_names) | {"__future__"}

CORE_STACK = {"hive_protocol", "anyio", "httpx2", "mcp", "yaml", "msgspec"}
PROVIDER_STACK = CORE_STACK | {"hive_core", "openai", "anthropic", "llama_cpp"}

WALLS: dict[str, tuple[Path, set[str]]] = {
    "hive_protocol": (ROOT / "packages/hive-protocol/src/hive_protocol", {"msgspec"}),
    "hive_core": (ROOT / "packages/hive-core/src/hive_core", CORE_STACK),
    "hive_providers": (ROOT / "packages/hive-providers/src/hive_providers", PROVIDER_STACK),
    "hive_cli": (
        ROOT / "packages/hive-cli/src/hive_cli",
        PROVIDER_STACK | {"hive_providers", "click", "rich", "prompt_toolkit"},
    ),
    "hive_conformance": (
        ROOT / "conformance/src/hive_conformance",
        {"hive_protocol", "anyio", "httpx2", "mcp", "msgspec", "starlette", "uvicorn"},
    ),
}

NEVER = {
    "hive_protocol": {"anyio", "httpx2", "hive_core", "hive_providers", "hive_cli", "hive_conformance"},
    "hive_core": {"hive_providers", "hive_cli", "openai", "anthropic", "llama_cpp"},
    "hive_providers": {"hive_cli"},
    "hive_conformance": {"hive_core", "hive_providers", "hive_cli"},
}


def imports_of(package_dir: Path, root: Path = ROOT) -> list[tuple[str, int, str]]:
    """Every absolute import under ``package_dir`` (also those inside functions): (file, line, top-level name)."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(package_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [
                    (str(path.relative_to(root)), node.lineno, alias.name.split(".")[0])
                    for alias in node.names
                ]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((str(path.relative_to(root)), node.lineno, node.module.split(".")[0]))
    return found


@pytest.mark.parametrize("package", WALLS)
def test_package_imports_stay_inside_its_wall(package: str) -> None:
    directory, allowed = WALLS[package]
    assert directory.is_dir()
    outside = [
        f"{file}:{line} imports {name}"
        for file, line, name in imports_of(directory)
        if name not in STDLIB and name != package and name not in allowed
    ]
    assert not outside, "\n".join(outside)


@pytest.mark.parametrize("package", NEVER)
def test_package_never_imports_the_forbidden(package: str) -> None:
    directory, _ = WALLS[package]
    hits = [
        f"{file}:{line} imports {name}"
        for file, line, name in imports_of(directory)
        if name in NEVER[package]
    ]
    assert not hits, "\n".join(hits)


def test_the_scanner_sees_imports_inside_functions(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "mod.py").write_text(
        "import os\n\ndef f():\n    from openai import OpenAI\n    import llama_cpp.x\n"
    )
    assert [(file, name) for file, _, name in imports_of(pkg, tmp_path)] == [
        ("pkg/mod.py", "os"),
        ("pkg/mod.py", "openai"),
        ("pkg/mod.py", "llama_cpp"),
    ]
