"""The renderer follows the built-in loop's conversation (one call where a session is shown): ``--show-tokens``
then reads the window use of the conversation's last request, at the time the turn ends."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import TYPE_CHECKING
from typing import cast

from hive_cli.render import TextRenderer

if TYPE_CHECKING:
    from hive_core.context import PreparedRequest
    from hive_core.loop import AgentSession


def test_the_last_request_is_read_from_the_followed_conversation_when_asked() -> None:
    renderer = TextRenderer(stdout=io.StringIO(), stderr=io.StringIO(), plain=True, show_tokens=True)
    assert renderer.last_request() is None  # nothing followed yet
    first, later = cast("PreparedRequest", object()), cast("PreparedRequest", object())
    context = SimpleNamespace(last=None)
    renderer.follow(cast("AgentSession", SimpleNamespace(context=context)))
    assert renderer.last_request() is None  # no request prepared yet
    context.last = first
    assert renderer.last_request() is first
    context.last = later  # each turn prepares its own: read when asked, not when followed
    assert renderer.last_request() is later
    renderer.follow(None)  # a coding-agent CLI's session: no window to show
    assert renderer.last_request() is None
