"""Where bash evaluates text as arithmetic, and when that text is safe to leave to it.

Bash's arithmetic reads a variable's value as an expression of its own, and an array subscript in that expression
as a command line: with ``x='a[$(id)]'``, ``${b[x]}``, ``${!x}``, ``${s:x}``, ``$((x))``, ``[[ x -eq 1 ]]``,
``b[x]=1``, ``RANDOM=x`` and ``declare -i n=x`` all run ``id``, though none of them shows a substitution. An
arithmetic context is judged from its text alone only when it is literal arithmetic: numbers and operators, no
name, no expansion (``$((1+2))``, ``${a[0]}``, ``${s:1:2}``); any other is a problem the line is asked about.

Checked against bash 5.2 with a marker file (``tests/permissions/test_shell_arithmetic.py``). Builtins that read a
number with ``strtol`` rather than as arithmetic (``shift``, ``return``, ``exit``, ``read -t``/``-n``, ``ulimit``,
``printf %d``, ``wait``, ``kill``, ``break``, ``[ x -eq 1 ]``) run nothing and need no check.
"""

from __future__ import annotations

import re

__all__ = [
    "ARITHMETIC_VARIABLES",
    "expansion_problem",
    "literal_arithmetic",
    "literal_subscript",
]

ARITHMETIC_VARIABLES = frozenset(
    {"RANDOM", "SRANDOM", "OPTIND", "HISTCMD", "SECONDS", "LINENO", "OPTERR", "BASH_ARGV0", "EPOCHSECONDS"}
)
"""Bash's own variables whose assignment evaluates the value as arithmetic (``RANDOM=x`` reads ``x``)."""

_NUMBER = r"(?:0[xX][0-9a-fA-F]+|[0-9]+#[0-9a-zA-Z@_]+|[0-9]+)"
# Numbers, operators, blanks and parentheses only: no name bash would read as a variable, no `$`, no quote.
_LITERAL_ARITHMETIC = re.compile(rf"(?:\s|{_NUMBER}(?![0-9A-Za-z_@#])|[-+*/%<>=!&|^~?:,()])*")
_LITERAL_SUBSCRIPT = re.compile(r"\s*[-+]?[0-9]+\s*|[@*]")
# `${` [#!] name-or-special [subscript] rest `}`
_EXPANSION = re.compile(
    r"\$\{(?P<prefix>[#!]?)(?P<name>[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])"
    r"(?:\[(?P<subscript>[^\]]*)\])?(?P<rest>.*)\}",
    re.DOTALL,
)
# What may follow the name in `${name…}`: a word operator (its word is walked as words are) or nothing.
_WORD_OPERATORS = ("", ":-", ":=", ":?", ":+", "-", "=", "?", "+", "#", "%", "/", "^", ",", "@")


def literal_arithmetic(text: str) -> bool:
    """Whether bash evaluating ``text`` as arithmetic reads no variable and expands nothing."""
    return _LITERAL_ARITHMETIC.fullmatch(text) is not None


def literal_subscript(text: str) -> bool:
    """Whether the array subscript ``text`` (between the brackets) is a fixed index, ``@`` or ``*``."""
    return _LITERAL_SUBSCRIPT.fullmatch(text) is not None


def expansion_problem(source: str) -> str | None:
    """Why the ``${...}`` expansion ``source`` evaluates text as arithmetic that cannot be judged; ``None`` when
    it evaluates none, or only literal arithmetic."""
    match = _EXPANSION.fullmatch(source)
    if match is None:
        return f"the expansion {source[:40]!r} cannot be analysed"
    if match["prefix"] == "!":
        return f"the indirect expansion {source[:40]!r} reads a variable named by a value, which can run code"
    subscript = match["subscript"]
    if subscript is not None and not literal_subscript(subscript):
        return f"the array subscript in {source[:40]!r} is evaluated as arithmetic, which can run code"
    rest = match["rest"]
    if rest.startswith(":") and rest[1:2] not in ("-", "=", "?", "+"):
        if not all(literal_arithmetic(part) for part in rest[1:].split(":", 1)):
            return f"the substring offset in {source[:40]!r} is evaluated as arithmetic, which can run code"
        return None
    if rest.startswith(_WORD_OPERATORS[1:]) or not rest:
        return None
    return f"the expansion {source[:40]!r} cannot be analysed"
