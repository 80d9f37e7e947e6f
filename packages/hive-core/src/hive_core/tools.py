"""Tools: typed Python functions offered to the model.

:func:`tool` turns a function (sync or async) into a :class:`Tool`. The JSON schema of its arguments comes from
the signature, the description and per-argument text from the docstring (an ``Args:`` section), and arguments are
validated against the signature before the function runs. A first parameter annotated :class:`ToolContext`
receives the call's context and is not shown to the model.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import get_type_hints
from typing import overload

import anyio
import anyio.to_thread
import msgspec

from hive_protocol import Event
from hive_protocol import RefusalKind

from .approvals import PathJudge
from .chat import ToolSpec
from .chat import UsageUpdate
from .errors import HiveError
from .messages import Message
from .messages import ToolImage

__all__ = [
    "EventSink",
    "Tool",
    "ToolArgumentError",
    "ToolContext",
    "ToolOutcome",
    "tool",
]

EventSink = Callable[[Event], None]
"""Where a turn's events go. Called synchronously, in order; it never awaits, so lines cannot interleave."""


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know about its call."""

    call_id: str
    """The call's id."""
    tool_name: str
    """The called tool's name."""
    working_dir: Path
    """The project directory the agent works in."""
    emit: EventSink
    """Send an event to the client (plan updates, for example)."""
    conversation: Sequence[Message] = ()
    """The conversation so far, this call's request included."""
    extras: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Anything the host wants its tools to reach."""
    path_judge: PathJudge | None = None
    """The agent's policy, when it judges paths: a tool that reaches files the call did not name one by one (a
    search, a listing) asks it about each of them. ``None`` when the agent has no such policy."""
    approved: bool = False
    """A person approved this very call (with the arguments it runs with) after the policy asked about it.

    Tools that widen what a call reaches only for an approved call read it: the command sandbox shows paths the
    rules ask about, the file tools touch a file with more than one hard link."""
    instructions: str | None = None
    """The agent's system instructions, which the conversation does not hold: what a tool that shows the
    conversation to another model (the advisor) shows first."""


class ToolOutcome(msgspec.Struct, kw_only=True):
    """The outcome of one call as the pipeline reports it."""

    content: str
    """What the model reads."""
    success: bool = True
    """Whether the call ran and succeeded."""
    refusal: RefusalKind | None = None
    """Set when the pipeline refused the call instead of running it."""
    error: str | None = None
    """``Type: message`` when the call failed."""
    terminate: bool = False
    """End the turn after this round (``stop_reason: tool_terminated``)."""
    stats: dict[str, int | float | bool | str] | None = None
    """The tool's own report for the client; never shown to the model."""
    images: tuple[ToolImage, ...] = ()
    """Images the tool returned besides :attr:`content` (which should name them for a model that cannot see
    them); they reach the model with the call's result (:attr:`ToolResultPart.images
    <hive_core.messages.ToolResultPart.images>`)."""
    usage: UsageUpdate | None = None
    """Tokens the tool spent on a model of its own (the advisor, research): the loop adds them to the turn's
    usage, so ``turn_end`` counts everything the turn cost."""

    @classmethod
    def refused(cls, kind: RefusalKind, text: str, *, terminate: bool = False) -> ToolOutcome:
        """A refusal the model reads as the call's result."""
        return cls(content=text, success=False, refusal=kind, terminate=terminate)

    @classmethod
    def failed(cls, exc: BaseException) -> ToolOutcome:
        """A failure the model reads as ``Type: message``."""
        text = f"{type(exc).__name__}: {exc}"
        return cls(content=text, success=False, error=text)


class ToolArgumentError(HiveError, ValueError):
    """The arguments parsed but do not fit the tool's parameters."""

    def __init__(self, message: str, *, missing: str | None = None) -> None:
        super().__init__(message)
        self.missing = missing
        """The required parameter that was not given, when that is the problem."""


class Tool:
    """A tool the model can call."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        timeout: float | None = None,
        delegates: bool = False,
    ) -> None:
        self.function = function
        self.name = name or function.__name__
        """The name the model calls it by (snake_case)."""
        doc = _Docstring.parse(inspect.getdoc(function) or "")
        self.description = description if description is not None else doc.summary
        """What it does, for the model."""
        self.read_only = read_only
        """Whether it leaves the user's work as it is (it reads, or keeps the agent's own plan): planning mode
        runs only read-only tools."""
        self.timeout = timeout
        """Seconds a call may run before it is stopped (``None``: the agent's default)."""
        self.delegates = delegates
        """Whether it hands work to another agent (``delegate``): planning mode does not offer it."""
        self._is_async = inspect.iscoroutinefunction(function)
        self._takes_context, self._arguments_type, self.parameters = _signature_schema(
            function, self.name, doc
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model is shown it."""
        return ToolSpec(self.name, self.description, self.parameters)

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, read_only={self.read_only})"

    async def invoke(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolOutcome:
        """Validate ``arguments`` and run the tool. Raises :class:`ToolArgumentError` when they do not fit."""
        try:
            values = msgspec.convert(dict(arguments), self._arguments_type)
        except msgspec.ValidationError as exc:
            raise _argument_error(str(exc)) from None
        kwargs = msgspec.structs.asdict(values)
        args = (context,) if self._takes_context else ()
        if self._is_async:
            result = await self.function(*args, **kwargs)
        else:
            # Abandoned on cancel so a timeout or a cancelled turn returns at once; the thread finishes on its own.
            result = await anyio.to_thread.run_sync(
                lambda: self.function(*args, **kwargs), abandon_on_cancel=True
            )
        return _outcome(result)


def _outcome(result: object) -> ToolOutcome:
    if isinstance(result, ToolOutcome):
        return result
    if isinstance(result, str):
        return ToolOutcome(content=result)
    if result is None:
        return ToolOutcome(content="")
    return ToolOutcome(content=msgspec.json.encode(result).decode())


_MISSING = re.compile(r"missing required field `([^`]+)`")


def _argument_error(message: str) -> ToolArgumentError:
    found = _MISSING.search(message)
    return ToolArgumentError(message, missing=found.group(1) if found else None)


@dataclass
class _Docstring:
    summary: str
    params: dict[str, str]

    @classmethod
    def parse(cls, text: str) -> _Docstring:
        params: dict[str, str] = {}
        summary_lines: list[str] = []
        current: str | None = None
        section = "summary"
        for raw in text.splitlines():
            line = raw.strip()
            if line.lower() in ("args:", "arguments:", "parameters:"):
                section = "args"
                continue
            if section == "args" and re.fullmatch(r"[A-Za-z][A-Za-z ]*:", line):
                section = "other"
            if section == "summary":
                summary_lines.append(line)
            elif section == "args":
                match = re.match(r"(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)
                if match and raw.startswith((" ", "\t")) and not raw.startswith(" " * 8):
                    current = str(match.group(1))
                    params[current] = str(match.group(2))
                elif current is not None and line:
                    params[current] += " " + line
        return cls(" ".join(" ".join(summary_lines).split()), params)


def _signature_schema(
    function: Callable[..., Any], name: str, doc: _Docstring
) -> tuple[bool, type[msgspec.Struct], dict[str, Any]]:
    signature = inspect.signature(function)
    hints = get_type_hints(function)
    params = list(signature.parameters.values())
    takes_context = bool(params) and hints.get(params[0].name) is ToolContext
    if takes_context:
        params = params[1:]
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {name!r}: *args and **kwargs cannot be described to a model")
        annotation = hints.get(param.name, Any)
        if param.default is inspect.Parameter.empty:
            fields.append((param.name, annotation))
        else:
            fields.append((param.name, annotation, param.default))
    struct = msgspec.defstruct(f"{name}_arguments", fields, kw_only=True, forbid_unknown_fields=True)
    schema = msgspec.json.schema(struct)
    defs = schema.pop("$defs", {})
    ref = schema.get("$ref", "").rsplit("/", 1)[-1]
    parameters: dict[str, Any] = dict(defs.pop(ref, schema))
    parameters.pop("title", None)
    parameters.setdefault("properties", {})
    parameters.setdefault("required", [])
    for prop_name, text in doc.params.items():
        prop = parameters["properties"].get(prop_name)
        if prop is not None and text:
            prop["description"] = text
    parameters["additionalProperties"] = False
    if defs:
        parameters["$defs"] = defs
    return takes_context, struct, parameters


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    timeout: float | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    timeout: float | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Declare a tool from a typed function: ``@tool`` or ``@tool(read_only=True)``."""

    def wrap(fn: Callable[..., Any]) -> Tool:
        return Tool(fn, name=name, description=description, read_only=read_only, timeout=timeout)

    return wrap(function) if function is not None else wrap
