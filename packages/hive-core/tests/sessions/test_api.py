"""The public surface of hive_core.sessions."""

from __future__ import annotations

import inspect

import hive_core.sessions as sessions
from hive_core.sessions import SessionStore
from hive_core.sessions import SqliteSessionStore


def test_the_names_hosts_rely_on_are_public() -> None:
    public = {
        "SessionStore",
        "SqliteSessionStore",
        "TranscriptRecorder",
        "DurableHitlBridge",
        "SuspendedTurn",
        "PendingApproval",
        "SessionInfo",
        "InvalidSessionId",
        "SessionNotFound",
        "validate_session_id",
    }
    assert public <= set(sessions.__all__)


def test_the_sqlite_store_implements_every_method_of_the_protocol() -> None:
    wanted = {name for name in vars(SessionStore) if not name.startswith("_")}
    assert wanted == {
        "create",
        "get",
        "list_sessions",
        "latest",
        "delete",
        "fork",
        "set_status",
        "append",
        "entries",
        "restore",
        "pending_approvals",
        "close",
    }
    for name in wanted:
        mine = inspect.signature(getattr(SqliteSessionStore, name))
        theirs = inspect.signature(getattr(SessionStore, name))
        assert list(mine.parameters) == list(theirs.parameters), name
