"""Layered configuration: ``~/.hive/config.yaml`` → ``.hive/config.yaml`` → ``.env`` → environment.

:func:`load_config` merges the layers into a :class:`LoadedConfig` (values, where each came from, warnings,
typed views). The keys are the seed's (camelCase): :data:`SCHEMA` holds hive-core's own, and a host loads with
a :class:`ConfigSchema` that adds its sections (hive's adds the providers'); ``HIVE_HOME`` moves the home.
"""

from .dotenv import DotenvFile
from .dotenv import parse_dotenv
from .dotenv import read_dotenv
from .errors import ConfigError
from .errors import ConfigWarning
from .keys import display_value
from .keys import flatten
from .keys import is_secret_key
from .keys import mask_secret
from .load import load_config
from .loaded import ChatBehavior
from .loaded import FallbackEntry
from .loaded import LoadedConfig
from .origin import DEFAULT_ORIGIN
from .origin import LayerName
from .origin import Origin
from .paths import CONFIG_FILE_NAME
from .paths import ENV_FILE_NAME
from .paths import HIVE_DIR_NAME
from .paths import HIVE_HOME_VAR
from .paths import RULES_FILE_NAMES
from .paths import find_project_root
from .paths import global_config_path
from .paths import hive_home
from .paths import home_project_problem
from .paths import project_config_path
from .paths import project_env_path
from .paths import user_home
from .schema import SCHEMA
from .schema import ConfigSchema
from .schema import EnvVar
from .schema import FieldKind
from .schema import FieldSpec
from .schema import SectionSpec
from .trust import PROTECTION_FILE_NAMES
from .trust import TRUST_FILE_NAME
from .trust import IgnoredSetting
from .trust import TrustRecord
from .trust import TrustState
from .trust import TrustStore
from .trust import content_hash
from .trust import lowers_protection
from .trust import protection_files

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
    "FallbackEntry",
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
