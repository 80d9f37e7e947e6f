"""Shell commands: the always-deny list and risk levels."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hive_protocol import RiskLevel

from .shell_syntax import parse_command

__all__ = ["ALWAYS_DENIED", "always_denied", "risk_level", "shell_risk_level"]

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
    through ``sudo``/``runas``, ``chmod 777`` and downloads piped into a shell; ``medium`` otherwise. Judged on
    the line and on every simple command of its parse.
    """
    return risk_level(command, [simple.text() for simple in parse_command(command).commands])


def risk_level(command: str, simple_commands: Sequence[str]) -> RiskLevel:
    """:func:`shell_risk_level` for a line already parsed into the texts of its simple commands."""
    texts = [_fold(command), *(_fold(text) for text in simple_commands)]
    heads = texts[1:]
    if any(_CRITICAL.search(text) for text in texts) or any(_CRITICAL_HEAD.match(head) for head in heads):
        return "critical"
    if any(_HIGH.search(text) for text in texts) or any(_HIGH_HEAD.match(head) for head in heads):
        return "high"
    return "medium"
