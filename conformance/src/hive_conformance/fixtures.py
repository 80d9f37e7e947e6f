"""The scenarios: language-neutral fixture files, one directory per scenario.

``conformance/fixtures/<scenario>/`` holds:

- ``meta.json``: what the scenario proves (:class:`Meta`);
- ``script.jsonl``: the scripted model's rounds (:mod:`hive_conformance.script`);
- ``input.jsonl``: the client's steps, one per line (:data:`Step`);
- ``expected.jsonl``: the exact event lines a hive runner writes.

A directory whose name starts with ``_`` or that has no ``meta.json`` (such as ``files/``, the data the
``read_fixture`` tool reads) is not a scenario.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated
from typing import Any
from typing import cast

import msgspec

from hive_conformance.requirements import Capability
from hive_conformance.script import Round
from hive_conformance.script import decode_script

__all__ = [
    "AwaitStep",
    "FixtureError",
    "Meta",
    "RawStep",
    "Scenario",
    "SendStep",
    "Step",
    "decode_steps",
    "default_fixtures_dir",
    "load_scenario",
    "load_scenarios",
    "substitute",
]

_FIELD = re.compile(r"^[a-z_]+\.[a-z_]+$")
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_Positive = Annotated[int, msgspec.Meta(ge=1)]


class FixtureError(ValueError):
    """A fixture file is missing or malformed; the message names the file and the fault."""


class Meta(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``meta.json``: what a scenario proves and how its runner is set up."""

    description: str
    """One sentence: what the scenario shows."""
    requirements: list[str]
    """The requirement ids the scenario exercises (see :mod:`hive_conformance.requirements`)."""
    capabilities: list[Capability] = []
    """The runner capabilities the scenario needs."""
    varies: list[str] = []
    """``<event type>.<field>`` names whose values a runner that is not hive may choose differently."""
    tool_timeout_ms: _Positive | None = None
    """Milliseconds one call of a fixture tool may take; the runner's default when unset."""
    approval_timeout_seconds: Annotated[float, msgspec.Meta(gt=0)] | None = None
    """Seconds an approval waits for an answer; the runner's default when unset."""
    max_session_tokens: _Positive | None = None
    """The session's token budget (input plus output tokens of every model request); none when unset."""
    keep_input_open: bool = False
    """Leave the runner's input open after the last step (it must exit on its own, e.g. after ``shutdown``)."""


class SendStep(msgspec.Struct, frozen=True):
    """Send one request line, exactly as written in ``input.jsonl`` once its placeholders are filled."""

    line: str
    """The line without its ``\\n``, placeholders still in."""


class RawStep(msgspec.Struct, frozen=True):
    """``{"$raw": text}``: send ``text`` and a ``\\n`` verbatim (a malformed line, ``null``…)."""

    text: str
    """What is sent, before the ``\\n``."""


class AwaitStep(msgspec.Struct, frozen=True):
    """``{"$await": type, "count": n}``: wait until the runner wrote at least ``count`` events of ``type``."""

    event_type: str
    """The event type waited for."""
    count: int = 1
    """How many events of that type must have been written since the runner started."""


Step = SendStep | RawStep | AwaitStep
"""One line of ``input.jsonl``."""


class Scenario(msgspec.Struct, frozen=True, kw_only=True):
    """One scenario, loaded from its directory."""

    name: str
    """The directory's name."""
    path: Path
    """The directory."""
    meta: Meta
    """``meta.json``."""
    rounds: list[Round]
    """``script.jsonl``: what the scripted model answers, one round per model request."""
    steps: list[Step]
    """``input.jsonl``: what the client does."""
    expected: list[bytes]
    """``expected.jsonl``: the event lines, each with its ``\\n``; empty when the file is missing."""

    @property
    def turns(self) -> int:
        """How many ``user_message`` requests the scenario sends (what ``verify`` expects to end)."""
        return sum(
            1 for step in self.steps if isinstance(step, SendStep) and _request_type(step) == "user_message"
        )


def default_fixtures_dir() -> Path:
    """The fixtures shipped with the kit: inside the installed package, else the source tree's ``fixtures/``."""
    packaged = Path(__file__).parent / "fixtures"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "fixtures"


def load_scenarios(root: Path | None = None, *, names: Sequence[str] = ()) -> list[Scenario]:
    """Every scenario under ``root`` (default :func:`default_fixtures_dir`), sorted by name.

    ``names`` keeps only those scenarios; an unknown name is a :class:`FixtureError`.
    """
    directory = root if root is not None else default_fixtures_dir()
    if not directory.is_dir():
        raise FixtureError(f"{directory}: no such fixtures directory")
    found = {
        path.name: path
        for path in directory.iterdir()
        if path.is_dir() and not path.name.startswith("_") and (path / "meta.json").is_file()
    }
    unknown = sorted(set(names) - set(found))
    if unknown:
        raise FixtureError(f"no such scenario in {directory}: {', '.join(unknown)}")
    chosen = sorted(names) if names else sorted(found)
    return [load_scenario(found[name]) for name in chosen]


def load_scenario(path: Path) -> Scenario:
    """Read the scenario in ``path``."""
    meta_file = path / "meta.json"
    try:
        meta = msgspec.json.decode(meta_file.read_bytes(), type=Meta)
    except (OSError, msgspec.DecodeError) as error:
        raise FixtureError(f"{meta_file}: {error}") from error
    if not meta.requirements:
        raise FixtureError(f"{meta_file}: requirements is empty")
    bad = [name for name in meta.varies if not _FIELD.match(name)]
    if bad:
        raise FixtureError(f"{meta_file}: varies entries must be '<event type>.<field>': {', '.join(bad)}")
    try:
        rounds = decode_script(_read(path / "script.jsonl", missing_ok=True))
    except ValueError as error:
        raise FixtureError(f"{path / 'script.jsonl'}: {error}") from error
    steps = decode_steps(_read(path / "input.jsonl"), source=str(path / "input.jsonl"))
    expected_file = path / "expected.jsonl"
    expected = (
        [line + b"\n" for line in expected_file.read_bytes().split(b"\n") if line]
        if expected_file.is_file()
        else []
    )
    return Scenario(name=path.name, path=path, meta=meta, rounds=rounds, steps=steps, expected=expected)


def decode_steps(data: bytes, *, source: str = "input.jsonl") -> list[Step]:
    """Read the steps of ``input.jsonl``; blank lines are skipped. Errors name ``source`` and the line."""
    steps: list[Step] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        where = f"{source}, line {number}"
        try:
            value = msgspec.json.decode(raw)
        except msgspec.DecodeError as error:
            raise FixtureError(f"{where}: not JSON ({error})") from error
        if not isinstance(value, dict):
            raise FixtureError(f"{where}: a step is a JSON object")
        step = cast("dict[str, Any]", value)
        if "$raw" in step:
            text = step["$raw"]
            if not isinstance(text, str) or len(step) != 1:
                raise FixtureError(f'{where}: write a raw line as {{"$raw": "text"}}')
            steps.append(RawStep(text))
        elif "$await" in step:
            kind, count = step["$await"], step.get("count", 1)
            if (
                not isinstance(kind, str)
                or not isinstance(count, int)
                or count < 1
                or set(step) - {"$await", "count"}
            ):
                raise FixtureError(f'{where}: write a wait as {{"$await": "<event type>", "count": 1}}')
            steps.append(AwaitStep(kind, count))
        elif isinstance(step.get("type"), str):
            steps.append(SendStep(raw.decode()))
        else:
            raise FixtureError(f'{where}: a step is a request (with "type"), "$raw" or "$await"')
    return steps


def substitute(line: str, seen: Mapping[str, Mapping[str, Any]]) -> str:
    """Fill the placeholders of a request line.

    ``${<event type>.<field>}`` becomes that field of the latest event of the type in ``seen`` (JSON-escaped,
    so it stays inside its string); ``${repeat:<count>:<text>}`` becomes ``text`` repeated ``count`` times.
    Raises :class:`FixtureError` when the event or the field has not been seen.
    """

    def fill(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression.startswith("repeat:"):
            count, _, text = expression.removeprefix("repeat:").partition(":")
            if not count.isdigit():
                raise FixtureError(f"bad placeholder ${{{expression}}}: write ${{repeat:<count>:<text>}}")
            return text * int(count)
        kind, _, field = expression.partition(".")
        event = seen.get(kind)
        if event is None or field not in event:
            raise FixtureError(f"placeholder ${{{expression}}}: the runner wrote no {kind} with a {field}")
        return (
            msgspec.json.encode(event[field]).decode()[1:-1]
            if isinstance(event[field], str)
            else str(event[field])
        )

    return _PLACEHOLDER.sub(fill, line)


def _read(path: Path, *, missing_ok: bool = False) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as error:
        if missing_ok:
            return b""
        raise FixtureError(f"{path}: missing") from error


def _request_type(step: SendStep) -> str | None:
    try:
        value = msgspec.json.decode(step.line)
    except msgspec.DecodeError:
        return None
    return cast("dict[str, Any]", value).get("type") if isinstance(value, dict) else None
