"""Cost of opening a file once and judging the object opened, beside a plain ``open``, at a few path depths.

Run: uv run python benchmarks/file_open.py

For a file 1, 4 and 8 directories deep in a project, prints the median time of one open (median of 21 batches of
2,000 opens each, every descriptor closed) for:

- ``os.open``: a plain open by name, what the file tools did before (after the policy had judged the name);
- ``open_judged``, no policy: ``O_PATH`` open, ``fstat``, the kernel's path from ``/proc/self/fd``, the
  inside-the-project check, and the reopen through the descriptor: the mechanism's own cost;
- ``open_judged``, default rules: the same with the agent's policy judging the object opened;
- two other designs measured for the choice: ``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`` (through
  ``ctypes``: Python has no binding), and a walk opening each component with ``O_NOFOLLOW`` under its parent's
  descriptor. Neither follows a link the policy allows, which is why the file tools judge instead.

Last, ``read_file`` itself (a 1 KB file, default rules) beside ``open`` + ``read`` + ``close``.
"""

from __future__ import annotations

import ctypes
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hive_core.builtin_tools import read_file
from hive_core.builtin_tools._open import judge_of
from hive_core.builtin_tools._open import open_judged
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.tools import ToolContext

DEPTHS = (1, 4, 8)
BATCH = 2000
BATCHES = 21

_SYS_OPENAT2 = 437  # x86_64 and aarch64 alike
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


FASTEST: dict[str, float] = {}
"""The fastest batch of each measurement, by label: what the call costs when the machine is not busy elsewhere."""


def median_us(run: Callable[[], object], label: str = "") -> float:
    """The median over batches of the time one call of ``run`` takes, in microseconds."""
    times: list[float] = []
    for _ in range(BATCHES):
        started = time.perf_counter()
        for _ in range(BATCH):
            run()
        times.append((time.perf_counter() - started) / BATCH)
    if label:
        FASTEST[label] = min(times) * 1e6
    return statistics.median(times) * 1e6


def openat2_beneath(root_fd: int, relative: bytes) -> Callable[[], object] | None:
    """One ``openat2`` of ``relative`` beneath ``root_fd``, or ``None`` where the kernel has no ``openat2``."""
    libc = ctypes.CDLL(None, use_errno=True)
    how = _OpenHow(os.O_RDONLY | os.O_CLOEXEC, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS)
    syscall = libc.syscall
    syscall.restype = ctypes.c_long

    def run() -> object:
        fd = syscall(_SYS_OPENAT2, root_fd, relative, ctypes.byref(how), ctypes.sizeof(how))
        if fd < 0:
            raise OSError(ctypes.get_errno(), "openat2")
        os.close(fd)
        return fd

    try:
        run()
    except OSError:
        return None
    return run


def component_walk(root_fd: int, parts: list[str]) -> Callable[[], object]:
    """Open each directory with ``O_NOFOLLOW`` under its parent's descriptor, then the file the same way."""
    directory_flags = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

    def run() -> object:
        fd = root_fd
        for part in parts[:-1]:
            child = os.open(part, directory_flags, dir_fd=fd)
            if fd != root_fd:
                os.close(fd)
            fd = child
        file = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        if fd != root_fd:
            os.close(fd)
        os.close(file)
        return file

    return run


def measure(
    root: Path, root_fd: int, policy: PermissionPolicy, relative: str, parts: list[str]
) -> list[float]:
    """os.open, open_judged without and with the rules, the rules' judge_path alone, openat2 (-1 where the
    kernel lacks it), the component walk: microseconds per call."""
    absolute = str(root / relative)
    bare = ToolContext(call_id="b", tool_name="read_file", working_dir=root, emit=lambda _: None)
    ruled = ToolContext(
        call_id="b", tool_name="read_file", working_dir=root, emit=lambda _: None, path_judge=policy
    )

    def judged(ctx: ToolContext) -> Callable[[], object]:
        judge = judge_of(ctx, "read")
        return lambda: open_judged(ctx, relative, judge=judge, shown=relative, approved=False).close()

    beneath = openat2_beneath(root_fd, relative.encode())
    return [
        median_us(lambda: os.close(os.open(absolute, os.O_RDONLY | os.O_CLOEXEC)), "os.open"),
        median_us(judged(bare), "judged"),
        median_us(lambda: policy.judge_path("read", absolute)),
        median_us(judged(ruled)),
        median_us(beneath) if beneath is not None else -1.0,
        median_us(component_walk(root_fd, parts)),
    ]


def measure_read(root: Path, policy: PermissionPolicy, relative: str) -> tuple[float, float]:
    """read_file of a 1 KB file under the default rules, and a plain open, read and close of it."""
    absolute = str(root / relative)
    ctx = ToolContext(
        call_id="b", tool_name="read_file", working_dir=root, emit=lambda _: None, path_judge=policy
    )

    def plain() -> object:
        fd = os.open(absolute, os.O_RDONLY | os.O_CLOEXEC)
        try:
            return os.read(fd, 1 << 20)
        finally:
            os.close(fd)

    return median_us(lambda: read_file.function(ctx, path=relative)), median_us(plain)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        policy = PermissionPolicy(PermissionRules.default(), root)
        root_fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"median of {BATCHES} batches of {BATCH:,} calls, microseconds per call")
        print(f"{os.cpu_count()} CPUs, load average {load} (figures scale with the load)")
        header = ("depth", "os.open", "judged, bare", "judge_path", "judged, rules", "openat2", "walk")
        print("  ".join(f"{name:>13}" for name in header))
        for depth in DEPTHS:
            parts = [f"d{level}" for level in range(depth)] + ["file.txt"]
            relative = "/".join(parts)
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x" * 1024, encoding="utf-8")
            row = measure(root, root_fd, policy, relative, parts)
            print(
                "  ".join(
                    [f"{depth:>13}", *(f"{value:13.1f}" if value >= 0 else f"{'n/a':>13}" for value in row)]
                )
            )
            plain, bare, _, ruled, *_ = row
            fast = FASTEST["judged"] - FASTEST["os.open"]
            print(
                f"{'':>13}  open_judged over os.open: {bare - plain:.1f} µs bare ({fast:.1f} µs in the fastest batches), "
                f"{ruled - plain:.1f} µs with the rules"
            )
        for depth in DEPTHS:
            relative = "/".join([f"d{level}" for level in range(depth)] + ["file.txt"])
            tool, plain = measure_read(root, policy, relative)
            print(
                f"depth {depth}: read_file (default rules) {tool:.1f} µs; os.open + os.read + os.close {plain:.1f} µs"
            )
        os.close(root_fd)


if __name__ == "__main__":
    main()
