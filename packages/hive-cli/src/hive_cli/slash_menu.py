"""When the interactive prompt opens its completion menu by itself: while the line is a ``/`` command being typed.

Typing ``/`` shows every slash command with its one line of help, and each further letter narrows the menu;
``@`` paths and everything else still complete on Tab only (a menu over every word of a message would be noise).
"""

from __future__ import annotations

from typing import Final

from prompt_toolkit.application.current import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.filters import Filter

__all__ = ["TYPING_A_COMMAND", "typing_a_command"]


def typing_a_command(text: str) -> bool:
    """Whether ``text``, the line so far, is a slash command's name being typed (``/``, ``/mo``; not ``/model x``)."""
    return text.startswith("/") and not any(ch.isspace() for ch in text)


TYPING_A_COMMAND: Final[Filter] = Condition(lambda: typing_a_command(get_app().current_buffer.text))
"""prompt_toolkit's ``complete_while_typing`` for the message prompt."""
