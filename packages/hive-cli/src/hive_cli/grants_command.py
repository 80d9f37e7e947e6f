"""``/permissions``: the rules this session's "always" answers granted, listed with numbers and revocable."""

from __future__ import annotations

from hive_core.permissions import SessionGrants

__all__ = ["permissions_command"]

_USAGE = "usage: /permissions (list this session's always-allowed rules) or /permissions revoke N"


def permissions_command(grants: SessionGrants | None, argument: str) -> str:
    """What ``/permissions ARGUMENT`` prints: the numbered grants, or the outcome of ``revoke N``."""
    if grants is None:
        return "always-answers are not kept here: this session's turns are judged by its agent's own rules"
    words = argument.split()
    if not words:
        if not grants.all:
            return 'nothing is always allowed in this session yet (answer "a" at an approval to add a rule)'
        lines = ["always allowed for this session (/permissions revoke N to ask again):"]
        lines += [f"  {number}. {grant.describe()}" for number, grant in enumerate(grants.all, start=1)]
        return "\n".join(lines)
    if words[0] != "revoke" or len(words) != 2 or not words[1].isdigit():
        return _USAGE
    try:
        grant = grants.revoke(int(words[1]))
    except IndexError:
        count = len(grants.all)
        return (
            f"no rule numbered {words[1]}: /permissions lists {count} (1 to {count})"
            if count
            else ("nothing is always allowed in this session to revoke")
        )
    return f"revoked: {grant.describe()} (asked again from now on)"
