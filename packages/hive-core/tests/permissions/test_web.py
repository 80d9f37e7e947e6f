"""The ``web`` rule category: URLs judged by their text and by the addresses their host resolves to."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.permissions import load_permission_rules
from hive_core.permissions import with_allowed
from hive_core.permissions.web import WebRules
from hive_core.permissions.web import address_problem

Build = Callable[..., PermissionPolicy]

PUBLIC = "93.184.216.34"


@pytest.mark.parametrize(
    ("url", "addresses"),
    [
        ("http://127.0.0.1:8000/", ["127.0.0.1"]),
        ("http://[::1]:8000/", ["::1"]),
        ("http://169.254.169.254/latest/meta-data/", ["169.254.169.254"]),
        ("http://10.1.2.3/", ["10.1.2.3"]),
        ("http://192.168.0.1/admin", ["192.168.0.1"]),
        ("http://172.16.5.5/", ["172.16.5.5"]),
        ("http://100.64.0.1/", ["100.64.0.1"]),  # shared address space (carrier-grade NAT)
        ("http://0.0.0.0/", ["0.0.0.0"]),
        ("http://[::ffff:127.0.0.1]/", ["::ffff:127.0.0.1"]),
        ("http://[fd00::1]/", ["fd00::1"]),
        # A public-looking name that resolves inward, and one whose every address is not public.
        ("https://innocent.example/", ["127.0.0.1"]),
        ("https://mixed.example/", [PUBLIC, "10.0.0.7"]),
        # Names that do not resolve, and schemes that are not http(s).
        ("https://nowhere.invalid/", []),
        ("file:///etc/passwd", []),
        ("gopher://example.com/", [PUBLIC]),
        ("not a url", []),
    ],
)
def test_the_defaults_ask_about_anything_not_public(url: str, addresses: list[str]) -> None:
    verdict = WebRules().judge_url(url, addresses)
    assert verdict.action == "ask", verdict


def test_the_defaults_allow_a_public_http_url() -> None:
    assert WebRules().judge_url("https://example.com/page?q=1", [PUBLIC]).action == "allow"
    assert WebRules().judge_url("http://example.com/", [PUBLIC, "2606:2800:220:1::1"]).action == "allow"


def test_the_reason_names_the_address_a_name_resolves_to() -> None:
    verdict = WebRules().judge_url("http://inside.example/", ["10.0.0.5"])
    assert "inside.example" in verdict.reason
    assert "10.0.0.5" in verdict.reason
    assert "private" in verdict.reason


def test_a_rule_on_the_address_allows_it_with_any_port_and_path() -> None:
    rules = WebRules([PermissionRule(pattern="http://127.0.0.1:*", action="allow")])
    assert rules.judge_url("http://127.0.0.1:8765/a/b?c=d", ["127.0.0.1"]).action == "allow"
    # Another scheme or address is not covered.
    assert rules.judge_url("https://127.0.0.1:8765/", ["127.0.0.1"]).action == "ask"
    assert rules.judge_url("http://127.0.0.2:8765/", ["127.0.0.2"]).action == "ask"


def test_a_rule_on_a_name_cannot_carry_it_to_an_inward_address() -> None:
    rules = WebRules([PermissionRule(pattern="https://*.example.com/*", action="allow")])
    assert rules.judge_url("https://docs.example.com/x", [PUBLIC]).action == "allow"
    # The same name resolving inward: the address spelling matches no rule, so the built-in judgement asks.
    assert rules.judge_url("https://docs.example.com/x", ["10.0.0.8"]).action == "ask"


def test_deny_rules_and_a_deny_default_win() -> None:
    rules = WebRules([PermissionRule(pattern="https://bad.example/*", action="deny")])
    assert rules.judge_url("https://bad.example/x", [PUBLIC]).action == "deny"
    strict = WebRules(default_action="deny")
    assert strict.judge_url("https://example.com/", [PUBLIC]).action == "deny"
    assert strict.judge_url("http://127.0.0.1/", ["127.0.0.1"]).action == "deny"


@given(st.ip_addresses())
def test_no_address_outside_the_public_internet_is_allowed_by_default(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    shown = f"[{address}]" if address.version == 6 else str(address)
    verdict = WebRules().judge_url(f"http://{shown}/", [str(address)])
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    seen = mapped or address
    inward = seen.is_loopback or seen.is_link_local or seen.is_private or seen.is_unspecified
    if verdict.action == "allow":
        assert seen.is_global, (address, verdict)
        assert not inward, (address, verdict)
    assert verdict.action in ("allow", "ask")
    assert (address_problem(str(address)) is None) == (verdict.action == "allow")


def test_the_policy_judges_fetch_page_after_resolving_the_host(make_policy: Build) -> None:
    policy = make_policy()
    asked = policy.evaluate("fetch_page", {"url": "http://localhost:9/"})
    assert asked.action == "ask"
    assert "127.0.0.1" in asked.reason or "::1" in asked.reason
    assert policy.evaluate("explore_site", {"base_url": "http://169.254.169.254/"}).action == "ask"
    assert policy.evaluate("fetch_page", {}).action == "deny"
    assert policy.evaluate("web_search", {"query": "bees"}).action == "allow"


def test_the_rules_file_web_section_allows_the_loopback_site(project: Path) -> None:
    (project / ".hive" / "permissions.yaml").write_text(
        'permissions:\n  web:\n    - pattern: "http://127.0.0.1:*"\n      action: allow\n', encoding="utf-8"
    )
    rules = load_permission_rules(project, trusted=True)
    assert rules.web == (PermissionRule(pattern="http://127.0.0.1:*", action="allow"),)
    policy = PermissionPolicy(rules, project)
    assert policy.evaluate("fetch_page", {"url": "http://127.0.0.1:8765/index.html"}).action == "allow"
    assert policy.evaluate("fetch_page", {"url": "http://10.0.0.1/"}).action == "ask"


def test_the_defaults_have_no_web_rules() -> None:
    assert PermissionRules.default().web == ()


def test_allow_flags_add_web_rules(project: Path) -> None:
    rules = with_allowed(PermissionRules.default(), ["fetch_page:http://127.0.0.1:*"])
    policy = PermissionPolicy(rules, project)
    assert policy.evaluate("fetch_page", {"url": "http://127.0.0.1:8000/x"}).action == "allow"
    assert policy.evaluate("explore_site", {"base_url": "http://10.0.0.1/"}).action == "ask"
    everything = PermissionPolicy(with_allowed(PermissionRules.default(), ["explore_site"]), project)
    assert everything.evaluate("explore_site", {"base_url": "http://10.0.0.1/"}).action == "allow"
