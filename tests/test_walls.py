"""The walls between the packages (ARCHITECTURE.md): what each package may import, and the kernel inside hive-core. A new import outside
its wall fails here."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STDLIB = set(sys.stdlib_module_names) | {"__future__"}

CORE_STACK = {
    "hive_protocol",
    "anyio",
    "httpx2",
    "mcp",
    "yaml",
    "msgspec",
    "pathspec",
    "wcmatch",
    "bracex",
    "tree_sitter",
    "tree_sitter_bash",
    # httpx2's own transport layer (the web tools pin connections through it), and the `web` extra.
    "httpcore2",
    "ddgs",
    "trafilatura",
    "protego",
    # The `postgresql` extra: the PostgreSQL session store, imported only when such a store is chosen.
    "psycopg",
    "psycopg_pool",
}
PROVIDER_STACK = CORE_STACK | {
    "hive_core",
    "openai",
    "anthropic",
    "llama_cpp",
    "huggingface_hub",
    "acp",
    "genai_prices",
}

WALLS: dict[str, tuple[Path, set[str]]] = {
    "hive_protocol": (ROOT / "packages/hive-protocol/src/hive_protocol", {"msgspec"}),
    "hive_core": (ROOT / "packages/hive-core/src/hive_core", CORE_STACK),
    "hive_providers": (ROOT / "packages/hive-providers/src/hive_providers", PROVIDER_STACK),
    "hive_cli": (
        ROOT / "packages/hive-cli/src/hive_cli",
        PROVIDER_STACK
        | {
            "hive_providers",
            "click",
            "rich",
            "prompt_toolkit",
            "ruamel",
            "packaging",
            "starlette",
            "uvicorn",
            # AG-UI's own types for the /api/ag-ui route, and the pydantic they are built on.
            "ag_ui",
            "pydantic",
            # The otel extra: traces exported with the OpenTelemetry SDK, imported only when tracing is on.
            "opentelemetry",
            # The temporal extra: the engine's client and worker, imported only by --engine and `hive worker`.
            "temporalio",
        },
    ),
    "hive_conformance": (
        ROOT / "conformance/src/hive_conformance",
        {"hive_protocol", "anyio", "httpx2", "mcp", "msgspec", "starlette", "uvicorn"},
    ),
}

CORE_DIR = ROOT / "packages/hive-core/src/hive_core"

KERNEL = (
    "_closing",
    "approvals",
    "backends",
    "budget",
    "chat",
    "context",
    "errors",
    "execution_log",
    "failures",
    "fallback",
    "hitl",
    "loop",
    "messages",
    "pipeline",
    "questions",
    "redaction",
    "runners",
    "session_id",
    "spending",
    "testing",
    "tool_names",
    "tool_retrieval",
    "tool_round",
    "tools",
    "tracing",
    "turn_deadline",
    "turn_request",
)
"""hive-core's kernel (ARCHITECTURE.md): the SDK a host builds on. A module or package of hive_core by its name."""

HOST = (
    "agents_md",
    "builtin_tools",
    "child_processes",
    "config",
    "mcp",
    "permissions",
    "sandbox",
    "sessions",
    "skills",
    "web",
)
"""hive-core's host modules: what the kernel never imports."""

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


def core_imports_of(
    path: Path, package_dir: Path = CORE_DIR, package: str = "hive_core"
) -> list[tuple[int, str]]:
    """The modules of ``package`` that the file at ``path`` imports (line, dotted name), relative imports resolved.

    ``from . import x`` counts as importing ``<package>.x``, since ``x`` may be a module.
    """
    parts = [package, *path.relative_to(package_dir).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    else:
        parts.pop()  # a module's relative imports start from its package
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = parts[: len(parts) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if node.module:
                found.append((node.lineno, module))
            else:
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in found if name == package or name.startswith(package + ".")]


def kernel_files() -> list[Path]:
    files: list[Path] = []
    for name in KERNEL:
        module = CORE_DIR / f"{name}.py"
        files += [module] if module.is_file() else sorted((CORE_DIR / name).rglob("*.py"))
    return files


def test_every_module_of_hive_core_is_kernel_or_host() -> None:
    names = {path.stem for path in CORE_DIR.glob("*.py")} | {
        path.name for path in CORE_DIR.iterdir() if (path / "__init__.py").is_file()
    }
    assert names - {"__init__"} == set(KERNEL) | set(HOST)
    assert not set(KERNEL) & set(HOST)


def test_the_kernel_imports_nothing_of_the_host() -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in kernel_files()
        for line, name in core_imports_of(path)
        if name.split(".")[1:2] and name.split(".")[1] in HOST
    ]
    assert kernel_files()
    assert not hits, "\n".join(hits)


def test_the_core_scanner_resolves_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "hive_core"
    (pkg / "runners").mkdir(parents=True)
    (pkg / "runners" / "mod.py").write_text(
        "from .turns import T\n"
        "from .. import sessions\n"
        "from ..config.paths import hive_home\n"
        "import hive_core.mcp\n"
        "def f():\n    from ...elsewhere import x\n    from hive_core.permissions import P\n"
        "import os\n"
    )
    (pkg / "runners" / "__init__.py").write_text("from .mod import f\nfrom . import turns\n")
    assert [name for _, name in core_imports_of(pkg / "runners" / "mod.py", pkg)] == [
        "hive_core.runners.turns",
        "hive_core.sessions",
        "hive_core.config.paths",
        "hive_core.mcp",
        "hive_core.permissions",
    ]
    assert [name for _, name in core_imports_of(pkg / "runners" / "__init__.py", pkg)] == [
        "hive_core.runners.mod",
        "hive_core.runners.turns",
    ]


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


@pytest.mark.parametrize(
    ("tests_dir", "forbidden"),
    [
        ("packages/hive-protocol/tests", {"hive_core", "hive_providers", "hive_cli", "hive_conformance"}),
        ("packages/hive-core/tests", {"hive_providers", "hive_cli", "hive_conformance"}),
    ],
)
def test_a_lower_packages_tests_import_nothing_above_it(tests_dir: str, forbidden: set[str]) -> None:
    """hive-protocol and hive-core are tested alone: their tests import none of the packages built on them."""
    directory = ROOT / tests_dir
    assert directory.is_dir()
    hits = [
        f"{file}:{line} imports {name}" for file, line, name in imports_of(directory) if name in forbidden
    ]
    assert not hits, "\n".join(hits)


PROVIDERS_DIR = ROOT / "packages/hive-providers/src/hive_providers"
BACKENDS_DIR = PROVIDERS_DIR / "backends"
BACKEND_PACKAGES = ("acp", "claude", "codex", "copilot", "omp", "opencode", "pi")
"""The coding-agent backends, one package a CLI family; ``backends/kit`` is the floor they all stand on."""
KNOWN_BACKEND_EDGES = {
    # OMP is a fork of Pi: its backend and turn extend Pi's, and it speaks Pi's events and dialogs.
    ("omp", "pi"),
}
"""The one import of a backend package by another: OMP's of Pi, a fork's."""


def backend_edges(backends_dir: Path = BACKENDS_DIR, package_dir: Path = PROVIDERS_DIR) -> list[str]:
    """Every import of a backend package by ``kit`` or by another backend package (relative ones resolved), as
    ``"file:line importer -> imported"``."""
    edges: list[str] = []
    for path in sorted(backends_dir.rglob("*.py")):
        inside = path.relative_to(backends_dir).parts
        if len(inside) < 2:
            continue  # the house above the backends (registry, pool, probe): it may name them all
        importer = inside[0]
        for line, name in core_imports_of(path, package_dir, package_dir.name):
            parts = name.split(".")
            imported = parts[2] if parts[1:2] == ["backends"] and len(parts) > 2 else None
            if imported in BACKEND_PACKAGES and imported != importer:
                edges.append(f"{path.relative_to(package_dir)}:{line} {importer} -> {imported}")
    return edges


def test_the_backends_kit_is_their_floor() -> None:
    assert (BACKENDS_DIR / "kit").is_dir()
    assert all((BACKENDS_DIR / name).is_dir() for name in BACKEND_PACKAGES)
    kit = [edge for edge in backend_edges() if edge.split()[1] == "kit"]
    assert not kit, "\n".join(kit)


def test_no_backend_package_imports_another() -> None:
    edges = [
        edge
        for edge in backend_edges()
        if edge.split()[1] != "kit" and (edge.split()[1], edge.split()[3]) not in KNOWN_BACKEND_EDGES
    ]
    assert not edges, "\n".join(edges)


def test_the_backend_scanner_sees_relative_and_absolute_edges(tmp_path: Path) -> None:
    package = tmp_path / "hive_providers"
    for folder in ("kit", "codex", "claude"):
        (package / "backends" / folder).mkdir(parents=True)
    (package / "backends" / "registry.py").write_text("from .claude import backend\n")
    (package / "backends" / "kit" / "floor.py").write_text(
        "from ..codex import app_server\nfrom . import transport\n"
    )
    (package / "backends" / "claude" / "backend.py").write_text(
        "from .stream import S\nfrom ..kit.floor import F\n"
        "def f():\n    from hive_providers.backends.codex.items import I\n"
    )
    assert backend_edges(package / "backends", package) == [
        "backends/claude/backend.py:4 claude -> codex",
        "backends/kit/floor.py:1 kit -> codex",
    ]
