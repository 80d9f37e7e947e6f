"""The public surface of hive_core.config."""

from __future__ import annotations

import inspect
import os

import hive_core.config as config
from hive_core.config import get_value, load_config, set_value, unset_value


def _isort_key(name: str) -> tuple[int, str]:
    # The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions, each alphabetical.
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_and_complete() -> None:
    assert config.__all__ == sorted(config.__all__, key=_isort_key)
    for name in config.__all__:
        assert hasattr(config, name), name
    public = {
        "hive_home",
        "find_project_root",
        "global_config_path",
        "project_config_path",
        "load_config",
        "LoadedConfig",
        "ConfigError",
        "ConfigWarning",
        "set_value",
        "get_value",
        "unset_value",
        "flatten",
        "SCHEMA",
        "ENV_VARS",
    }
    assert public <= set(config.__all__)


def test_signatures_the_cli_relies_on() -> None:
    load = inspect.signature(load_config)
    assert list(load.parameters) == ["project_root", "env"]
    assert load.parameters["env"].default is os.environ
    assert list(inspect.signature(set_value).parameters)[:2] == ["key", "value"]
    get = inspect.signature(get_value).parameters
    assert get["raw"].kind is inspect.Parameter.KEYWORD_ONLY
    assert get["raw"].default is False
    assert next(iter(inspect.signature(unset_value).parameters)) == "key"


def test_every_public_name_has_a_docstring() -> None:
    for name in config.__all__:
        value = getattr(config, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), name
