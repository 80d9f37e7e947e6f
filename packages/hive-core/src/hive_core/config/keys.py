"""Dotted keys (``openai.apiKey``): which hold secrets, flattening, and how values are shown (secrets masked, and
the credentials of any URL in a value: see :mod:`hive_core.redaction`).

How a key is spelled is the schema's: :meth:`ConfigSchema.normalize_key <hive_core.config.ConfigSchema.normalize_key>`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import cast

from hive_core.redaction import is_secret_name
from hive_core.redaction import mask_secret
from hive_core.redaction import mask_urls

__all__ = ["display_value", "flatten", "is_secret_key", "mask_secret"]


def is_secret_key(key: str) -> bool:
    """Whether a dotted key holds a secret: its last segment has the word key, token, secret or password.

    Words, not substrings: ``openai.apiKey`` and ``webSearch.tavilyApiKey`` are secret, while
    ``budget.maxSessionTokens`` (a count) is not.
    """
    return is_secret_name(key.rsplit(".", 1)[-1])


def display_value(key: str, value: object, *, raw: bool = False) -> str:
    """How a value is shown: text as is, booleans as ``true``/``false``, nothing as ``null``, lists and mappings
    as JSON; unless ``raw``, a secret key's value is masked and so are the credentials of URLs in any other."""
    if isinstance(value, str):
        if raw:
            return value
        return mask_secret(value) if is_secret_key(key) else mask_urls(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if raw else mask_urls(text)


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
