"""Key spelling, secret detection, masking, display and flattening."""

from __future__ import annotations

import pytest

from hive_core.config import SCHEMA
from hive_core.config import ConfigError
from hive_core.config import display_value
from hive_core.config import flatten
from hive_core.config import is_secret_key
from hive_core.config import mask_secret


@pytest.mark.parametrize("key", ["", ".", "a.", ".a", "a..b", "  "])
def test_normalize_key_refuses_empty_segments(key: str) -> None:
    with pytest.raises(ConfigError, match="invalid key"):
        SCHEMA.normalize_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "openai.apiKey",
        "gpuStack.apiKey",
        "webSearch.tavilyApiKey",
        "webSearch.searchApiKey",
        "plugin.accessToken",
        "plugin.client_secret",
        "plugin.key",
        "plugin.APIKEY",
        "plugin.password",
    ],
)
def test_secret_keys(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "openai.model",
        "budget.maxSessionTokens",
        "chatBehavior.maxOutputTokens",
        "compaction.protectRecentTokens",
        "compaction.toolResultKeepHeadLines",
        "webSearch.searchApiEngine",
        "plugin.keyboard",
        "apiKey.model",  # only the last segment counts
    ],
)
def test_not_secret_keys(key: str) -> None:
    assert not is_secret_key(key)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("sk-abcdefghijklmnopqrstuvwxyz", "sk-a...wxyz"),
        ("abcdefghijkl", "abcd...ijkl"),
        ("abcdefghijk", "***"),
        ("x", "***"),
        ("", ""),
    ],
)
def test_mask_secret(value: str, shown: str) -> None:
    assert mask_secret(value) == shown


def test_display_value() -> None:
    assert display_value("openai.apiKey", "sk-abcdefghijklmnop") == "sk-a...mnop"
    assert display_value("openai.apiKey", "sk-abcdefghijklmnop", raw=True) == "sk-abcdefghijklmnop"
    assert display_value("openai.model", "gpt") == "gpt"
    assert display_value("x.enabled", True) == "true"
    assert display_value("x.enabled", False) == "false"
    assert display_value("x.n", 3) == "3"
    assert display_value("x.n", 0.5) == "0.5"
    assert display_value("x.n", None) == "null"
    assert display_value("x.list", ["a", "é"]) == '["a", "é"]'
    assert display_value("budget.maxSessionTokens", 100) == "100"


def test_flatten() -> None:
    nested = {
        "openai": {"apiKey": "k", "model": "m"},
        "skills": {"roots": ["a", "b"]},
        "empty": {},
        "deep": {"a": {"b": {"c": 1}}},
        "top": False,
    }
    assert flatten(nested) == {
        "openai.apiKey": "k",
        "openai.model": "m",
        "skills.roots": ["a", "b"],
        "deep.a.b.c": 1,
        "top": False,
    }
    assert list(flatten(nested)) == ["openai.apiKey", "openai.model", "skills.roots", "deep.a.b.c", "top"]
