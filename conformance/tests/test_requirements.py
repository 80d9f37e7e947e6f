from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from typing import cast

import msgspec
import pytest

from hive_conformance.requirements import CAPABILITIES
from hive_conformance.requirements import REQUIREMENTS
from hive_conformance.requirements import RULE_REQUIREMENTS
from hive_conformance.requirements import TIERS
from hive_conformance.requirements import Requirement
from hive_conformance.requirements import requirement
from hive_protocol import RULES

_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_STRUCTURAL = {*RULE_REQUIREMENTS.values(), "HIVE-RUN-001"}
_FIXED = {
    "HIVE-WIRE-001": "readable",
    "HIVE-WIRE-002": "canonical",
    "HIVE-SESS-001": "session_started_first",
    "HIVE-SEQ-001": "turn_end_once",
    "HIVE-SEQ-002": "error_then_turn_end",
    "HIVE-SEQ-003": "tool_pairs",
    "HIVE-SEQ-004": "hitl_in_call",
    "HIVE-SEQ-005": "refusal_fails",
    "HIVE-SEQ-006": "addendum_last",
    "HIVE-SEQ-007": "token_sum",
}


def _metas() -> dict[str, dict[str, Any]]:
    return {
        path.parent.name: cast("dict[str, Any]", json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(_FIXTURES.glob("*/meta.json"))
    }


def test_ids_are_well_formed_unique_and_keyed_by_themselves() -> None:
    assert REQUIREMENTS
    for key, item in REQUIREMENTS.items():
        assert key == item.id
        assert re.fullmatch(r"HIVE-[A-Z]+-\d{3}", item.id), item.id
    ids = [item.id for item in REQUIREMENTS.values()]
    assert len(ids) == len(set(ids))


def test_every_tier_is_valid_and_capability_is_set_exactly_for_capability_tier() -> None:
    for item in REQUIREMENTS.values():
        assert item.tier in TIERS, item.id
        if item.tier == "capability":
            assert item.capability in CAPABILITIES, item.id
        else:
            assert item.capability is None, item.id
    assert {item.tier for item in REQUIREMENTS.values()} == set(TIERS)


def test_every_rule_is_one_sentence_and_every_source_is_named() -> None:
    for item in REQUIREMENTS.values():
        text = item.rule
        assert text.endswith("."), item.id
        assert "\n" not in text, item.id
        assert not re.search(r"[.!?]\s", text[:-1]), f"{item.id}: more than one sentence: {text}"
        assert item.source.strip(), item.id


def test_every_verifier_rule_maps_to_an_existing_requirement() -> None:
    assert set(RULE_REQUIREMENTS) == set(RULES)
    for rule, requirement_id in RULE_REQUIREMENTS.items():
        assert requirement_id in REQUIREMENTS, rule


def test_the_fixed_ids_check_the_rules_they_are_fixed_to() -> None:
    for requirement_id, rule in _FIXED.items():
        assert RULE_REQUIREMENTS[rule] == requirement_id
    assert RULE_REQUIREMENTS["after_last_turn"] == "HIVE-SEQ-001"
    assert requirement("HIVE-RUN-001").tier == "mandatory"
    assert all(REQUIREMENTS[requirement_id].tier == "mandatory" for requirement_id in _STRUCTURAL)


def test_the_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        REQUIREMENTS["HIVE-X-001"] = requirement("HIVE-WIRE-001")  # type: ignore[index]
    with pytest.raises(TypeError):
        RULE_REQUIREMENTS["readable"] = "HIVE-X-001"  # type: ignore[index]


def test_requirement_looks_up_by_id() -> None:
    assert requirement("HIVE-SEQ-003") is REQUIREMENTS["HIVE-SEQ-003"]


def test_an_unknown_id_is_a_key_error_that_names_it() -> None:
    with pytest.raises(KeyError, match=r"unknown requirement id 'HIVE-NOPE-999'.*HIVE-<AREA>-<NNN>"):
        requirement("HIVE-NOPE-999")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"id": "hive-wire-1", "tier": "mandatory"}, "not of the form"),
        ({"id": "HIVE-X-001", "tier": "capability"}, "exactly when the tier"),
        ({"id": "HIVE-X-001", "tier": "advisory", "capability": "thinking"}, "exactly when the tier"),
        ({"id": "HIVE-X-001", "tier": "capability", "capability": "telepathy"}, "unknown capability"),
    ],
)
def test_a_malformed_requirement_is_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Requirement(rule="A rule.", source="here", **fields)


def test_a_requirement_is_immutable() -> None:
    item = requirement("HIVE-WIRE-001")
    with pytest.raises(AttributeError):
        item.rule = "changed"  # type: ignore[misc]
    assert msgspec.structs.asdict(item)["tier"] == "mandatory"


def test_every_scenario_cites_known_requirements_and_needs_their_capabilities() -> None:
    metas = _metas()
    assert len(metas) >= 33
    for name, meta in metas.items():
        cited: list[str] = meta["requirements"]
        assert cited, name
        assert len(cited) == len(set(cited)), name
        capabilities = set(meta.get("capabilities", []))
        assert capabilities <= set(CAPABILITIES), name
        for requirement_id in cited:
            assert requirement_id in REQUIREMENTS, f"{name}: unknown requirement {requirement_id}"
            needed = REQUIREMENTS[requirement_id].capability
            assert needed is None or needed in capabilities, f"{name}: {requirement_id} needs {needed}"


def test_every_scenario_level_requirement_is_cited_by_a_scenario() -> None:
    cited = {requirement_id for meta in _metas().values() for requirement_id in meta["requirements"]}
    uncited = sorted(set(REQUIREMENTS) - _STRUCTURAL - cited)
    assert not uncited, f"no scenario cites {', '.join(uncited)}"


def test_every_scenario_is_snake_case_and_has_its_input_files() -> None:
    for name in _metas():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), f"scenario names are snake_case: {name}"
        directory = _FIXTURES / name
        assert (directory / "script.jsonl").is_file(), name
        assert (directory / "input.jsonl").read_text(encoding="utf-8").strip(), name
