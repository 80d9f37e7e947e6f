"""Shell commands: the always-deny list, risk levels, and splitting a command line into simple commands."""

from __future__ import annotations

import re
from typing import NamedTuple

from hive_protocol import RiskLevel

__all__ = ["ALWAYS_DENIED", "CommandParts", "always_denied", "shell_risk_level", "split_commands"]

# Options of an rm call that include recursion and force, in any spelling (-rf, -fr, -r -f, --recursive --force).
_RM_FORCED = r"\brm (?=(?:-\S* )*(?:-(?!-)\S*r|--recursive\b))(?=(?:-\S* )*(?:-(?!-)\S*f|--force\b))"
_INTO_SHELL = r"\|&? ?(?:sudo (?:-\S+ )*)?(?:env )?(?:\S*/)?(?:ba|z|da|k)?sh\b"

ALWAYS_DENIED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("a fork bomb", r": ?\( ?\) ?\{ ?: ?\| ?: ?& ?\} ?; ?:"),
        ("writing straight to a disk device", r"> ?/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)"),
        ("reading a device with dd", r"\bdd\b[^;&|]*\bif=/dev/"),
        ("making a file system", r"\bmkfs\b"),
        ("editing a partition table", r"fdisk"),
        ("formatting a drive", r"\bformat [a-z]:"),
        (
            "a forced recursive delete of an absolute path or the home directory",
            _RM_FORCED + r"(?:-\S* )*['\"]?(?:/|~(?:/|$| |['\"])|\$home\b|\$\{home\})",
        ),
        ("opening permissions on an absolute path", r"\bchmod (?:-\S+ )*777 ['\"]?/"),
        ("piping into a shell", _INTO_SHELL),
    )
)
"""Commands refused whatever the rules say, as (what it is, pattern over the lower-cased, space-folded command).

They cover reference §C.6's substring list and the spellings it missed (extra spaces, flags reordered or split,
``|sh``, ``~`` and ``$HOME``); ``| sh`` must be a whole word, so ``| shuf`` and ``| sha256sum`` pass.
"""

_CRITICAL = re.compile(_RM_FORCED + r"|\bdd\b[^;&|]*\bif=")
_CRITICAL_HEAD = re.compile(r"(?:format |del\b(?=.*/s\b)(?=.*/q\b))")
_HIGH = re.compile(r"\bchmod (?:-\S+ )*777\b|\b(?:curl|wget)\b.*" + _INTO_SHELL)
_HIGH_HEAD = re.compile(r"(?:sudo|runas) ")


class CommandParts(NamedTuple):
    """A command line cut at its control operators."""

    segments: tuple[str, ...]
    """The simple commands (``;``, ``&``, ``|``, ``&&``, ``||``, ``|&`` and newlines cut between them), with
    grouping brackets and ``!`` trimmed off."""
    opaque: bool
    """True when part of the command cannot be read from its text: a command substitution (``$(...)``, backticks,
    ``<(...)``) or an unclosed quote."""


def _fold(command: str) -> str:
    return " ".join(command.lower().split())


def always_denied(command: str) -> str | None:
    """What makes ``command`` one that is always refused, or ``None`` when it is not on the list."""
    text = _fold(command)
    for label, pattern in ALWAYS_DENIED:
        if pattern.search(text):
            return label
    return None


def shell_risk_level(command: str) -> RiskLevel:
    """How risky running ``command`` is, for a call that needs approval.

    ``critical`` for forced recursive deletes, ``del /s /q``, ``format`` and ``dd if=``; ``high`` for commands run
    through ``sudo``/``runas``, ``chmod 777`` and downloads piped into a shell; ``medium`` otherwise.
    """
    text = _fold(command)
    heads = [_fold(segment) for segment in split_commands(command).segments]
    if _CRITICAL.search(text) or any(_CRITICAL_HEAD.match(head) for head in heads):
        return "critical"
    if _HIGH.search(text) or any(_HIGH_HEAD.match(head) for head in heads):
        return "high"
    return "medium"


def split_commands(command: str) -> CommandParts:
    """Cut ``command`` into its simple commands at the control operators outside quotes."""
    segments: list[str] = []
    current: list[str] = []
    opaque = False
    quote: str | None = None
    i = 0
    while i < len(command):
        char = command[i]
        following = command[i + 1] if i + 1 < len(command) else ""
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            current.append(char + following)
            i += 2
            continue
        elif quote == '"':
            quote = None if char == '"' else quote
            opaque = opaque or char == "`" or (char == "$" and following == "(")
        elif char in "'\"":
            quote = char
        elif char == "`" or (char in "$<>" and following == "("):
            opaque = True
        elif char in ";|\n" or (char == "&" and not _is_redirection(command, i)):
            segments.append("".join(current))
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    segments.append("".join(current))
    trimmed = (segment.strip().lstrip("({! \t").rstrip(")} \t") for segment in segments)
    return CommandParts(tuple(segment for segment in trimmed if segment), opaque or quote is not None)


def _is_redirection(command: str, i: int) -> bool:
    # `2>&1`, `>&2`, `<&3` and `&>file` use `&` as part of a redirection, not to end a command.
    before = command[i - 1] if i > 0 else ""
    after = command[i + 1] if i + 1 < len(command) else ""
    return before in ("<", ">") or after == ">"
