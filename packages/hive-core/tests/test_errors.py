"""The error hierarchy: every error hive raises on purpose is a HiveError, each user-fixable one a UserError."""

from __future__ import annotations

from typing import Any

import pytest

from hive_core import ChatError
from hive_core import ToolArgumentError
from hive_core.config import ConfigError
from hive_core.errors import HiveError
from hive_core.errors import UserError
from hive_core.mcp import McpServerError
from hive_core.mcp import PluginConfigError
from hive_core.permissions import PermissionConfigError
from hive_core.sessions import InvalidSessionId
from hive_core.sessions import SessionExists
from hive_core.sessions import SessionInUse
from hive_core.sessions import SessionNotFound
from hive_core.sessions import SessionStoreError
from hive_core.sessions import UnsupportedSchema

USER_ERRORS: list[tuple[type[UserError], type[Exception]]] = [
    (ConfigError, ValueError),
    (PermissionConfigError, ValueError),
    (PluginConfigError, ValueError),
    (InvalidSessionId, ValueError),
    (SessionNotFound, LookupError),
    (SessionExists, ValueError),
    (UnsupportedSchema, RuntimeError),
    (SessionStoreError, RuntimeError),
    (SessionInUse, RuntimeError),
]


@pytest.mark.parametrize(("error", "base"), USER_ERRORS, ids=[error.__name__ for error, _ in USER_ERRORS])
def test_user_errors_keep_their_standard_base(error: type[UserError], base: type[Exception]) -> None:
    assert issubclass(error, UserError)
    assert issubclass(error, HiveError)
    assert issubclass(error, base)


@pytest.mark.parametrize(
    ("error", "base"),
    [(ChatError, Exception), (ToolArgumentError, ValueError), (McpServerError, RuntimeError)],
    ids=["ChatError", "ToolArgumentError", "McpServerError"],
)
def test_errors_that_are_not_the_users_are_hive_errors(error: type[Exception], base: type[Exception]) -> None:
    assert issubclass(error, HiveError)
    assert issubclass(error, base)
    assert not issubclass(error, UserError)


def test_a_user_error_is_one_line_with_its_position_first() -> None:
    assert str(UserError("broken", source="f.yaml", line=3, column=7)) == "f.yaml:3:7: broken"
    assert str(UserError("broken", source="f.yaml", line=3)) == "f.yaml:3: broken"
    assert str(UserError("broken", source="OPENAI_API_KEY")) == "OPENAI_API_KEY: broken"
    assert str(UserError("broken")) == "broken"


@pytest.mark.parametrize(
    "error", [error for error, _ in USER_ERRORS], ids=[e.__name__ for e, _ in USER_ERRORS]
)
def test_every_user_error_is_built_the_same_way(error: type[UserError]) -> None:
    extra: dict[str, Any] = {"session_id": "s-1"} if error in (SessionNotFound, SessionExists) else {}
    if error is SessionInUse:
        extra = {"session_id": "s-1", "pid": 1, "host": "h", "since": 0.0}
    made = error("it is wrong", source="f.yaml", line=2, column=5, **extra)
    assert (made.problem.removeprefix("line 2: "), made.source, made.line, made.column) == (
        "it is wrong",
        "f.yaml",
        2,
        5,
    )
    assert "it is wrong" in str(made)
    assert "f.yaml" in str(made)
    assert "\n" not in str(made)


def test_session_errors_word_their_message_from_the_id() -> None:
    assert str(SessionNotFound(session_id="gone")) == "no session with id 'gone'"
    assert SessionNotFound(session_id="gone").session_id == "gone"
    assert str(SessionExists(session_id="s-1")) == "a session with id 's-1' already exists"
