"""A session's "always" grants kept in its log, so ``-c``, ``-r`` and a restarted server restore them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hive_core.approvals import Grant

from .records import PermissionGrants
from .records import last_grants
from .store import SessionStore

if TYPE_CHECKING:  # the permissions package loads the shell parser: not on a one-shot run's way to the model
    from hive_core.permissions.grants import SessionGrants

__all__ = ["keep_grants"]


def keep_grants(grants: SessionGrants, store: SessionStore, session_id: str) -> None:
    """Restore the grants the session ``session_id`` kept (when it has a log), and from now on append every change
    of ``grants`` to that log as a ``permission_grants`` entry."""
    if store.get(session_id) is not None:
        grants.restore(last_grants(store.entries(session_id)))

    def kept(current: tuple[Grant, ...]) -> None:
        store.append(session_id, PermissionGrants(grants=list(current)))

    grants.listeners.append(kept)
