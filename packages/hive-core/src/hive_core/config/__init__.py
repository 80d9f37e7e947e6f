"""Layered configuration: ``~/.hive/config.yaml`` → ``.hive/config.yaml`` → environment → ``.env``.

:func:`load_config` merges the layers into a :class:`LoadedConfig` (values, where each came from, warnings,
typed views); :func:`set_value`, :func:`get_value` and :func:`unset_value` edit the global file for
``hive set``, ``get`` and ``unset``. The keys are the seed's (camelCase, see :data:`SCHEMA`); ``HIVE_HOME``
moves the home.
"""

from .dotenv import DotenvFile, parse_dotenv, read_dotenv
from .environment import ENV_VARS, EnvVar
from .errors import ConfigError, ConfigWarning
from .keys import display_value, flatten, is_secret_key, mask_secret, normalize_key
from .load import load_config
from .loaded import ChatBehavior, ConfigEntry, LoadedConfig, ProviderConfig
from .origin import DEFAULT_ORIGIN, LayerName, Origin
from .paths import (
    CONFIG_FILE_NAME,
    ENV_FILE_NAME,
    HIVE_DIR_NAME,
    HIVE_HOME_VAR,
    find_project_root,
    global_config_path,
    hive_home,
    project_config_path,
    project_env_path,
)
from .schema import PROVIDER_SECTIONS, SCHEMA, SECTION_ALIASES, FieldKind, FieldSpec, SectionSpec
from .store import SetResult, get_value, set_value, unset_value

__all__ = [
    "CONFIG_FILE_NAME",
    "DEFAULT_ORIGIN",
    "ENV_FILE_NAME",
    "ENV_VARS",
    "HIVE_DIR_NAME",
    "HIVE_HOME_VAR",
    "PROVIDER_SECTIONS",
    "SCHEMA",
    "SECTION_ALIASES",
    "ChatBehavior",
    "ConfigEntry",
    "ConfigError",
    "ConfigWarning",
    "DotenvFile",
    "EnvVar",
    "FieldKind",
    "FieldSpec",
    "LayerName",
    "LoadedConfig",
    "Origin",
    "ProviderConfig",
    "SectionSpec",
    "SetResult",
    "display_value",
    "find_project_root",
    "flatten",
    "get_value",
    "global_config_path",
    "hive_home",
    "is_secret_key",
    "load_config",
    "mask_secret",
    "normalize_key",
    "parse_dotenv",
    "project_config_path",
    "project_env_path",
    "read_dotenv",
    "set_value",
    "unset_value",
]
