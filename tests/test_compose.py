"""The team deployment in deploy/compose.yaml stays true to the hive it runs: its commands parse as this hive's,
its engine addresses are ones ``--engine`` takes, and every hive process shares the store and the workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from ruamel.yaml import YAML

from hive_cli.cli import cli
from hive_cli.engine import EngineAddress
from hive_core.sessions import is_postgres_url

COMPOSE = Path(__file__).resolve().parent.parent / "deploy" / "compose.yaml"


def services() -> dict[str, Any]:
    document: dict[str, Any] = YAML(typ="safe").load(COMPOSE.read_text(encoding="utf-8"))
    return document["services"]


def test_the_team_has_postgresql_temporal_two_workers_and_a_front_end() -> None:
    found = services()
    commands = {name: service.get("command", []) for name, service in found.items()}
    assert "postgres" in found
    assert found["temporal"]["command"][:2] == ["server", "start-dev"]
    assert sum(1 for command in commands.values() if command[:2] == ["hive", "worker"]) == 2
    assert sum(1 for command in commands.values() if command[:2] == ["hive", "serve"]) == 1


def test_every_hive_command_parses_and_shares_the_engine_the_store_and_the_workspace() -> None:
    hive = {
        name: service for name, service in services().items() if service.get("command", [""])[0] == "hive"
    }
    assert len(hive) == 3
    engines: set[str] = set()
    for name, service in hive.items():
        _, command, *args = service["command"]
        sub = cli.get_command(click.Context(cli), command)
        assert sub is not None, name
        context = sub.make_context(command, list(args))
        engine = context.params["engine"]
        EngineAddress.parse(engine)
        engines.add(engine)
        assert is_postgres_url(service["environment"]["HIVE_SESSION_STORE"]), name
        assert service["volumes"] == ["workspace:/workspace"], name
        assert service["working_dir"] == "/workspace", name
    assert len(engines) == 1
