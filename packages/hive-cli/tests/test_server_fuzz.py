"""``hive run --server`` under hostile input, as a real process: nesting of any depth and huge bad lines are
answered with errors and the next turn runs; a model's deep tool arguments are a refusal; 200,000 queued lines keep
memory bounded (reading pauses, nothing is dropped); and a fuzz run of mutated request lines through one server.

Each test starts one server and writes to it from a thread; every wait is bounded.
"""

from __future__ import annotations

import fcntl
import os
import random
import re
import subprocess
import termios
import threading
import time
from collections.abc import Callable
from collections.abc import Generator
from contextlib import contextmanager
from contextlib import suppress
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Final

import msgspec
import pytest
from cli_harness import HIVE
from cli_harness import TIMEOUT
from cli_harness import Workspace
from cli_harness import text
from cli_harness import wait_until

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_protocol import MAX_NESTING_DEPTH
from hive_protocol import LineSplitter
from hive_protocol import LineTooLong
from hive_protocol import ShutdownRequest
from hive_protocol import UnreadableRequest
from hive_protocol import UserMessageRequest
from hive_protocol import decode_request
from hive_protocol import verify

MIB: Final = 1024 * 1024
DEPTHS: Final = (1_000, 10_000, 100_000)
ERROR_LINE_BOUND: Final = 1_000
"""Bytes an ``error`` line answering a bad request may take: its message quotes a few hundred characters at most."""

_F_GETPIPE_SZ: Final = 1032


@dataclass
class Server:
    """A ``hive run --server`` whose stdin is a pipe the test writes to and whose stdout a thread reads."""

    process: subprocess.Popen[bytes]
    stdin: int
    """The write end of the server's stdin."""
    peek: int
    """A second read end of the same pipe, never read: it tells how many bytes wait in the pipe."""
    stderr_path: Path
    lines: list[bytes] = field(default_factory=list[bytes])
    on_lines: Callable[[list[bytes]], None] | None = None
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _done: bool = False

    def start_reading(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        # In large chunks, waking the waiters once per chunk: the test reads hundreds of thousands of lines.
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        partial = b""
        while chunk := os.read(fd, 1 << 20):
            *complete, partial = (partial + chunk).split(b"\n")
            batch = [line + b"\n" for line in complete]
            if self.on_lines is not None:
                self.on_lines(batch)
            with self._changed:
                self.lines += batch
                self._changed.notify_all()
        with self._changed:
            if partial:
                self.lines.append(partial)
            self._done = True
            self._changed.notify_all()

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.stdin, view) :]

    def close_stdin(self) -> None:
        os.close(self.stdin)

    def wait_for(self, predicate: Callable[[list[bytes]], bool], what: str, timeout: float = TIMEOUT) -> None:
        """Wait until ``predicate(lines so far)`` holds; fail after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self.lines):
                left = deadline - time.monotonic()
                if left <= 0 or self._done:
                    raise AssertionError(
                        f"{what}: not seen (exit {self.process.poll()}); stderr:\n{self.stderr}"
                    )
                self._changed.wait(left)

    def count(self, prefix: bytes) -> int:
        with self._changed:
            return sum(1 for line in self.lines if line.startswith(prefix))

    def waiting_bytes(self) -> int:
        """Bytes written to the server's stdin that it has not read yet."""
        buf = bytearray(4)
        fcntl.ioctl(self.peek, termios.FIONREAD, buf)
        return int.from_bytes(buf, "little")

    def pipe_size(self) -> int:
        return fcntl.fcntl(self.peek, _F_GETPIPE_SZ)

    def peak_memory_kib(self) -> int:
        """The server's peak resident memory so far (VmHWM), in KiB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        found = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.MULTILINE)
        assert found is not None, status
        return int(found.group(1))

    def finish(self, timeout: float = TIMEOUT) -> int:
        """Close stdin, wait for the exit and the end of stdout; the exit code."""
        self.close_stdin()
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the server did not exit within {timeout:g} s; stderr:\n{self.stderr}"
            ) from None
        with self._changed:
            while not self._done:
                self._changed.wait(timeout)
        return code

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@contextmanager
def running_server(ws: Workspace, *args: str) -> Generator[Server]:
    read_end, write_end = os.pipe()
    peek = os.open(f"/proc/self/fd/{read_end}", os.O_RDONLY | os.O_NONBLOCK)
    stderr_path = ws.root / "server.stderr"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            [str(HIVE), "run", "--server", *args],
            stdin=read_end,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=ws.project,
            env=ws.env,
        )
    os.close(read_end)
    server = Server(process, write_end, peek, stderr_path)
    try:
        yield server
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(TIMEOUT)
        os.close(peek)
        with suppress(OSError):  # closed already when the test finished the server
            os.close(write_end)
        if process.stdout is not None:
            process.stdout.close()


def request(value: dict[str, Any]) -> bytes:
    return msgspec.json.encode(value) + b"\n"


def arrays(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def kind(line: bytes) -> str:
    value: Any = msgspec.json.decode(line)
    return str(value["type"])


def assert_clean_exit(server: Server, code: int) -> None:
    assert code == 0, server.stderr
    assert "Traceback" not in server.stderr, server.stderr


# -- deep and huge requests ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_deep_and_huge_requests_are_answered_and_the_next_turn_runs(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("still ", "here."))
    bad = [
        shape % arrays(depth)
        for depth in DEPTHS
        for shape in (
            b"%s",
            b'{"type":"user_message","content":%s}',
            b'{"type":"hitl_response","approved":true,"modified_arguments":{"a":%s}}',
            b'{"type":"cancel","extra":%s}',
        )
    ]
    bad.append(
        b'{"type":"' + b"x" * (15 * MIB) + b'"}'
    )  # a 15 MiB unknown type, once echoed whole, twice over
    bad.append(b'{"type":"user_message","content":"' + b"\xff" * (15 * MIB) + b'"}')

    with running_server(ws.use(server)) as hive:
        hive.start_reading()
        hive.wait_for(lambda lines: len(lines) >= 1, "session_started")
        for line in bad:
            hive.write(line + b"\n")
        hive.write(request({"type": "user_message", "content": "hello"}))
        hive.wait_for(lambda lines: lines[-1].startswith(b'{"type":"turn_end"'), "the good turn's turn_end")
        code = hive.finish()
    assert_clean_exit(hive, code)

    lines = hive.lines
    assert [kind(line) for line in lines] == [
        "session_started",
        *["error"] * len(bad),
        "text_delta",
        "text_delta",
        "turn_end",
    ]
    for line in lines[1 : 1 + len(bad)]:
        assert b'"code":"unreadable_request"' in line
        assert len(line) < ERROR_LINE_BOUND, line[:300]
    assert b'"stop_reason":"completed"' in lines[-1]
    assert verify(lines, turns=1) == []


# -- deep tool arguments from the model ------------------------------------------------------------------------


def deep_call(call_id: str, depth: int) -> Round:
    """A round calling ``read_file`` with arguments nested ``depth`` levels (the object itself is level 1)."""
    raw = '{"path":' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    pieces = [raw[i : i + 8192] for i in range(0, len(raw), 8192)]
    return Round(
        parts=[ScriptToolCall(id=call_id, name="read_file", arguments=pieces)],
        usage=Usage(input_tokens=20, output_tokens=5),
    )


@pytest.mark.slow
def test_deep_tool_arguments_from_the_model_are_refused_and_the_turn_goes_on(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    # Just over the limit, and past what the decoder's own stack takes (1,000 levels and more take that same
    # path: 10,000 and 100,000 are in hive-core's test_input_limits; here they would only fill the scripted
    # model's small context window, as any long arguments would).
    depths = (MAX_NESTING_DEPTH + 1, 1_000)
    for index, depth in enumerate(depths):
        server.add(deep_call(f"c{index}", depth), Round(parts=[ScriptText(chunks=[f"noted {index}"])]))
    with running_server(ws.use(server).allow_all()) as hive:
        hive.start_reading()
        for index in range(len(depths)):
            hive.write(request({"type": "user_message", "content": f"read it {index}"}))
            hive.wait_for(
                lambda lines, n=index + 1: sum(b'"turn_end"' in x for x in lines) == n, f"turn {index}"
            )
        code = hive.finish()
    assert_clean_exit(hive, code)

    events: list[dict[str, Any]] = [msgspec.json.decode(line) for line in hive.lines]
    ends = [e for e in events if e["type"] == "tool_end"]
    assert [e["call_id"] for e in ends] == ["c0", "c1"]
    for end in ends:
        assert (end["success"], end["refusal"]) == (False, "invalid_arguments")
        assert f"deeper than {MAX_NESTING_DEPTH} levels" in end["output"]
    turn_ends = [e for e in events if e["type"] == "turn_end"]
    assert [e["stop_reason"] for e in turn_ends] == ["completed"] * 2
    assert not [e for e in events if e["type"] == "error"]
    assert verify(hive.lines, turns=2) == []
    # The model read each refusal and answered it.
    assert server.remaining == []


# -- 200,000 queued lines --------------------------------------------------------------------------------------

QUEUED: Final = 200_000
TURN_EVERY: Final = 10
"""Every 10th queued line is a turn (20,000 of them, 9 KB each); the others are ``context_update`` lines. A turn
costs the server a few writes to its session store, so 200,000 turns would take a minute of CPU; 20,000 carry the
same 180 MiB, which an unbounded queue would hold."""
PAD: Final = b"p" * 9_000
MEMORY_BOUND_MIB: Final = 150


def queued_line(index: int) -> bytes:
    if index % TURN_EVERY:
        return b'{"type":"context_update","working_path":"/home/user/p%d"}\n' % index
    # A turn the server rejects at once (an unknown tool); the error names the tool, which tells the order.
    return b'{"type":"user_message","content":"%s","options":{"tool_names":["nope_%d"]}}\n' % (
        PAD,
        index // TURN_EVERY,
    )


@pytest.mark.slow
def test_200000_queued_lines_keep_memory_bounded_and_every_turn_is_answered_in_order(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    # The first turn streams one delta, then its model goes quiet: nothing queued behind it can run.
    server.add(Round(parts=[ScriptText(chunks=["thinking", "never sent"])], stall_after_chunks=1))
    sent = 0
    turns = QUEUED // TURN_EVERY
    order: list[int] = []
    errors = re.compile(
        rb'"message":"Turn options name tool\(s\) that are not registered on this agent: nope_(\d+)\.'
    )

    def on_lines(lines: list[bytes]) -> None:
        order.extend(int(found) for line in lines for found in errors.findall(line))

    def writer() -> None:
        nonlocal sent
        for index in range(QUEUED):
            hive.write(queued_line(index))
            sent = index + 1

    with running_server(ws.use(server)) as hive:
        hive.on_lines = on_lines
        hive.start_reading()
        hive.write(request({"type": "user_message", "content": "first"}))
        hive.wait_for(lambda lines: any(b'"text_delta"' in line for line in lines), "the first turn's text")
        feeding = threading.Thread(target=writer, daemon=True)
        feeding.start()
        pipe = hive.pipe_size()

        def stalled() -> bool:
            # The server has read everything, or it stopped reading: the pipe is full and stays as it is.
            if sent == QUEUED:
                return True
            samples = set[tuple[int, int]]()
            for _ in range(25):
                samples.add((sent, hive.waiting_bytes()))
                time.sleep(0.02)
            return len(samples) == 1 and samples.pop()[1] > pipe // 2

        wait_until(stalled, what="the server to stop reading or to read everything")
        read_while_stalled = sent
        stalled_mib = hive.peak_memory_kib() / 1024
        server.close()  # the quiet model goes away: the first turn fails, the queued turns run
        feeding.join(TIMEOUT * 4)
        assert not feeding.is_alive()
        hive.wait_for(lambda lines: len(order) == turns, "every queued turn's answer", timeout=TIMEOUT * 4)
        peak_mib = hive.peak_memory_kib() / 1024
        code = hive.finish()
    assert_clean_exit(hive, code)

    sent_mib = sum(len(queued_line(index)) for index in range(QUEUED)) / MIB
    print(
        f"\n{QUEUED:,} queued lines, {turns:,} of them turns ({sent_mib:.0f} MiB): the server had taken "
        f"{read_while_stalled:,} lines while a turn ran (peak {stalled_mib:.0f} MiB then); peak over the whole run "
        f"{peak_mib:.0f} MiB"
    )
    # Reading paused: an unbounded queue would have taken every line, and held more than the bound allows.
    assert read_while_stalled < 5_000
    assert sent_mib > MEMORY_BOUND_MIB
    assert peak_mib < MEMORY_BOUND_MIB
    # Nothing dropped, everything in order, every turn closed.
    assert order == list(range(turns))
    assert hive.count(b'{"type":"turn_end"') == turns + 1
    assert verify(hive.lines, turns=turns + 1) == []


# -- the fuzz run ----------------------------------------------------------------------------------------------

FUZZ_LINES: Final = 100_000
FUZZ_SEED: Final = 12


SEEDS: Final = [
    b'{"type":"user_message","content":"read the README","options":{"tool_names":["nope"],"tool_mode":"auto"}}',
    b'{"type":"user_message","content":"x","options":{"reasoning_effort":"sideways","temperature":0.5}}',
    b'{"type":"user_message","content":"caf\xc3\xa9 \\u2028 ok","model":"scripted","options":{"tool_mode":"bogus"}}',
    b'{"type":"context_update","working_path":"/home/user/project","selected_items":["a.py","b.py"]}',
    b'{"type":"hitl_response","approved":true,"id":"hitl-c1","reason":"ok","modified_arguments":{"path":"x","n":[1,2,{"k":null}]}}',
    b'{"type":"question_response","id":"q1","answers":{"Which?":["A"],"Why?":"because"}}',
    b'{"type":"cancel"}',
]
"""Valid requests to mutate. A user_message's options are invalid, so that most turns end at once."""

TOKENS: Final = [
    b"\x00",
    b"\\u0000",
    "\u2028".encode(),
    "\u2029".encode(),
    b"\xff\xfe",
    b"\xed\xa0\x80",
    b"\\ud800",
    b"\xc0\xaf",
    b"1e999999",
    b"-0",
    b"123456789012345678901234567890123456789",
    b"9" * 5_000,
    b"NaN",
    b"Infinity",
    b"null",
    b"true",
    b"[]",
    b"{}",
    b'"type"',
    b'"shutdown"',
    b":",
    b",",
    b'"',
    b"\\",
    b"\r",
    b"\t",
    "🐝".encode(),
]
"""Bytes that break decoders: NULs, line and paragraph separators, invalid UTF-8, numbers out of range."""

WRONG_VALUES: Final = [
    b"1",
    b"-1",
    b"1.5",
    b"true",
    b"null",
    b'"s"',
    b"[]",
    b"{}",
    b'[1,"a",null]',
    b'{"a":{}}',
]
UNKNOWN_TYPES: Final = [
    b"",
    b"mystery",
    b"USER_MESSAGE",
    b"user_message ",
    b"tool_start",
    b"turn_end",
    b"\\u0075ser",
]


def mutate(rng: random.Random, line: bytes) -> bytes:
    """One mutation of ``line``, drawn from the kinds the issue names."""
    if not line:
        return rng.choice(TOKENS)
    roll = rng.randrange(12)
    data = bytearray(line)
    at = rng.randrange(len(data) + 1)
    if roll == 0:  # byte flips
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif roll == 1:  # bit flips
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif roll == 2:  # truncation
        del data[at:]
    elif roll == 3:  # a token where it hurts
        data[at:at] = rng.choice(TOKENS)
    elif roll == 4:  # deep nesting, in a value or around the whole line
        depth = rng.choice([2, 50, MAX_NESTING_DEPTH, MAX_NESTING_DEPTH + 1, 500, 1_000, 10_000])
        depth = 100_000 if rng.random() < 0.01 else depth
        if rng.random() < 0.5:
            return b"[" * depth + line + b"]" * depth
        deep = b'{"a":' * (depth // 2) + b"[]" + b"}" * (depth // 2)
        return line[:-1] + b',"modified_arguments":' + deep + b"}"
    elif roll == 5:  # a huge number in a numeric or any other field
        value = rng.choice([b"1e999999", b"9" * rng.choice([20, 400, 5_000]), b"-1e-999999", b"1" * 4_301])
        where = rng.choice([b'"options":{"max_output_tokens":', b'"options":{"temperature":', b'"x":'])
        return line[:-1] + b"," + where + value + b"}" * where.count(b"{") + b"}"
    elif roll == 6:  # an unknown type
        replacement = b'"type":"' + rng.choice(UNKNOWN_TYPES) + b'"'
        return re.sub(rb'"type":"[a-z_]+"', lambda _: replacement, line, count=1)
    elif roll == 7:  # a field of the wrong type
        fields = list(re.finditer(rb'"([a-z_]+)":', line))
        if not fields:
            return line + rng.choice(WRONG_VALUES)
        chosen = rng.choice(fields)
        end = chosen.end()
        rest = line[end:]
        cut = _value_end(rest)
        return line[:end] + rng.choice(WRONG_VALUES) + rest[cut:]
    elif roll == 8:  # a range deleted or duplicated
        end = min(len(data), at + rng.randint(1, 20))
        if rng.random() < 0.5:
            del data[at:end]
        else:
            data[at:at] = data[at:end]
    elif roll == 9:  # random bytes
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 60)))
    elif roll == 10:  # two mutations
        return mutate(rng, mutate(rng, line))
    else:  # untouched: the valid requests still work amid the noise
        return line
    return bytes(data)


def _value_end(rest: bytes) -> int:
    """Where the JSON value at the start of ``rest`` ends (roughly: at the next comma or brace of its level)."""
    level = 0
    in_string = False
    for index, byte in enumerate(rest):
        char = chr(byte)
        if in_string:
            if char == "\\":
                continue
            if char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            level += 1
        elif char in "]}":
            if level == 0:
                return index
            level -= 1
        elif char == "," and level == 0:
            return index
    return len(rest)


@dataclass
class Expected:
    unreadable: int = 0
    turns: int = 0


def fuzz_lines(count: int, seed: int) -> tuple[bytes, Expected, int]:
    """``count`` mutated request lines as one payload, what the server must answer, and how many lines it is."""
    rng = random.Random(seed)
    splitter = LineSplitter()
    out = bytearray()
    expected = Expected()
    framed = 0
    while framed < count:
        line = mutate(rng, rng.choice(SEEDS)).replace(b"\n", b" ")
        lines = splitter.feed(line + b"\n")
        results = [decode_request(x) if isinstance(x, bytes) else x for x in lines]
        if any(isinstance(r, ShutdownRequest) for r in results):
            continue  # a mutation that asks the server to stop would end the run early
        out += line + b"\n"
        for result in results:
            framed += 1
            if isinstance(result, UnreadableRequest | LineTooLong):
                expected.unreadable += 1
            elif isinstance(result, UserMessageRequest):
                expected.turns += 1
    return bytes(out), expected, framed


@pytest.mark.slow
def test_fuzz_100000_mutated_request_lines_through_one_server(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    payload, expected, framed = fuzz_lines(FUZZ_LINES, FUZZ_SEED)
    # A reply for every turn that gets as far as the model; the rest are rejected before it.
    server.add(*(text("ok") for _ in range(expected.turns)))
    started = time.monotonic()
    with running_server(ws.use(server)) as hive:
        hive.start_reading()
        feeding = threading.Thread(target=hive.write, args=(payload,), daemon=True)
        feeding.start()
        feeding.join(TIMEOUT * 3)
        assert not feeding.is_alive(), f"the server stopped reading; stderr:\n{hive.stderr}"
        code = hive.finish(TIMEOUT * 3)
    seconds = time.monotonic() - started
    assert_clean_exit(hive, code)

    lines = hive.lines
    answered = sum(1 for line in lines if b'"code":"unreadable_request"' in line)
    turns = sum(1 for line in lines if line.startswith(b'{"type":"turn_end"'))
    violations = verify(lines, turns=expected.turns)
    print(
        f"\nfuzz (seed {FUZZ_SEED}): {framed:,} lines sent ({len(payload) / MIB:.1f} MiB), {answered:,} errors "
        f"answered, {turns:,} turns completed ({len(server.requests):,} reached the model), {len(lines):,} lines "
        f"out, 0 crashes, {len(violations)} verify violations, {seconds:.1f} s"
    )
    assert violations == [], violations[:5]
    assert answered == expected.unreadable
    assert turns == expected.turns
    assert framed >= FUZZ_LINES
