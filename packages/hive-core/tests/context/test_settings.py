"""CompactionSettings and the ``compaction`` section name the same keys, with the same defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import SCHEMA
from hive_core.config import SectionSpec
from hive_core.config import load_config
from hive_core.context import CompactionSettings
from hive_core.context.settings import config_key
from hive_core.context.settings import field_name


def section() -> SectionSpec:
    spec = SCHEMA["compaction"]
    assert isinstance(spec, SectionSpec)
    return spec


def test_the_struct_and_the_schema_list_the_same_keys() -> None:
    assert [config_key(name) for name in CompactionSettings.__struct_fields__] == [
        f.name for f in section().fields
    ]
    assert all(field_name(config_key(name)) == name for name in CompactionSettings.__struct_fields__)


@pytest.mark.parametrize("spec", section().fields, ids=lambda f: f.name)
def test_the_defaults_agree(spec: object) -> None:
    from hive_core.config import FieldSpec

    assert isinstance(spec, FieldSpec)
    value = getattr(CompactionSettings(), field_name(spec.name))
    assert value == spec.default


def test_every_compaction_key_is_read() -> None:
    assert all(f.used for f in section().fields)


def test_from_config_reads_the_loaded_section(tmp_path: Path) -> None:
    (tmp_path / ".hive").mkdir()
    (tmp_path / ".hive" / "config.yaml").write_text(
        "compaction:\n"
        "  protectRecentTokens: 1234\n"
        "  targetRatio: 0.5\n"
        "  protectedToolOutputs: [read_file, shell]\n"
        "  maxContextTokens: 65536\n"
        "  goalReminder: false\n",
        encoding="utf-8",
    )
    loaded = load_config(tmp_path, env={"HIVE_HOME": str(tmp_path / "home")})

    settings = CompactionSettings.from_config(loaded)

    assert settings == CompactionSettings(
        protect_recent_tokens=1234,
        target_ratio=0.5,
        protected_tool_outputs=("read_file", "shell"),
        max_context_tokens=65536,
        goal_reminder=False,
    )


def test_an_empty_section_gives_the_defaults() -> None:
    assert CompactionSettings.from_section({}) == CompactionSettings()
