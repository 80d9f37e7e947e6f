"""The public surface of hive_core.config."""

from __future__ import annotations

import inspect
import os

import hive_core.config as config
from hive_core.config import load_config


def test_the_names_hosts_rely_on_are_public() -> None:
    public = {
        "hive_home",
        "find_project_root",
        "global_config_path",
        "project_config_path",
        "load_config",
        "LoadedConfig",
        "ConfigError",
        "ConfigWarning",
        "flatten",
        "SCHEMA",
        "ConfigSchema",
    }
    assert public <= set(config.__all__)


def test_signatures_the_cli_relies_on() -> None:
    load = inspect.signature(load_config)
    assert list(load.parameters) == ["project_root", "env", "schema", "trusted"]
    assert load.parameters["trusted"].default is None
    assert load.parameters["env"].default is os.environ
    assert load.parameters["schema"].kind is inspect.Parameter.KEYWORD_ONLY
    assert load.parameters["schema"].default is config.SCHEMA
