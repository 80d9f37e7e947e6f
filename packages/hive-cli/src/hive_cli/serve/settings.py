"""The ``settings`` a client may give a session in ``POST /api/sessions``: the few a session needs of its own, over
the configuration of the user who runs ``hive serve`` (the conformance kit's binding sends them for each scenario).

- ``mcp_server`` and ``mcp_url``: one MCP server reached over streamable HTTP, its tools offered as
  ``mcp__<mcp_server>__<tool>`` and allowed, except
- ``ask_tools``: those of its tools (full names) that ask for approval first;
- ``tool_timeout_ms``: how long one call of its tools may run;
- ``approval_timeout_seconds``: how long an approval waits for its answer;
- ``max_session_tokens``: the session's token budget (``budget.maxSessionTokens``).

Nothing else: an unknown key is a 400 naming it. A client cannot start a program this way (no stdio server), nor
loosen any rule beyond the server it adds; a token holder can run commands through the agent anyway, so this gives
no new power, only a session-sized scope to what could be configured for every session.
"""

from __future__ import annotations

from typing import Annotated
from typing import Final
from urllib.parse import urlsplit

import msgspec

from hive_cli.assemble import SessionLayer

__all__ = ["SessionSettings", "SettingsRefused", "decode_settings"]


class SettingsRefused(ValueError):
    """Settings a session cannot take; the message says which and why."""


class SessionSettings(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A session's own settings, as ``POST /api/sessions`` takes them (see the module's documentation)."""

    mcp_server: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_-]{1,40}$")] | None = None
    """The name of an MCP server added for the session (letters, digits, ``-`` and ``_``)."""
    mcp_url: str | None = None
    """Its streamable-HTTP address (``http`` or ``https``); required with ``mcp_server``."""
    ask_tools: tuple[str, ...] = ()
    """Tools of that server (``mcp__<mcp_server>__<tool>``) that ask for approval; its others are allowed."""
    tool_timeout_ms: Annotated[int, msgspec.Meta(gt=0)] | None = None
    """Milliseconds one call of that server's tools may run (default: the plugins' default)."""
    approval_timeout_seconds: Annotated[float, msgspec.Meta(gt=0)] | None = None
    """Seconds an approval waits for its answer (default: ``approval.timeoutSeconds``)."""
    max_session_tokens: Annotated[int, msgspec.Meta(gt=0)] | None = None
    """The session's token budget, replacing ``budget.maxSessionTokens``."""

    def layer(self) -> SessionLayer:
        """The settings as a configuration layer over the user's."""
        from hive_core.mcp import PluginConfig
        from hive_core.permissions import PermissionRule
        from hive_core.permissions import PermissionRules

        if self.mcp_server is None or self.mcp_url is None:
            return SessionLayer(
                approval_timeout=self.approval_timeout_seconds, max_session_tokens=self.max_session_tokens
            )
        plugin = PluginConfig(
            name=self.mcp_server, transport="http", url=self.mcp_url, source="session settings"
        )
        if self.tool_timeout_ms is not None:
            plugin = msgspec.structs.replace(plugin, timeout=self.tool_timeout_ms / 1000)
        # Without a reason, as a config file's rules: the approval names the rule the same way (the kit compares).
        rules = PermissionRules(
            mcp_tools=(
                *(PermissionRule(pattern=name, action="ask", priority=100) for name in self.ask_tools),
                PermissionRule(pattern=f"mcp__{self.mcp_server}__*", action="allow"),
            )
        )
        return SessionLayer(
            plugins=(plugin,),
            rules=rules,
            approval_timeout=self.approval_timeout_seconds,
            max_session_tokens=self.max_session_tokens,
        )


_FIELDS: Final = SessionSettings.__struct_fields__


def decode_settings(raw: dict[str, object]) -> SessionSettings:
    """The settings of a request body's ``settings`` object; raises :class:`SettingsRefused` naming every unknown
    key, or the first value that is wrong."""
    unknown = sorted(set(raw) - set(_FIELDS))
    if unknown:
        raise SettingsRefused(
            f"settings: unknown {'keys' if len(unknown) > 1 else 'key'} {', '.join(map(repr, unknown))}; "
            f"a session may set {', '.join(_FIELDS)}"
        )
    try:
        settings = msgspec.convert(raw, SessionSettings)
    except msgspec.ValidationError as exc:
        raise SettingsRefused(f"settings: {exc}") from exc
    server = settings.mcp_server
    if (server is None) != (settings.mcp_url is None):
        raise SettingsRefused("settings: mcp_server and mcp_url go together")
    if server is None and (settings.ask_tools or settings.tool_timeout_ms is not None):
        raise SettingsRefused("settings: ask_tools and tool_timeout_ms concern the session's mcp_server")
    if settings.mcp_url is not None:
        parts = urlsplit(settings.mcp_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SettingsRefused(f"settings: mcp_url is not an http(s) URL: {settings.mcp_url!r}")
    outside = [name for name in settings.ask_tools if not name.startswith(f"mcp__{server}__")]
    if outside:
        raise SettingsRefused(
            f"settings: ask_tools must be tools of mcp_server (mcp__{server}__…): {outside}"
        )
    return settings
