"""Layered configuration: ``~/.hive/config.yaml`` → ``.hive/config.yaml`` → ``.env`` → environment.

:func:`load_config` merges the layers into a :class:`LoadedConfig` (values, where each came from, warnings,
typed views). The keys are the seed's (camelCase): :data:`SCHEMA` holds hive-core's own, and a host loads with
a :class:`ConfigSchema` that adds its sections (hive's adds the providers'); ``HIVE_HOME`` moves the home.
"""

from .dotenv import DotenvFile, parse_dotenv, read_dotenv
from .errors import ConfigError, ConfigWarning
from .keys import display_value, flatten, is_secret_key, mask_secret
from .load import load_config
from .loaded import ChatBehavior, LoadedConfig
from .origin import DEFAULT_ORIGIN, LayerName, Origin
from .paths import (
    CONFIG_FILE_NAME,
    ENV_FILE_NAME,
    HIVE_DIR_NAME,
    HIVE_HOME_VAR,
    RULES_FILE_NAMES,
    find_project_root,
    global_config_path,
    hive_home,
    home_project_problem,
    project_config_path,
    project_env_path,
    user_home,
)
from .schema import SCHEMA, ConfigSchema, EnvVar, FieldKind, FieldSpec, SectionSpec
from .trust import (
    PROTECTION_FILE_NAMES,
    TRUST_FILE_NAME,
    IgnoredSetting,
    TrustRecord,
    TrustState,
    TrustStore,
    content_hash,
    lowers_protection,
    protection_files,
)

__all__ = [
    "CONFIG_FILE_NAME",
    "DEFAULT_ORIGIN",
    "ENV_FILE_NAME",
    "HIVE_DIR_NAME",
    "HIVE_HOME_VAR",
    "PROTECTION_FILE_NAMES",
    "RULES_FILE_NAMES",
    "SCHEMA",
    "TRUST_FILE_NAME",
    "ChatBehavior",
    "ConfigError",
    "ConfigSchema",
    "ConfigWarning",
    "DotenvFile",
    "EnvVar",
    "FieldKind",
    "FieldSpec",
    "IgnoredSetting",
    "LayerName",
    "LoadedConfig",
    "Origin",
    "SectionSpec",
    "TrustRecord",
    "TrustState",
    "TrustStore",
    "content_hash",
    "display_value",
    "find_project_root",
    "flatten",
    "global_config_path",
    "hive_home",
    "home_project_problem",
    "is_secret_key",
    "load_config",
    "lowers_protection",
    "mask_secret",
    "parse_dotenv",
    "project_config_path",
    "project_env_path",
    "protection_files",
    "read_dotenv",
    "user_home",
]
