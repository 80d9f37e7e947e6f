"""Dotted keys (``openai.apiKey``): spelling, flattening, and how values are shown (secrets masked)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Final, cast

from .errors import ConfigError
from .schema import SCHEMA, SectionSpec, canonical_section

__all__ = ["display_value", "flatten", "is_secret_key", "mask_secret", "normalize_key"]

_SEPARATORS: Final = re.compile(r"[_\-\s]+")
_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
_SECRET_WORDS: Final = frozenset({"key", "apikey", "token", "secret", "password", "passphrase", "credential"})
_MASK_MIN_LENGTH: Final = 12


def _camel(segment: str) -> str:
    parts = [part for part in _SEPARATORS.split(segment) if part]
    if len(parts) <= 1:
        return parts[0] if parts else segment
    first = parts[0].lower() if parts[0].isupper() else parts[0][0].lower() + parts[0][1:]
    rest = [
        part.capitalize() if part.isupper() or part.islower() else part[0].upper() + part[1:]
        for part in parts[1:]
    ]
    return first + "".join(rest)


def normalize_key(key: str) -> tuple[str, ...]:
    """The canonical segments of a dotted key.

    Segments in snake_case or kebab-case become camelCase (``chat_behavior.max_output_tokens`` →
    ``chatBehavior.maxOutputTokens``); a known section or field matches in any case (``OPENAI.APIKEY``),
    and an alias becomes its canonical section (``local.enabled`` → ``lmsupply.enabled``). Unknown keys keep
    their camelCase spelling. Raises :class:`ConfigError` for an empty key or an empty segment.
    """
    segments = [segment.strip() for segment in key.strip().split(".")]
    if not all(segments):
        raise ConfigError(f"invalid key {key!r}: a key is one or more names separated by dots", key=key)
    names = [_camel(segment) for segment in segments]
    top = canonical_section(names[0])
    if top is None:
        return tuple(names)
    spec = SCHEMA[top]
    if len(names) > 1 and isinstance(spec, SectionSpec) and not spec.free_form:
        known = {field.name.lower(): field.name for field in spec.fields}
        names[1] = known.get(names[1].lower(), names[1])
    return (top, *names[1:])


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
