"""What the sandbox adds to a command: ``true`` through ``execute_command`` with and without bubblewrap.

Run: uv run python benchmarks/sandbox.py [N]

Runs ``true`` N times (default 200) through the tool in one process, unconfined (``sandbox.mode: off``) and in
the ``workspace-write`` sandbox, alternating in rounds so that load on the machine falls on both alike, and prints
wall-clock milliseconds per command (median of the rounds) for each and the difference. The goal is a sandbox
that adds under 20 ms per command. Without a usable bubblewrap it says why and measures the unconfined run only.

Then it measures what finding the paths to hide costs (:func:`hive_core.sandbox.refused_paths`, the walk made
before every sandboxed command of an agent with rules): on trees of 10,000 and 100,000 files under the default
rules: the first walk (every entry judged), the next walks (what changed judged again, here nothing), and ``true``
through the tool with those rules, the first command and the ones after, milliseconds (median of 5).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from hive_core.approvals import PermissionAction
from hive_core.builtin_tools import execute_command_tool
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.sandbox import RefusedFinder
from hive_core.sandbox import SandboxMode
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import probe_bubblewrap
from hive_core.sandbox import refused_paths
from hive_core.tools import Tool
from hive_core.tools import ToolContext

ROUNDS = 10


async def per_command_ms(tool: Tool, context: ToolContext, count: int, *, hides: bool = False) -> float:
    start = time.perf_counter()
    for _ in range(count):
        outcome = await tool.invoke({"command": "true"}, context)
        assert outcome.content.startswith("Exit code: 0") if hides else outcome.content == "Exit code: 0", (
            outcome.content
        )
    return (time.perf_counter() - start) / count * 1000


async def main(total: int) -> None:
    probe = probe_bubblewrap()
    modes: list[SandboxMode] = ["off", "workspace-write"] if probe.usable else ["off"]
    tools: dict[SandboxMode, Tool] = {
        mode: execute_command_tool(SandboxSettings(mode=mode)) for mode in modes
    }
    per_round = max(1, total // ROUNDS)
    with tempfile.TemporaryDirectory() as project:
        context = ToolContext("bench", "execute_command", Path(project), lambda event: None)
        for tool in tools.values():  # warm up: the probe, imports, the page cache
            await per_command_ms(tool, context, 3)
        runs: dict[SandboxMode, list[float]] = {mode: [] for mode in modes}
        for _ in range(ROUNDS):
            for mode, tool in tools.items():
                runs[mode].append(await per_command_ms(tool, context, per_round))
    print(
        f"`true` through execute_command, {per_round * ROUNDS} runs per mode, ms per command (median of rounds)"
    )
    unconfined = statistics.median(runs["off"])
    print(f"  unconfined (sandbox.mode: off)  {unconfined:7.2f} ms")
    if not probe.usable:
        print(f"  sandboxed: not measured, {probe.problem}")
        return
    sandboxed = statistics.median(runs["workspace-write"])
    print(f"  sandboxed (workspace-write)     {sandboxed:7.2f} ms  ({probe.version})")
    print(
        f"  the sandbox adds                {sandboxed - unconfined:7.2f} ms per command (goal: under 20 ms)"
    )


def build_tree(root: Path, files: int) -> None:
    """``files`` files in folders of 20, three levels deep, one ``.env`` and one ``secrets/`` per 1,000 files."""
    for index in range(files):
        folder = root / f"d{index // 4000}" / f"e{index // 400}" / f"f{index // 20}"
        if index % 20 == 0:
            folder.mkdir(parents=True)
        (folder / f"m{index}.py").write_bytes(b"")
        if index % 1000 == 0:
            (folder / ".env").write_bytes(b"KEY=1")
            (folder / "secrets").mkdir()
            (folder / "secrets" / "key.txt").write_bytes(b"k")


async def hiding(bwrap_usable: bool) -> None:
    rules = PermissionRules.default()
    print("finding what the read rules refuse (default rules), ms (median of 5)")
    for files in (10_000, 100_000):
        with tempfile.TemporaryDirectory() as project:
            root = Path(project)
            build_tree(root, files)
            policy = PermissionPolicy(rules, root)

            def judge(relative: str, directory: bool, policy: PermissionPolicy = policy) -> PermissionAction:
                return policy.judge_relative("read", relative, directory=directory).action

            found = refused_paths(root, judge)  # warm the page cache
            fresh: list[float] = []
            for _ in range(5):
                start = time.perf_counter()
                found = refused_paths(root, judge)
                fresh.append((time.perf_counter() - start) * 1000)
            finder = RefusedFinder()
            finder.find(root, judge, rules=policy)
            await anyio.sleep(3.5)  # past the racy window: every directory is trusted from now on
            finder.find(root, judge, rules=policy)
            again: list[float] = []
            for _ in range(5):
                start = time.perf_counter()
                finder.find(root, judge, rules=policy)
                again.append((time.perf_counter() - start) * 1000)
            print(
                f"  {files:>7,} files ({found.scanned:,} entries, {len(found.denied)} denied, "
                f"{len(found.asked)} asked): first walk {statistics.median(fresh):7.1f} ms, "
                f"next walks {statistics.median(again):6.1f} ms"
            )
            if bwrap_usable:
                tool = execute_command_tool(SandboxSettings(mode="workspace-write"))
                bare = ToolContext("bench", "execute_command", root, lambda event: None)
                judged = ToolContext("bench", "execute_command", root, lambda event: None, path_judge=policy)
                first = await per_command_ms(tool, judged, 1, hides=True)
                await anyio.sleep(3.5)
                await per_command_ms(tool, judged, 1, hides=True)
                runs: dict[str, list[float]] = {"bare": [], "judged": []}
                for _ in range(5):
                    runs["bare"].append(await per_command_ms(tool, bare, 1))
                    runs["judged"].append(await per_command_ms(tool, judged, 1, hides=True))
                print(
                    f"  {'':>7}  `true` sandboxed: {statistics.median(runs['bare']):6.1f} ms without rules; "
                    f"with them {first:7.1f} ms first, {statistics.median(runs['judged']):6.1f} ms after"
                )


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 200)
    anyio.run(hiding, probe_bubblewrap().usable)
