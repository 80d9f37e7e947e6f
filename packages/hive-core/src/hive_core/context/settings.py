"""The ``compaction`` configuration section as the context engine reads it."""

from __future__ import annotations

import re
from typing import Any
from typing import Protocol

import msgspec

from hive_core.tool_names import GLOB_FILES
from hive_core.tool_names import GREP_FILES
from hive_core.tool_names import READ_FILE

__all__ = ["CompactionSettings", "ConfigSections", "config_key", "field_name"]


class ConfigSections(Protocol):
    """What :meth:`CompactionSettings.from_config` reads: a loaded configuration's sections (the kernel does not
    import ``hive_core.config``; its ``LoadedConfig`` fits)."""

    def section(self, name: str, /) -> dict[str, object]:
        """A top-level section's merged fields (camelCase keys)."""
        ...


class CompactionSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Every key of the ``compaction`` section, in snake_case, with the same defaults.

    The small-window clamp: ``protect_recent_tokens`` and ``minimum_prune_tokens`` are absolute figures sized for
    large windows; the engine caps them at a share of the actual window (see :mod:`hive_core.context.compaction`),
    so a 2k-8k local model compacts too.
    """

    use_token_based_compaction: bool = True
    """Compact by token counts (``False``: the legacy ``threshold_percentage`` trigger)."""
    protect_recent_tokens: int = 40_000
    """The most recent tokens, always kept."""
    minimum_prune_tokens: int = 20_000
    """Compact only when at least this many tokens can be pruned."""
    protected_tool_outputs: tuple[str, ...] = (READ_FILE, GREP_FILES, GLOB_FILES)
    """Tools (hive's names, case-insensitive) whose results are kept longest."""
    target_ratio: float = 0.70
    """Compact down to this fraction of the window."""
    threshold_percentage: float = 0.92
    """The legacy trigger: compact at this fraction of the window."""
    enable_observation_masking: bool = True
    """Replace old tool results with placeholders."""
    observation_masking_protected_turns: int = 3
    """User turns (counted from the newest) whose tool results are never masked."""
    observation_masking_min_result_length: int = 200
    """Results shorter than this many characters are never masked."""
    observation_masking_protected_rounds: int | None = None
    """Inside the protected turns: the newest tool rounds never masked; older rounds are (``None``: off)."""
    observation_masking_protected_tokens: int | None = None
    """Inside the protected turns: the newest tool results within this many tokens never masked; older are
    (``None``: off)."""
    enable_tool_result_compaction: bool = True
    """Cut long tool results to their head and tail."""
    max_tool_result_chars: int = 30_000
    """Tool results longer than this are cut."""
    tool_result_keep_head_lines: int = 50
    """Lines kept from the start of a cut result."""
    tool_result_keep_tail_lines: int = 20
    """Lines kept from the end of a cut result."""
    use_anchored_compaction: bool = False
    """Keep a structured state block (goal, files, errors, decisions) across compactions, beside the summary
    (see :mod:`hive_core.context.anchor`)."""
    max_anchor_state_chars: int = 2_000
    """The anchored state block's size at most, in characters (the oldest entries are dropped first)."""
    max_context_tokens: int | None = None
    """The model's window, when neither the server nor the catalog knows it."""
    compact_on_overflow: bool = True
    """Window unknown: compact and retry once when the server reports an overflow."""
    goal_reminder: bool = True
    """Remind the model of the first user message once the conversation is long."""

    @classmethod
    def from_section(cls, section: dict[str, object]) -> CompactionSettings:
        """From the section's camelCase fields (absent keys keep the defaults; values already validated)."""
        values: dict[str, Any] = {}
        for key, value in section.items():
            if value is None:
                continue
            name = field_name(key)
            if name not in cls.__struct_fields__:
                continue
            values[name] = tuple(value) if isinstance(value, list) else value  # pyright: ignore[reportUnknownArgumentType]
        return msgspec.convert(values, cls, strict=False)

    @classmethod
    def from_config(cls, loaded: ConfigSections) -> CompactionSettings:
        """From a loaded configuration's ``compaction`` section."""
        return cls.from_section(loaded.section("compaction"))


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def field_name(key: str) -> str:
    """The struct field for a camelCase key: ``protectRecentTokens`` → ``protect_recent_tokens``."""
    return _CAMEL.sub("_", key).lower()


def config_key(name: str) -> str:
    """The camelCase key for a field: ``protect_recent_tokens`` → ``protectRecentTokens``."""
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)
