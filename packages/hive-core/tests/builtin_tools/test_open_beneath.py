"""The file tools act on the object they judged: no swapped directory, hard link, FIFO or huge line gets past them.

Each attack of issue 23 against read_file and write_file, on a real file system: a directory flipped into a link
to the outside while calls run, hard links to an outside file and to a denied one, a FIFO, a file of one line of
hundreds of megabytes. The tools run with the default permission rules as their judge, as under ``hive``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
import tracemalloc
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import TypeVar

import anyio
import msgspec
import pytest

from hive_core.builtin_tools import _open
from hive_core.builtin_tools import delete_file
from hive_core.builtin_tools import edit_file
from hive_core.builtin_tools import glob_files
from hive_core.builtin_tools import grep_files
from hive_core.builtin_tools import list_directory
from hive_core.builtin_tools import move_file
from hive_core.builtin_tools import read_file
from hive_core.builtin_tools import write_file
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.tools import Tool
from hive_core.tools import ToolContext
from hive_core.tools import ToolOutcome

INSIDE = "INSIDE-TEXT-31f0"
CANARY = "OUTSIDE-CANARY-9d2e"
KEY = "KEY-NEEDLE-5a7b"
ROUNDS_READ = 1500
ROUNDS_WRITE = 1200
WAIT = 20.0
"""Seconds a call may take before the test calls it hung (a bound, not a synchronisation)."""


class Setup:
    """A project beside an outside folder, and a way to call a tool there with the default rules as judge."""

    def __init__(self, tmp: Path, rules: PermissionRules | None = None) -> None:
        self.project = tmp / "project"
        self.outside = tmp / "outside"
        (self.project / "src" / "d").mkdir(parents=True)
        (self.project / "secrets").mkdir()
        self.outside.mkdir()
        (self.project / "src" / "d" / "f.txt").write_text(f"{INSIDE}\n", encoding="utf-8")
        (self.outside / "f.txt").write_text(f"{CANARY}\n", encoding="utf-8")
        (self.project / "secrets" / "key.txt").write_text(f"{KEY}\n", encoding="utf-8")
        self.policy = PermissionPolicy(rules or PermissionRules.default(), self.project)

    def context(self, tool: Tool, *, approved: bool = False) -> ToolContext:
        return ToolContext(
            call_id="c1",
            tool_name=tool.name,
            working_dir=self.project,
            emit=lambda _: None,
            path_judge=self.policy,
            approved=approved,
        )

    def call(self, tool: Tool, *, approved: bool = False, **arguments: Any) -> ToolOutcome:
        """Run ``tool`` to its end, in a thread with a bounded wait: a call that blocks fails the test."""
        box: list[ToolOutcome] = []
        ctx = self.context(tool, approved=approved)

        def run() -> None:
            try:
                box.append(anyio.run(tool.invoke, arguments, ctx))
            except Exception as error:  # the pipeline turns a tool's exception into a failed outcome
                box.append(ToolOutcome.failed(error))

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(WAIT)
        assert not worker.is_alive(), f"{tool.name}({arguments}) still runs after {WAIT} s"
        return box[0]


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads as often as the interpreter can, so the flipping thread lands inside the tools' calls."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def _exchange(first: Path, second: Path) -> None:
    """Swap two names atomically (``renameat2`` with ``RENAME_EXCHANGE``), so neither is ever missing."""
    libc = ctypes.CDLL(None, use_errno=True)
    at_cwd, exchange = -100, 2
    if libc.renameat2(at_cwd, bytes(first), at_cwd, bytes(second), exchange) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error), str(first))


def _flipping(directory: Path, outside: Path) -> tuple[threading.Event, threading.Thread, list[int]]:
    """A thread that swaps ``directory`` with a link to ``outside`` and back, until told to stop; counts flips."""
    stop = threading.Event()
    flips = [0]
    link = directory.with_name(directory.name + ".link")
    link.symlink_to(outside, target_is_directory=True)

    def flip() -> None:
        while not stop.is_set():
            _exchange(directory, link)
            flips[0] += 1

    def flip_until_stopped() -> None:
        flip()
        if flips[0] % 2:  # leave the directory where it was
            _exchange(directory, link)
        link.unlink()

    thread = threading.Thread(target=flip_until_stopped, daemon=True)
    thread.start()
    return stop, thread, flips


def _run_flipped(setup: Setup, rounds: int, body: Callable[[int], None]) -> int:
    stop, thread, flips = _flipping(setup.project / "src" / "d", setup.outside)
    try:
        for number in range(rounds):
            body(number)
    finally:
        stop.set()
        thread.join(WAIT)
    assert not thread.is_alive()
    return flips[0]


@pytest.fixture(params=["proc", "by-path"])
def reopening(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways a judged file is opened again: through /proc/self/fd (Linux), or by its judged path with the
    inode compared (macOS), which Linux runs too when told to."""
    mode = str(request.param)
    monkeypatch.setattr(_open, "_BY_PROC", mode == "proc")
    return mode


@pytest.mark.usefixtures("fast_switching")
def test_a_directory_flipped_into_a_link_never_carries_a_read_outside(setup: Setup, reopening: str) -> None:
    outside_reads = 0
    inside_reads = 0

    def read(_: int) -> None:
        nonlocal outside_reads, inside_reads
        ctx = setup.context(read_file)
        try:
            text = read_file.function(ctx, path="src/d/f.txt")
        except (OSError, ValueError):
            return
        outside_reads += CANARY in text
        inside_reads += INSIDE in text

    flips = _run_flipped(setup, ROUNDS_READ, read)
    print(
        f"\nread race ({reopening}): {ROUNDS_READ} reads, {flips} flips, {inside_reads} inside, {outside_reads} outside"
    )
    assert flips > 0
    assert outside_reads == 0
    # Legitimate reads still work once the directory holds still.
    assert INSIDE in setup.call(read_file, path="src/d/f.txt").content


@pytest.mark.usefixtures("fast_switching")
def test_a_directory_flipped_into_a_link_never_carries_a_write_outside(setup: Setup) -> None:
    landed_inside = 0

    def write(number: int) -> None:
        nonlocal landed_inside
        ctx = setup.context(write_file)
        try:
            write_file.function(ctx, path=f"src/d/new_{number}.txt", content="written\n")
            landed_inside += 1
        except (OSError, ValueError):
            return

    flips = _run_flipped(setup, ROUNDS_WRITE, write)
    written_outside = sorted(name for name in os.listdir(setup.outside) if name != "f.txt")
    print(
        f"\nwrite race: {ROUNDS_WRITE} writes, {flips} flips, {landed_inside} inside, {len(written_outside)} outside"
    )
    assert flips > 0
    assert written_outside == []
    assert (setup.outside / "f.txt").read_text(encoding="utf-8") == f"{CANARY}\n"
    # Writing into the same existing file while the flips run never overwrites the outside one either.
    stop, thread, _ = _flipping(setup.project / "src" / "d", setup.outside)
    try:
        for _ in range(300):
            with contextlib.suppress(OSError, ValueError):
                write_file.function(setup.context(write_file), path="src/d/f.txt", content="replaced\n")
    finally:
        stop.set()
        thread.join(WAIT)
    assert (setup.outside / "f.txt").read_text(encoding="utf-8") == f"{CANARY}\n"
    assert setup.call(write_file, path="src/d/fresh.txt", content="ok\n").success
    assert (setup.project / "src" / "d" / "fresh.txt").read_text(encoding="utf-8") == "ok\n"


def test_a_hard_link_to_an_outside_file_or_a_denied_one_is_asked_about_and_refused_unapproved(
    setup: Setup,
) -> None:
    os.link(setup.outside / "f.txt", setup.project / "src" / "notes.txt")
    os.link(setup.project / "secrets" / "key.txt", setup.project / "src" / "key_copy.txt")
    for name, marker in (("src/notes.txt", CANARY), ("src/key_copy.txt", KEY)):
        # The approval gate asks, for reading and for changing it.
        for tool in ("read_file", "edit_file", "write_file"):
            verdict = setup.policy.evaluate(tool, {"path": name})
            assert verdict.action == "ask", (tool, name, verdict)
            assert "hard links" in verdict.reason
        # Unapproved, the tools refuse the descriptor; nothing is read or written.
        refused = setup.call(read_file, path=name)
        assert not refused.success
        assert marker not in refused.content
        assert "hard links" in refused.content
        assert not setup.call(write_file, path=name, content="overwritten\n").success
        assert not setup.call(edit_file, path=name, old_text=marker, new_text="edited").success
        grep = setup.call(grep_files, pattern="NEEDLE|CANARY")
        assert marker not in grep.content
    assert (setup.outside / "f.txt").read_text(encoding="utf-8") == f"{CANARY}\n"
    assert (setup.project / "secrets" / "key.txt").read_text(encoding="utf-8") == f"{KEY}\n"
    # A person approved the read of the project's name for the outside file: it is read.
    assert CANARY in setup.call(read_file, approved=True, path="src/notes.txt").content


def test_a_fifo_is_refused_at_once_and_searches_pass_it_by(setup: Setup) -> None:
    fifo = setup.project / "src" / "pipe"
    os.mkfifo(fifo)
    attempts: list[tuple[Tool, dict[str, Any]]] = [
        (read_file, {"path": "src/pipe"}),
        (read_file, {"path": "src/pipe", "start_line": 1, "line_count": 1}),
        (write_file, {"path": "src/pipe", "content": "x"}),
        (write_file, {"path": "src/pipe", "content": "x", "append": True}),
        (edit_file, {"path": "src/pipe", "old_text": "a", "new_text": "b"}),
    ]
    try:
        for tool, arguments in attempts:
            outcome = setup.call(tool, **arguments)
            assert not outcome.success
            assert "named pipe (FIFO)" in outcome.content, outcome.content
        assert INSIDE in setup.call(grep_files, pattern=INSIDE).content
        assert INSIDE in setup.call(grep_files, pattern=INSIDE, file_pattern="src/**").content
        assert "src/pipe" not in setup.call(glob_files, pattern="**/*").content
        assert setup.call(list_directory, path="src").success
    finally:
        # Let a reader that did block (the old code) go, so the thread ends.
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_a_device_is_refused(setup: Setup) -> None:
    outside_allowed = _external_allowed("/dev/**")
    setup.policy = PermissionPolicy(outside_allowed, setup.project)
    outcome = setup.call(read_file, path="/dev/zero")
    assert not outcome.success
    assert "a device" in outcome.content


def _external_allowed(pattern: str) -> PermissionRules:
    """The default rules, with reading and changing files outside the project at ``pattern`` allowed."""
    allowed = (PermissionRule(pattern=pattern, action="allow"),)
    return msgspec.structs.replace(PermissionRules.default(), external_directory=allowed)


def _huge_line(path: Path, size: int) -> None:
    block = b"a" * (1024 * 1024)
    with path.open("wb") as handle:
        for _ in range(size // len(block)):
            handle.write(block)
        handle.write(b"\nsecond line\n")


T = TypeVar("T")


def _peak(action: Callable[[], T]) -> tuple[T, int]:
    """What ``action`` returns, and the peak of the Python memory it took."""
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_line_of_hundreds_of_megabytes_is_read_in_bounded_memory(setup: Setup) -> None:
    size = 200 * 1024 * 1024
    _huge_line(setup.project / "big.txt", size)
    ctx = setup.context(read_file)
    text, peak = _peak(lambda: read_file.function(ctx, path="big.txt", start_line=1, line_count=1))
    print(f"\none line of {size:,} bytes: peak Python memory {peak:,} bytes")
    assert peak < 8 * 1024 * 1024
    assert text.startswith("a" * 1000)
    assert f"is {size:,} characters long" in text
    assert "grep_files" in text
    # The lines after it are still reachable.
    assert read_file.function(ctx, path="big.txt", start_line=2) == "second line\n"

    def whole() -> None:
        with pytest.raises(ValueError, match="read it in parts"):
            read_file.function(ctx, path="big.txt")

    assert _peak(whole)[1] < 8 * 1024 * 1024


def test_grep_does_not_hold_a_long_line_whole(setup: Setup) -> None:
    size = 8 * 1024 * 1024
    _huge_line(setup.project / "long.txt", size)
    ctx = setup.context(grep_files)
    found, peak = _peak(lambda: grep_files.function(ctx, pattern="second line|aaaa$", path="long.txt"))
    print(f"\ngrep over one line of {size:,} bytes: peak Python memory {peak:,} bytes")
    assert peak < size / 2
    assert "2: second line" in found
    assert "searched in their first" in found


def test_links_the_rules_allow_still_work(setup: Setup, tmp_path: Path) -> None:
    project = setup.project
    (project / "alias.txt").symlink_to("src/d/f.txt")
    (project / "lib").symlink_to("src/d", target_is_directory=True)
    assert INSIDE in setup.call(read_file, path="alias.txt").content
    assert INSIDE in setup.call(read_file, path="lib/f.txt").content
    assert setup.call(write_file, path="lib/g.txt", content="through the link\n").success
    assert (project / "src" / "d" / "g.txt").read_text(encoding="utf-8") == "through the link\n"
    assert setup.call(edit_file, path="alias.txt", old_text=INSIDE, new_text="EDITED").success
    assert "EDITED" in (project / "src" / "d" / "f.txt").read_text(encoding="utf-8")
    # A link out is refused when the rules ask about the outside, and followed when a user rule allows it.
    (project / "out").symlink_to(setup.outside, target_is_directory=True)
    assert not setup.call(read_file, path="out/f.txt").success
    outside_allowed = _external_allowed(f"{setup.outside.as_posix()}/**")
    setup.policy = PermissionPolicy(outside_allowed, project)
    assert CANARY in setup.call(read_file, path="out/f.txt").content
    assert CANARY in setup.call(read_file, path=str(setup.outside / "f.txt")).content
    assert setup.call(write_file, path=str(setup.outside / "new" / "n.txt"), content="n\n").success
    assert (setup.outside / "new" / "n.txt").read_text(encoding="utf-8") == "n\n"


def test_delete_and_move_act_in_the_judged_directory(setup: Setup) -> None:
    project = setup.project
    (project / "src" / "d" / "a.txt").write_text("a\n", encoding="utf-8")
    assert setup.call(move_file, source="src/d/a.txt", destination="src/e/b.txt").success
    assert (project / "src" / "e" / "b.txt").read_text(encoding="utf-8") == "b\n".replace("b", "a")
    assert setup.call(delete_file, path="src/e/b.txt").success
    assert not (project / "src" / "e" / "b.txt").exists()
    # Into or out of a link to the outside that the rules ask about: refused, nothing moves.
    (project / "out").symlink_to(setup.outside, target_is_directory=True)
    assert not setup.call(move_file, source="src/d/f.txt", destination="out/moved.txt").success
    assert not setup.call(delete_file, path="out/f.txt").success
    assert not setup.call(move_file, source="out/f.txt", destination="src/stolen.txt").success
    assert sorted(os.listdir(setup.outside)) == ["f.txt"]
    assert (project / "src" / "d" / "f.txt").exists()


def test_without_a_policy_the_tools_stay_inside_the_working_directory(setup: Setup) -> None:
    ctx = ToolContext(call_id="c1", tool_name="read_file", working_dir=setup.project, emit=lambda _: None)
    (setup.project / "out").symlink_to(setup.outside, target_is_directory=True)
    with pytest.raises(PermissionError):
        read_file.function(ctx, path="out/f.txt")
    assert INSIDE in read_file.function(ctx, path="src/d/f.txt")
