"""Validation of per-turn options against the agent they are sent to."""

from __future__ import annotations

import math
from collections.abc import Iterable

import msgspec

from .limits import excerpt
from .requests import TurnOptions
from .values import REASONING_EFFORTS

__all__ = ["InvalidTurnOptions", "validate_tool_mode", "validate_turn_options"]

_NAMES_SHOWN = 5
_NAME_CHARS = 60


class InvalidTurnOptions(ValueError):
    """Turn options that name something the agent does not have; the message names the value and the choices.

    A runner answers it with ``error{code: "request_rejected"}`` and a ``turn_end`` without a stop reason.
    """


def validate_tool_mode(mode: str, registered_tools: Iterable[str]) -> None:
    """Check one ``tool_mode`` spelling: ``auto``, ``none``, ``require_any`` or ``require:<registered tool>``."""
    if mode in ("auto", "none", "require_any"):
        return
    if mode.startswith("require:"):
        name = mode.removeprefix("require:")
        registered = set(registered_tools)
        if name not in registered:
            raise InvalidTurnOptions(
                f"Turn options require tool '{excerpt(name)}', which is not registered on this agent. "
                f"Registered tools: {_listing(registered)}."
            )
        return
    raise InvalidTurnOptions(
        f"Unknown tool mode '{excerpt(mode)}'. Expected auto, none, require_any or require:<tool name>."
    )


def validate_turn_options(options: TurnOptions, registered_tools: Iterable[str]) -> TurnOptions:
    """Check ``options`` against the agent's tools; return them normalised.

    Normalised means duplicate tool names collapsed (first occurrence kept) and whitespace-only instructions
    unset. Raises :class:`InvalidTurnOptions` on the first problem found.
    """
    registered = set(registered_tools)
    changes: dict[str, object] = {}
    if options.tool_names is not None:
        unknown = [name for name in dict.fromkeys(options.tool_names) if name not in registered]
        if unknown:
            raise InvalidTurnOptions(
                f"Turn options name tool(s) that are not registered on this agent: {_unknown(unknown)}. "
                f"Registered tools: {_listing(registered)}."
            )
        names = list(dict.fromkeys(options.tool_names))
        if names != options.tool_names:
            changes["tool_names"] = names
    if options.tool_mode is not None:
        validate_tool_mode(options.tool_mode, registered)
    effort = options.reasoning_effort
    if effort is not None and effort not in REASONING_EFFORTS:
        raise InvalidTurnOptions(
            f"Unknown reasoning effort '{excerpt(effort)}'. Expected none, low, medium, high or extra_high."
        )
    temperature = options.temperature
    if temperature is not None and (not math.isfinite(temperature) or temperature < 0):
        raise InvalidTurnOptions(
            f"Turn option temperature must be a finite number of at least 0, got {temperature}."
        )
    if options.max_output_tokens is not None and options.max_output_tokens < 1:
        raise InvalidTurnOptions(
            f"Turn option max_output_tokens must be at least 1, got {options.max_output_tokens}."
        )
    if options.instructions is not None and not options.instructions.strip():
        changes["instructions"] = None
    return msgspec.structs.replace(options, **changes) if changes else options


def _unknown(names: list[str]) -> str:
    # A client may send any number of names of any length: the message quotes a few, each cut short.
    shown = ", ".join(excerpt(name, _NAME_CHARS) for name in names[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    return f"{shown} and {more:,} more" if more > 0 else shown


def _listing(names: set[str]) -> str:
    return ", ".join(sorted(names)) if names else "(none)"
