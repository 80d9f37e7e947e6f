"""No character of a credential carried by a URL survives masking, whatever the secret and however it is named."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from hive_core.redaction import mask_url
from hive_core.redaction import mask_urls

_NAMES = [
    "api_key",
    "apiKey",
    "key",
    "token",
    "access_token",
    "sig",
    "signature",
    "password",
    "pwd",
    "client_secret",
    "X-Amz-Credential",
    "api%5Fkey",
    "auth",
]
# What a secret is made of in a URL: letters, digits and the unreserved marks (no "&", "#" or "=" to cut it).
_SECRET_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "-._~", min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(_NAMES), secret=_SECRET_TEXT, fragment=st.booleans())
def test_a_secret_query_or_fragment_value_is_masked_whole(name: str, secret: str, fragment: bool) -> None:
    url = f"https://h.test/v1{'#' if fragment else '?'}region=eu&{name}={secret}&model=m"
    shown = mask_url(url)
    assert shown == url.replace(f"{name}={secret}", f"{name}=***"), shown


@settings(max_examples=300, deadline=None)
@given(user=_SECRET_TEXT, password=st.one_of(st.none(), _SECRET_TEXT))
def test_userinfo_is_masked_whole(user: str, password: str | None) -> None:
    userinfo = user if password is None else f"{user}:{password}"
    url = f"https://{userinfo}@h.test:8080/v1?x=1"
    assert mask_url(url) == "https://***@h.test:8080/v1?x=1"
    assert mask_urls(f"see {url} now") == "see https://***@h.test:8080/v1?x=1 now"


def test_the_reported_case_shows_no_four_characters() -> None:
    shown = mask_urls("openai: 401 for https://llm.test/v1?api_key=sk-proj-abcdefgh12345678")
    assert shown == "openai: 401 for https://llm.test/v1?api_key=***"
    assert "sk-p" not in shown
    assert "5678" not in shown
