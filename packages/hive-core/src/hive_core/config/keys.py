"""Dotted keys (``openai.apiKey``): which hold secrets, flattening, and how values are shown (secrets masked).

How a key is spelled is the schema's: :meth:`ConfigSchema.normalize_key <hive_core.config.ConfigSchema.normalize_key>`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Final, cast

__all__ = ["display_value", "flatten", "is_secret_key", "mask_secret"]

_SEPARATORS: Final = re.compile(r"[_\-\s]+")
_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
_SECRET_WORDS: Final = frozenset({"key", "apikey", "token", "secret", "password", "passphrase", "credential"})
_MASK_MIN_LENGTH: Final = 12


def is_secret_key(key: str) -> bool:
    """Whether a dotted key holds a secret: its last segment has the word key, token, secret or password.

    Words, not substrings: ``openai.apiKey`` and ``webSearch.tavilyApiKey`` are secret, while
    ``budget.maxSessionTokens`` (a count) is not.
    """
    last = key.rsplit(".", 1)[-1]
    words = _WORDS.findall(_SEPARATORS.sub(" ", last))
    return any(word.lower() in _SECRET_WORDS for word in words)


def mask_secret(value: str) -> str:
    """``value`` masked for display: ``abcd...wxyz`` when 12 characters or longer, else ``***``; empty stays
    empty (there is nothing to hide)."""
    if not value:
        return ""
    if len(value) < _MASK_MIN_LENGTH:
        return "***"
    return f"{value[:4]}...{value[-4:]}"


def display_value(key: str, value: object, *, raw: bool = False) -> str:
    """How a value is shown: text as is (masked when ``key`` holds a secret, unless ``raw``), booleans as
    ``true``/``false``, nothing as ``null``, lists and mappings as JSON."""
    if isinstance(value, str):
        return value if raw or not is_secret_key(key) else mask_secret(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def flatten(config: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """``config`` as dotted keys → leaf values, in order; lists are leaves, empty mappings are left out."""
    flat: dict[str, object] = {}
    for name, value in config.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            flat.update(flatten(cast("Mapping[str, object]", value), f"{key}."))
        else:
            flat[key] = value
    return flat
