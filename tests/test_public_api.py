"""The public surface of every distribution: each package's ``__all__`` (subpackages included) names what exists,
is sorted, and leaves nothing public out; each distribution's ``__version__`` is its installed version.

Generic on purpose: it reads ``__all__`` and the module, so a package that adds or removes a name needs no edit
here, only a consistent ``__init__``.
"""

from __future__ import annotations
import __future__

import importlib
import inspect
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import cast

import pytest

ROOT = Path(__file__).resolve().parents[1]

SOURCES: dict[str, Path] = {
    "hive-protocol": ROOT / "packages/hive-protocol/src",
    "hive-core": ROOT / "packages/hive-core/src",
    "hive-providers": ROOT / "packages/hive-providers/src",
    "hive-agent-cli": ROOT / "packages/hive-cli/src",
    "hive-conformance": ROOT / "conformance/src",
}
"""Each distribution and the folder holding its top-level package (named for it: ``hive-core`` → ``hive_core``,
except those in :data:`IMPORT_NAMES`)."""

IMPORT_NAMES: dict[str, str] = {"hive-agent-cli": "hive_cli"}
"""The top-level package of a distribution not named for it (``hive-cli`` on the index is another project)."""


def import_name(distribution: str) -> str:
    """The top-level package of ``distribution``."""
    return IMPORT_NAMES.get(distribution, distribution.replace("-", "_"))


def packages(distribution: str) -> list[str]:
    """The distribution's package and its public subpackages (folders with an ``__init__.py``), by dotted name."""
    source = SOURCES[distribution]
    top = source / import_name(distribution)
    found = [
        ".".join(init.parent.relative_to(source).parts)
        for init in sorted(top.rglob("__init__.py"))
        if not any(part.startswith("_") for part in init.parent.relative_to(source).parts)
    ]
    assert found, f"no package under {top}"
    return found


PACKAGES = [(distribution, name) for distribution in SOURCES for name in packages(distribution)]


def ruff_order(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps ``__all__`` in: CONSTANTS, then Classes, then functions, each alphabetical."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def defined_in(value: object, package: str) -> bool:
    """Whether ``value`` belongs to ``package``: a class or function defined in it or its submodules, or any other
    value (a constant). A class or function imported from elsewhere for the package's own use is not its API."""
    if not (inspect.isclass(value) or inspect.isroutine(value)):
        return True
    module = value.__module__
    return module == package or module.startswith(f"{package}.")


def public_names(module: ModuleType) -> set[str]:
    """The names a reader of ``module`` would take for its API: not private, not submodules, not imports."""
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not inspect.ismodule(value)
        and not isinstance(value, __future__._Feature)  # pyright: ignore[reportPrivateUsage]
        and defined_in(value, module.__name__)
    }


@pytest.mark.parametrize(("distribution", "package"), PACKAGES)
def test_all_names_what_exists_sorted_and_complete(distribution: str, package: str) -> None:
    module = importlib.import_module(package)
    declared: object = getattr(module, "__all__", None)
    assert isinstance(declared, list), f"{package} has no __all__ list"
    names = [str(name) for name in cast("list[object]", declared)]
    assert len(set(names)) == len(names), f"{package}.__all__ repeats a name"
    assert [name for name in names if not hasattr(module, name)] == [], (
        f"{package}.__all__ names what is not there"
    )
    assert names == sorted(names, key=ruff_order), f"{package}.__all__ is not sorted"
    assert public_names(module) - set(names) == set(), f"public in {package} but not in its __all__"


@pytest.mark.parametrize(("distribution", "package"), PACKAGES)
def test_every_public_class_and_function_has_a_docstring(distribution: str, package: str) -> None:
    module = importlib.import_module(package)
    undocumented = [
        name
        for name in getattr(module, "__all__", [])
        if (inspect.isclass(value := getattr(module, name)) or inspect.isfunction(value))
        and not inspect.getdoc(value)
    ]
    assert undocumented == [], f"{package}: no docstring on {', '.join(undocumented)}"


@pytest.mark.parametrize("distribution", SOURCES)
def test_the_version_is_the_installed_distributions(distribution: str) -> None:
    module = importlib.import_module(import_name(distribution))
    assert module.__version__ == metadata.version(distribution)


def test_an_import_for_the_packages_own_use_is_not_public() -> None:
    module = ModuleType("pkg")
    module.__dict__.update(Path=Path, ROOT=ROOT, annotations=__future__.annotations, inspect=inspect)

    def helper() -> None: ...

    helper.__module__ = "pkg.sub"
    module.__dict__["helper"] = helper
    assert public_names(module) == {"ROOT", "helper"}
