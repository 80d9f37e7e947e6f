"""The public surface of hive_core.permissions."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import hive_core.permissions as permissions
from hive_core.permissions import PermissionConfigError, PermissionPolicy, Verdict


def _isort_key(name: str) -> tuple[int, str]:
    # The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions, each alphabetical.
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_and_complete() -> None:
    assert permissions.__all__ == sorted(permissions.__all__, key=_isort_key)
    for name in permissions.__all__:
        assert hasattr(permissions, name), name
    public = (
        "Verdict",
        "PermissionRules",
        "PermissionPolicy",
        "load_permission_rules",
        "PermissionConfigError",
    )
    assert set(public) <= set(permissions.__all__)


def test_evaluate_signature_is_the_gate_interface() -> None:
    signature = inspect.signature(PermissionPolicy.evaluate)
    assert list(signature.parameters) == ["self", "tool_name", "arguments", "planning"]
    planning = signature.parameters["planning"]
    assert planning.kind is inspect.Parameter.KEYWORD_ONLY
    assert planning.default is False
    assert typing.get_type_hints(PermissionPolicy.evaluate)["return"] is Verdict


def test_verdict_fields() -> None:
    hints = typing.get_type_hints(Verdict)
    assert list(Verdict.__struct_fields__) == ["action", "reason", "level"]
    assert set(typing.get_args(hints["action"])) == {"allow", "deny", "ask"}
    level_args = {arg for member in typing.get_args(hints["level"]) for arg in typing.get_args(member)}
    assert level_args == {"low", "medium", "high", "critical"}


def test_config_error_is_a_value_error() -> None:
    error = PermissionConfigError(str(Path("x.yaml")), "broken", line=3)
    assert isinstance(error, ValueError)
    assert str(error) == "invalid permission rules in x.yaml, line 3: broken"
