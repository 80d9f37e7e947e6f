"""The failures a command reports as a plain message (exit 1) rather than a traceback."""

from __future__ import annotations

from hive_core.config import ConfigError
from hive_core.mcp import PluginConfigError
from hive_core.permissions import PermissionConfigError
from hive_core.sessions import InvalidSessionId
from hive_providers.registry import ProviderSelectionError

__all__ = ["USER_ERRORS"]

USER_ERRORS: tuple[type[Exception], ...] = (
    ConfigError,
    PermissionConfigError,
    PluginConfigError,
    ProviderSelectionError,
    InvalidSessionId,
    ValueError,
)
"""Errors whose message tells the user what to fix."""
