"""Keys the user set that this version of hive accepts but does not act on.

A file written for the seed's configuration loads (its keys are known), yet some of its sections are read by
nothing yet (:attr:`FieldSpec.used <hive_core.config.FieldSpec.used>`); a user who set one must be told that it
does nothing rather than find out by its absence. :func:`unused_settings` names each such key with where it was
set.
"""

from __future__ import annotations

from .loaded import LoadedConfig
from .origin import Origin

__all__ = ["unused_setting_warnings", "unused_settings"]


def unused_settings(loaded: LoadedConfig) -> list[tuple[str, Origin]]:
    """Every dotted key a layer set (defaults do not count) that this version of hive does not read, with where
    it was set, in schema order."""
    set_keys = [
        (key, origin)
        for key, origin in loaded.origins.items()
        if origin.layer != "default" and not loaded.schema.is_used(key)
    ]
    order = {name: index for index, name in enumerate(loaded.schema)}
    return sorted(set_keys, key=lambda item: order.get(item[0].split(".", 1)[0], len(order)))


def unused_setting_warnings(loaded: LoadedConfig) -> list[str]:
    """One line for each of :func:`unused_settings`: ``FILE:LINE: KEY is not used by this version of hive``
    (``environment VARIABLE: ...`` for a key set by a variable of the environment)."""
    return [
        f"{_where(origin)}: {key} is not used by this version of hive"
        for key, origin in unused_settings(loaded)
    ]


def _where(origin: Origin) -> str:
    if origin.source is None:
        return f"environment {origin.variable}" if origin.variable else origin.layer
    return f"{origin.source}:{origin.line}" if origin.line is not None else origin.source
