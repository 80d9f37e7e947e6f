"""No key that lies: a key this version does not act on (none today; a key kept for a later version would be)
is named at run time with the file and line that set it, once per process; a key it reads is not, and keys
nothing reads are gone from ``hive config show``."""

from __future__ import annotations

import pytest
from cli_harness import Workspace
from cli_harness import text

from hive_cli.assemble import HostOptions
from hive_cli.assemble import build_host
from hive_conformance.model_server import ScriptedModelServer
from hive_core.config import ConfigSchema
from hive_providers import CONFIG_SCHEMA


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "is not used by this version of hive" in line]


def test_used_and_default_keys_are_not_warned(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / ".hive" / "config.yaml").write_text(
        "chatBehavior:\n  maximumIterationsPerRequest: 5\n  maximumConsecutiveErrorsPerRequest: 4\ncompaction:\n  targetRatio: 0.5\nadvisor:\n  maxCalls: 2\n",
        encoding="utf-8",
    )
    server.add(text("Fine."))
    result = ws.use(server).run("-p", "hi")
    assert result.code == 0, result
    assert _warnings(result.stderr) == []


def test_a_set_unused_key_is_warned_with_its_file_and_line_once_per_process(
    ws: Workspace,
    server: ScriptedModelServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every key of this version is read, so the test keeps one for later as a key would be kept: not used.
    is_used = ConfigSchema.is_used
    monkeypatch.setattr(
        ConfigSchema, "is_used", lambda schema, key: key != "delegation.maxDepth" and is_used(schema, key)
    )
    config = ws.project / ".hive" / "config.yaml"
    config.write_text("compaction:\n  targetRatio: 0.5\ndelegation:\n  maxDepth: 1\n", encoding="utf-8")
    ws.use(server).trust_now()
    for variable in CONFIG_SCHEMA.environment:
        monkeypatch.delenv(variable.name, raising=False)
    for name, value in ws.env.items():
        monkeypatch.setenv(name, value)
    for _ in range(2):  # a session opened again (/clear, /model) builds its host again
        build_host(HostOptions(cwd=ws.project), approvals=None, model_free=True)
    assert _warnings(capsys.readouterr().err) == [
        f"hive: warning: {config}:4: delegation.maxDepth is not used by this version of hive"
    ]


def test_keys_nothing_reads_are_gone_from_config_show(ws: Workspace) -> None:
    shown = ws.run("config", "show")
    assert shown.code == 0, shown
    keys = {line.split(" = ")[0] for line in shown.stdout.splitlines()}
    assert "lmsupply.enabled" in keys
    for removed in (
        "lmsupply.embedderModel",
        "lmsupply.rerankerModel",
        "gpuStack.embeddingModel",
        "gpuStack.rerankModel",
    ):
        assert removed not in keys
    written = ws.run("set", "gpuStack.embeddingModel", "e5")
    assert "'gpuStack.embeddingModel' is not a key hive knows" in written.stderr


def test_a_removed_key_in_a_file_is_an_unknown_key(ws: Workspace) -> None:
    config = ws.project / ".hive" / "config.yaml"
    config.write_text("lmsupply:\n  rerankerModel: auto\n", encoding="utf-8")
    shown = ws.run("config", "show")
    assert shown.code == 0, shown
    assert f"{config}:2" in shown.stderr
    assert "unknown key 'lmsupply.rerankerModel'" in shown.stderr
