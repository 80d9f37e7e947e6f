"""``hive agents``: every agent backend, hive's own loop first, with whether it is installed and can run offline."""

from __future__ import annotations

import sys
from typing import Any
from typing import Final

import anyio

from hive_cli.output import print_document
from hive_cli.output import print_records
from hive_core.backends import HIVE_BACKEND
from hive_core.backends import BackendProbe
from hive_providers.backends.kit.specs import LaunchSpec

__all__ = ["agents_main", "probe_all"]

PROBE_TIMEOUT: Final = 10.0
"""Seconds one CLI's version probe may take (a CLI that takes longer is listed without its version)."""
PROBES_AT_ONCE: Final = 8
"""How many CLIs are probed at the same time."""


def _hive_probe() -> BackendProbe:
    from hive_cli import __version__

    return BackendProbe(name=HIVE_BACKEND, installed=True, version=__version__, offline=True)


async def probe_all() -> list[tuple[LaunchSpec, BackendProbe]]:
    """Each coding-agent CLI's launch spec with its probe, in the registry's order, probed concurrently (at most
    :data:`PROBES_AT_ONCE` at a time, each bounded by :data:`PROBE_TIMEOUT`)."""
    from hive_providers.backends.probe import probe_backend
    from hive_providers.backends.registry import backend_specs

    specs = backend_specs()
    found: dict[str, BackendProbe] = {}
    limiter = anyio.CapacityLimiter(PROBES_AT_ONCE)

    async def probe(spec: LaunchSpec) -> None:
        async with limiter:
            found[spec.name] = await probe_backend(spec, timeout=PROBE_TIMEOUT)

    async with anyio.create_task_group() as group:
        for spec in specs:
            group.start_soon(probe, spec)
    return [(spec, found[spec.name]) for spec in specs]


def _row(spec: LaunchSpec | None, probe: BackendProbe, *, verbose: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": probe.name,
        "title": spec.title if spec is not None else "hive (built-in agent loop)",
        "aliases": list(spec.aliases) if spec is not None else [],
        "installed": probe.installed,
        "version": probe.version,
        "offline": probe.offline,
    }
    if not probe.installed and probe.install_hint:
        row["install"] = probe.install_hint
    if probe.problem:
        row["problem"] = probe.problem
    if verbose:
        row["executable"] = probe.executable
        row["wire"] = spec.wire if spec is not None else HIVE_BACKEND
        row["arguments"] = list(spec.arguments) if spec is not None else []
    return row


def _pool() -> dict[str, Any]:
    import msgspec

    from hive_providers.backends.pool import default_pool

    pool = default_pool()
    return {"settings": msgspec.to_builtins(pool.settings), "stats": msgspec.to_builtins(pool.stats)}


def _text(rows: list[dict[str, Any]], pool: dict[str, Any] | None, problems: tuple[str, ...]) -> str:
    header = ("NAME", "INSTALLED", "VERSION", "OFFLINE", "ALIASES")
    table = [
        (
            row["name"],
            "yes" if row["installed"] else "no",
            row["version"] or "-",
            "yes" if row["offline"] else "no",
            ", ".join(row["aliases"]) or "-",
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in (header, *table)) for i in range(len(header) - 1)]
    lines: list[str] = []
    for row, cells in zip([None, *rows], [header, *table], strict=True):
        lines.append(
            "  ".join([*(cell.ljust(width) for cell, width in zip(cells, widths, strict=False)), cells[-1]])
        )
        if row is None:
            continue
        details: list[str] = []
        if "install" in row:
            details.append(f"install: {row['install']}")
        if row.get("problem") and row["installed"]:
            details.append(f"problem: {row['problem']}")
        if "wire" in row:
            details.append(f"program: {row['executable'] or '-'} · wire: {row['wire']}")
            if row["arguments"]:
                details.append(f"arguments: {' '.join(row['arguments'])}")
        lines.extend(f"    {detail}" for detail in details)
    lines.extend(f"! {problem}" for problem in problems)
    installed = sum(1 for row in rows[1:] if row["installed"])
    lines.append(
        f"\n{installed} of {len(rows) - 1} coding-agent CLIs installed; run one with `hive --agent NAME`."
    )
    if pool is not None:
        settings, stats = pool["settings"], pool["stats"]
        lines.append(
            "pool: "
            + ", ".join(f"{key} {value}" for key, value in settings.items())
            + " · "
            + ", ".join(f"{key} {value}" for key, value in stats.items())
        )
    return "\n".join(lines) + "\n"


def agents_main(*, output: str, verbose: bool) -> int:
    """List the backends on stdout, as a table, one JSON document (``{"agents": [...]}``, ``problems`` when an
    entry point of ``hive.backends`` could not be read, and ``pool`` with ``verbose``) or one line per agent
    (``jsonl``); always exit 0."""
    probes = anyio.run(probe_all)
    rows = [_row(None, _hive_probe(), verbose=verbose)] + [
        _row(spec, probe, verbose=verbose) for spec, probe in probes
    ]
    from hive_providers.backends.registry import backend_problems

    pool = _pool() if verbose else None
    problems = backend_problems()
    if output == "jsonl":
        print_records(rows)
    elif output == "json":
        document: dict[str, Any] = {"agents": rows}
        if problems:
            document["problems"] = list(problems)
        if pool is not None:
            document["pool"] = pool
        print_document(document)
    else:
        sys.stdout.write(_text(rows, pool, problems))
    return 0
