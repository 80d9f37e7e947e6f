"""Credentials in URLs are masked like keys: in shown configuration values and in model errors."""

from __future__ import annotations

import pytest

from hive_core import ChatError
from hive_core.config import display_value
from hive_core.redaction import mask_url
from hive_core.redaction import mask_urls

SECRET = "hunter2-very-secret"  # no character of it is ever shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        # The userinfo is masked whole: user and password.
        (f"https://alice:{SECRET}@example.test/v1", "https://***@example.test/v1"),
        ("https://alice:pw@example.test/v1", "https://***@example.test/v1"),
        ("https://alice:@example.test/v1", "https://***@example.test/v1"),
        # A user alone is a token more often than a name.
        ("https://ghp_abcdefghijklmnop@example.test/", "https://***@example.test/"),
        # Secret-looking query values, whatever their spelling; the others stay.
        (
            f"https://example.test/v1?api_key={SECRET}&model=m",
            "https://example.test/v1?api_key=***&model=m",
        ),
        (f"https://example.test/?key={SECRET}", "https://example.test/?key=***"),
        (
            "https://example.test/?token=abc&apiKey=abcdefghijklmnop",
            "https://example.test/?token=***&apiKey=***",
        ),
        (
            "https://example.test/?access_token=t0k3n&sig=s1gn4ture",
            "https://example.test/?access_token=***&sig=***",
        ),
        ("https://example.test/?keyboard=qwerty&monkey=1", "https://example.test/?keyboard=qwerty&monkey=1"),
        ("https://example.test/?api_key=", "https://example.test/?api_key="),
        # Both at once, with a port and a fragment.
        (
            f"http://u:{SECRET}@127.0.0.1:8080/v1?x=1&password={SECRET}#top",
            "http://***@127.0.0.1:8080/v1?x=1&password=***#top",
        ),
        # Nothing to hide: unchanged, byte for byte.
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
        ("http://localhost:11434", "http://localhost:11434"),
        ("not a url", "not a url"),
        ("user:pass@host", "user:pass@host"),  # no scheme: not read as a URL
        # Unparseable (a port that is no number): what sits before the "@" is still hidden.
        (f"http://alice:{SECRET}@host:port/v1", "http://***@host:port/v1"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_masking_twice_changes_nothing_more() -> None:
    once = mask_urls(f"https://alice:{SECRET}@h.test/?key={SECRET}&token=short")
    assert mask_urls(once) == once == "https://***@h.test/?key=***&token=***"


def test_every_url_in_a_text_is_masked_and_the_rest_kept() -> None:
    text = (
        f"openai: could not reach 'https://alice:{SECRET}@one.test/v1' (then tried "
        f"http://two.test/?token={SECRET}), see https://docs.test/help."
    )
    assert mask_urls(text) == (
        "openai: could not reach 'https://***@one.test/v1' (then tried "
        "http://two.test/?token=***), see https://docs.test/help."
    )
    assert SECRET not in mask_urls(text)
    assert mask_urls("no address here") == "no address here"


@pytest.mark.parametrize("key", ["openai.endpoint", "gpuStack.endpoint", "plugin.proxy", "mcp.servers"])
def test_shown_values_mask_urls_unless_raw(key: str) -> None:
    url = f"https://alice:{SECRET}@example.test/v1?api_key={SECRET}"
    assert display_value(key, url) == "https://***@example.test/v1?api_key=***"
    assert display_value(key, url, raw=True) == url
    listed = display_value(key, [url, "plain"])
    assert SECRET not in listed
    assert "plain" in listed
    assert display_value(key, [url], raw=True) == f'["{url}"]'


def test_a_secret_key_is_still_masked_whole() -> None:
    assert display_value("openai.apiKey", f"https://alice:{SECRET}@example.test") == "http...test"


def test_model_errors_never_carry_credentials_of_an_endpoint() -> None:
    error = ChatError(f"openai: 401 for https://alice:{SECRET}@example.test/v1?key={SECRET}", code="auth")
    assert SECRET not in str(error)
    assert str(error) == "openai: 401 for https://***@example.test/v1?key=***"
    assert error.code == "auth"
