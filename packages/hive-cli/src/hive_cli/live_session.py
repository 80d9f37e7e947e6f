"""The interactive mode's current session, which ``/clear``, ``/model``, ``/agent`` and ``/resume`` replace.

Replacing opens the new session through :func:`~hive_cli.opening.open_session`, exactly as the command line would
have, starts its plugins (or its coding-agent CLI) on the mode's event loop, and ends the old one. When the new one
cannot be opened the old one goes on and the error is told.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from dataclasses import replace

from anyio.from_thread import BlockingPortal

from .assemble import HostOptions
from .conversation import SessionChoice
from .conversation import SessionChoiceError
from .errors import USER_ERRORS
from .local_notice import say_local_model_notice
from .opening import OpenSession
from .opening import open_session
from .opening import terminal_prompts
from .render import TextRenderer

__all__ = ["LiveSession"]


class LiveSession:
    """The session the interactive mode runs its turns in, its plugins running while it is current."""

    def __init__(
        self, session: OpenSession, options: HostOptions, renderer: TextRenderer, portal: BlockingPortal
    ) -> None:
        self.session = session
        """The current session."""
        self.options = options
        """What the current session was opened with (``-c``/``-r`` aside)."""
        self._renderer = renderer
        self._portal = portal
        self._plugins: AbstractContextManager[None] | None = None

    def start(self) -> None:
        """Show the session with the renderer and start its plugins."""
        session, renderer = self.session, self._renderer
        renderer.follow(session.agent_session)
        session.share_screen(renderer.screen)
        say_local_model_notice(session, sys.stderr)
        plugins = self._portal.wrap_async_context_manager(session.plugins())
        plugins.__enter__()
        self._plugins = plugins

    def stop(self, *, end: bool = True) -> None:
        """Stop the plugins, record the session as ended (when ``end``) and close its store."""
        plugins, self._plugins = self._plugins, None
        try:
            if plugins is not None:
                plugins.__exit__(None, None, None)
        finally:
            if end:
                self.session.end()
            self.session.close()

    def replace(self, options: HostOptions, choice: SessionChoice) -> str | None:
        """Continue in the session ``choice`` opens with ``options``; the error's message when it cannot be
        opened (the current session then goes on)."""
        return self._switch(options, choice, end=True)

    def reopen(self, options: HostOptions) -> str | None:
        """Continue the current session (its conversation restored) with ``options``; the error's message when
        that fails, the session then going on as it was."""
        return self._switch(options, SessionChoice(resume=self.session.session_id), end=False)

    def _switch(self, options: HostOptions, choice: SessionChoice, *, end: bool) -> str | None:
        # The old session is closed first: its lease is given up (a reopened session takes it again), and no two
        # connections to the session database are open at once.
        current = SessionChoice(resume=self.session.session_id)
        self.stop(end=end)
        try:
            opened = open_session(options, choice, prompts=terminal_prompts())
        except USER_ERRORS as exc:
            self.session = self._back(current)
            self.start()
            return str(exc)
        self.session, self.options = opened, options
        self.start()
        return None

    def _back(self, current: SessionChoice) -> OpenSession:
        """The current session opened again after a switch failed."""
        try:
            return open_session(self.options, current, prompts=terminal_prompts())
        except SessionChoiceError:
            # A CLI's session with no turn yet is deleted when a backend for it cannot be built (opening.py):
            # nothing was said in it, so a new one takes its place.
            return open_session(self.options, SessionChoice(), prompts=terminal_prompts())

    def with_options(self, **changes: object) -> HostOptions:
        """The current options with ``changes``."""
        return replace(self.options, **changes)  # pyright: ignore[reportArgumentType]
