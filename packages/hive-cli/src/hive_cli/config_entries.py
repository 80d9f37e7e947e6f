"""The lines of ``hive config show``: every value of the merged configuration with where it came from."""

from __future__ import annotations

import msgspec

from hive_core.config import DEFAULT_ORIGIN
from hive_core.config import LoadedConfig
from hive_core.config import Origin
from hive_core.config import display_value
from hive_core.config import flatten

__all__ = ["ConfigEntry", "config_entries"]


class ConfigEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One line of ``config show``: a dotted key, its value as shown, and where it came from."""

    key: str
    """The dotted key."""
    value: str
    """The value as shown (secrets masked unless raw)."""
    origin: Origin
    """Where the value came from."""
    used: bool = True
    """Whether this version of hive acts on the key (``False``: accepted, read by nothing yet)."""


def config_entries(
    loaded: LoadedConfig, *, raw: bool = False, include_defaults: bool = True
) -> list[ConfigEntry]:
    """Every leaf value of ``loaded``, in schema order; secrets masked unless ``raw``, defaults left out unless
    ``include_defaults``."""
    result: list[ConfigEntry] = []
    for key, value in flatten(loaded.data).items():
        origin = loaded.origins.get(key, DEFAULT_ORIGIN)
        if include_defaults or origin.layer != "default":
            result.append(
                ConfigEntry(
                    key=key,
                    value=display_value(key, value, raw=raw),
                    origin=origin,
                    used=loaded.schema.is_used(key),
                )
            )
    return result
