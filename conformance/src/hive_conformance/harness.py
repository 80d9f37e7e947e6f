"""Running scenarios against a runner: feed the requests, read the events, judge them.

Every stream is checked three ways: by the sequence verifier of ``hive_protocol`` (each broken rule fails its
own requirement), by the runner's exit (``HIVE-RUN-001``), and byte for byte against ``expected.jsonl`` (a
difference fails the scenario's own requirements).
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import Final
from typing import cast

import anyio
import msgspec

from hive_conformance.compare import MEASURED_FIELDS
from hive_conformance.compare import RUNNER_CHOSEN_FIELDS
from hive_conformance.compare import diff_lines
from hive_conformance.compare import same_lines
from hive_conformance.fixtures import AwaitStep
from hive_conformance.fixtures import FixtureError
from hive_conformance.fixtures import RawStep
from hive_conformance.fixtures import Scenario
from hive_conformance.fixtures import SendStep
from hive_conformance.fixtures import substitute
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.report import Finding
from hive_conformance.report import Report
from hive_conformance.report import ScenarioResult
from hive_conformance.report import build_report
from hive_conformance.requirements import RULE_REQUIREMENTS
from hive_conformance.targets import Connection
from hive_conformance.targets import Target
from hive_conformance.tool_server import SERVER_NAME
from hive_conformance.tool_server import FixtureToolServer
from hive_conformance.workspace import prepare_workspace
from hive_protocol import verify

__all__ = [
    "DEFAULT_TIMEOUT",
    "EXIT_REQUIREMENT",
    "FIRST_LINE_REQUIREMENT",
    "STREAM_REQUIREMENTS",
    "Suite",
    "normalize_recording",
    "run_suite",
]

DEFAULT_TIMEOUT: Final = 30.0
"""Seconds one scenario may take, from starting the runner to its exit."""

FIRST_LINE_REQUIREMENT: Final = "HIVE-SESS-001"
"""Checked on every stream: ``session_started`` comes first."""

EXIT_REQUIREMENT: Final = "HIVE-RUN-001"
"""Checked on every run: the runner exits 0 once its input ends (or after ``shutdown``), in time."""

STREAM_REQUIREMENTS: Final = tuple(
    dict.fromkeys([FIRST_LINE_REQUIREMENT, EXIT_REQUIREMENT, *RULE_REQUIREMENTS.values()])
)
"""The requirements every scenario checks, whatever it is about."""

_MAX_LINE: Final = 64 * 1024 * 1024
_MEASURED: Final = tuple(
    (kind.encode(), field.encode()) for kind, _, field in (name.partition(".") for name in MEASURED_FIELDS)
)
_TRANSCRIPT_CHARS: Final = 2000

Progress = Callable[[ScenarioResult], None]
"""Told of each scenario as it ends."""


class Suite:
    """The servers a run needs, shared by its scenarios: the scripted model and the fixture tools."""

    def __init__(self, files: Path, *, model_port: int = 0, tools_port: int = 0) -> None:
        self.model = ScriptedModelServer(port=model_port)
        """The scripted model server (OpenAI-compatible), reset for each scenario."""
        self.tools = FixtureToolServer(files, port=tools_port)
        """The fixture MCP server."""

    def __enter__(self) -> Suite:
        self.model.start()
        try:
            self.tools.start()
        except BaseException:
            self.model.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            self.tools.close()
        finally:
            self.model.close()


async def run_suite(
    scenarios: Sequence[Scenario],
    target: Target,
    suite: Suite,
    *,
    exact: bool = False,
    without: Iterable[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    progress: Progress | None = None,
    record: bool = False,
    output_dir: Path | None = None,
) -> Report:
    """Run every scenario in order against ``target``; the report judges every requirement.

    ``exact`` compares every byte (what hive runners must meet); otherwise the scenario's ``varies`` fields and
    the ids a runner chooses are taken as given. ``without`` names capabilities the runner lacks. ``record``
    writes each scenario's output to its ``expected.jsonl`` (to create fixtures; review before committing).
    ``output_dir`` receives each scenario's lines exactly as the runner wrote them, as ``<scenario>.jsonl``.
    """
    lacking = set(without)
    results: list[ScenarioResult] = []
    with tempfile.TemporaryDirectory(prefix="hive-conformance-") as scratch:
        for scenario in scenarios:
            result = await run_scenario(
                scenario,
                target,
                suite,
                root=Path(scratch) / scenario.name,
                exact=exact,
                lacking=lacking,
                timeout=timeout,
                record=record,
                output_dir=output_dir,
            )
            results.append(result)
            if progress is not None:
                progress(result)
    return build_report(target.description, results)


async def run_scenario(
    scenario: Scenario,
    target: Target,
    suite: Suite,
    *,
    root: Path,
    exact: bool = False,
    lacking: set[str] | frozenset[str] = frozenset(),
    timeout: float = DEFAULT_TIMEOUT,
    record: bool = False,
    output_dir: Path | None = None,
) -> ScenarioResult:
    """Run one scenario in a fresh runner and judge it."""
    missing = sorted(set(scenario.meta.capabilities) & lacking)
    own = [rid for rid in scenario.meta.requirements if rid not in STREAM_REQUIREMENTS]
    if missing:
        return ScenarioResult(
            name=scenario.name,
            status="skip",
            checked=own,
            skipped_because=f"the runner lacks {', '.join(missing)}",
        )
    if not scenario.expected and not record:
        raise FixtureError(f"{scenario.path}: no expected.jsonl (record it with --record, then review it)")
    started = time.monotonic()
    suite.model.reset(scenario.rounds)
    workspace = prepare_workspace(
        root, scenario.meta, model_url=suite.model.url, tools_url=suite.tools.url, server_name=SERVER_NAME
    )
    # A wait that cannot be met fails the scenario, not the runner's exit: the input is closed after a third of
    # the time, leaving the rest for the runner to end.
    exchange = _Exchange(timeout / 3)
    with anyio.move_on_after(timeout) as deadline:
        async with target.connect(workspace) as connection:
            await exchange.run(scenario, connection)
    findings: list[Finding] = []
    for problem in exchange.problems:
        findings += [Finding(rid, problem) for rid in own]
    if deadline.cancelled_caught:
        message = f"the runner did not finish within {timeout:g} s"
        findings.append(Finding(EXIT_REQUIREMENT, message))
        findings += [Finding(rid, message) for rid in own]
    elif exchange.exit_code not in (0, None):
        findings.append(Finding(EXIT_REQUIREMENT, f"the runner exited with status {exchange.exit_code}"))
    lines = exchange.lines
    if not _is_session_started(lines[0] if lines else b""):
        first = lines[0][:120].decode("utf-8", "replace") if lines else "nothing"
        findings.append(Finding(FIRST_LINE_REQUIREMENT, f"the first line is not session_started: {first}"))
    for violation in verify(lines, turns=scenario.turns):
        findings.append(Finding(RULE_REQUIREMENTS[violation.rule], str(violation)))
    if output_dir is not None:
        _save(output_dir / f"{scenario.name}.jsonl", lines)
    if record:
        _save(scenario.path / "expected.jsonl", normalize_recording(lines))
    fields = (
        set(MEASURED_FIELDS) if exact else {*MEASURED_FIELDS, *RUNNER_CHOSEN_FIELDS, *scenario.meta.varies}
    )
    same, masked = same_lines(lines, scenario.expected, fields)
    diff = ""
    if not same and not record:
        diff = diff_lines(masked, scenario.expected)
        findings += [Finding(rid, "the output differs from expected.jsonl") for rid in own]
    unused = suite.model.remaining
    if unused and not deadline.cancelled_caught:
        message = f"the runner left {len(unused)} scripted model round(s) unused"
        findings += [Finding(rid, message) for rid in own]
    failed = bool(findings)
    return ScenarioResult(
        name=scenario.name,
        status="fail" if failed else "pass",
        checked=[*own, *STREAM_REQUIREMENTS],
        findings=_unique(findings),
        diff=diff,
        exit_code=exchange.exit_code,
        seconds=round(time.monotonic() - started, 3),
        transcript=[_cut(line) for line in lines] if failed else [],
        stderr=exchange.stderr if failed else "",
    )


def normalize_recording(lines: Iterable[bytes]) -> list[bytes]:
    """Recorded lines as fixtures keep them: the :data:`~hive_conformance.compare.MEASURED_FIELDS` set to 0.

    Lines may come with or without their ``\\n``; they are returned with it.
    """
    out: list[bytes] = []
    for line in lines:
        line = line if line.endswith(b"\n") else line + b"\n"
        for kind, field in _MEASURED:
            if line.startswith(b'{"type":"%s"' % kind) and b'"%s":' % field in line:
                event = cast("dict[str, Any]", msgspec.json.decode(line))
                event[field.decode()] = 0
                line = msgspec.json.encode(event) + b"\n"
        out.append(line)
    return out


class _Exchange:
    """One scenario's conversation with the runner: the steps out, the lines in."""

    def __init__(self, await_timeout: float) -> None:
        self.await_timeout = await_timeout
        """Seconds a ``$await`` step waits before the exchange gives up on it and closes the input."""
        self.lines: list[bytes] = []
        self.problems: list[str] = []
        self.exit_code: int | None = None
        self.stderr = ""
        self._counts: Counter[str] = Counter()
        self._seen: dict[str, dict[str, Any]] = {}
        self._arrived = anyio.Event()
        self._ended = False

    async def run(self, scenario: Scenario, connection: Connection) -> None:
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._read, connection)
                await self._feed(scenario, connection)
                if not scenario.meta.keep_input_open:
                    await connection.close_input()
                while not self._ended:
                    await self._next()
                self.exit_code = await connection.wait()
        finally:
            self.stderr = connection.diagnostics()

    async def _feed(self, scenario: Scenario, connection: Connection) -> None:
        for number, step in enumerate(scenario.steps, start=1):
            match step:
                case AwaitStep(event_type=kind, count=count):
                    with anyio.move_on_after(self.await_timeout):
                        while self._counts[kind] < count and not self._ended:
                            await self._next()
                    if self._counts[kind] < count:
                        why = "the output ended" if self._ended else f"{self.await_timeout:g} s passed"
                        self.problems.append(
                            f"step {number}: {why} before {count} {kind} event(s) were written"
                            f" (there were {self._counts[kind]}); the input was closed there"
                        )
                        return
                    continue
                case RawStep(text=text):
                    data = text.encode() + b"\n"
                case SendStep(line=line):
                    try:
                        data = substitute(line, self._seen).encode() + b"\n"
                    except FixtureError as error:
                        self.problems.append(f"step {number}: {error}")
                        return
            try:
                await connection.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as error:
                self.problems.append(f"step {number}: the runner stopped reading its input ({error!r})")
                return

    async def _read(self, connection: Connection) -> None:
        # Lines are kept exactly as written, "\n" included: a "\r", a blank line or a missing final newline
        # must show in the comparison, so hive_protocol's tolerant splitter is not used here.
        buffer = bytearray()
        try:
            async for chunk in connection.output():
                start = len(buffer)
                buffer += chunk
                while (end := buffer.find(b"\n", start)) >= 0:
                    self._take(bytes(buffer[: end + 1]))
                    del buffer[: end + 1]
                    start = 0
                if len(buffer) > _MAX_LINE:
                    self.problems.append(f"the runner wrote a line over {_MAX_LINE} bytes")
                    return
            if buffer:
                self._take(bytes(buffer))
        finally:
            self._ended = True
            self._wake()

    def _take(self, line: bytes) -> None:
        self.lines.append(line)
        try:
            value = msgspec.json.decode(line)
        except (msgspec.DecodeError, RecursionError):  # the runner's line; verify reports it
            value = None
        if isinstance(value, dict):
            event = cast("dict[str, Any]", value)
            kind = event.get("type")
            if isinstance(kind, str):
                self._counts[kind] += 1
                self._seen[kind] = event
        self._wake()

    def _wake(self) -> None:
        self._arrived.set()
        self._arrived = anyio.Event()

    async def _next(self) -> None:
        await self._arrived.wait()


def _is_session_started(line: bytes) -> bool:
    # By its type, not its bytes: a first line written out of canonical order is HIVE-WIRE-002's business.
    try:
        value = msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return False
    return isinstance(value, dict) and cast("dict[str, Any]", value).get("type") == "session_started"


def _save(path: Path, lines: Iterable[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))


def _unique(findings: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(findings))


def _cut(line: bytes) -> str:
    text = line.decode("utf-8", "replace")
    return text if len(text) <= _TRANSCRIPT_CHARS else f"{text[:_TRANSCRIPT_CHARS]}… ({len(line)} bytes)"
