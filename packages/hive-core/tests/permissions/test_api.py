"""The public surface of hive_core.permissions."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import hive_core.permissions as permissions
from hive_core.approvals import ToolCallPolicy
from hive_core.approvals import Verdict
from hive_core.permissions import PermissionConfigError
from hive_core.permissions import PermissionPolicy


def test_the_names_hosts_rely_on_are_public() -> None:
    public = (
        "PermissionRules",
        "PermissionPolicy",
        "load_permission_rules",
        "PermissionConfigError",
    )
    assert set(public) <= set(permissions.__all__)


def test_evaluate_signature_is_the_gate_interface() -> None:
    signature = inspect.signature(PermissionPolicy.evaluate)
    assert list(signature.parameters) == ["self", "tool_name", "arguments"]
    assert typing.get_type_hints(PermissionPolicy.evaluate)["return"] is Verdict
    assert issubclass(PermissionPolicy, ToolCallPolicy)


def test_config_error_is_a_value_error() -> None:
    error = PermissionConfigError("broken", source=str(Path("x.yaml")), line=3)
    assert isinstance(error, ValueError)
    assert str(error) == "invalid permission rules in x.yaml, line 3: broken"
