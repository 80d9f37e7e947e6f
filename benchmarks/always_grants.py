"""Cost of the session's "always" grants: deriving one, and judging commands with grants in force.

Run: uv run python benchmarks/always_grants.py

Over the 1,000-command corpus of ``permission_judging.py`` (default rules, a small temporary project), prints CPU
microseconds per command (process time, median of several runs) for:
- derive: the grant an always-answer to the command would record (its parse and program classes);
- judge, no grants: ``PermissionPolicy.evaluate`` as before;
- judge, 40 grants: the same with 20 prefix grants and 20 exact command lines granted.
Goal: grants add no more than a few percent to judging, and deriving stays well under 1 ms.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from permission_judging import corpus
from permission_judging import median_us
from permission_judging import project

from hive_core.approvals import ApprovalRequest
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.permissions import derive_grants

PREFIXES = [f"tool{n} run" for n in range(20)]
EXACT = [f"python3 -c 'print({n}*{n})'" for n in range(20)]


def main() -> None:
    lines = corpus()
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp))
        bare = PermissionPolicy(PermissionRules.default(), root)
        granted = PermissionPolicy(PermissionRules.default(), root)
        for command in [*PREFIXES, *EXACT]:
            request = ApprovalRequest(
                call_id="c", tool_name="execute_command", arguments={"command": command}, reason=""
            )
            granted.grants.record(request)
        assert len(granted.grants.all) == 40
        derive = median_us(
            lambda line: derive_grants("execute_command", {"command": line}, lambda _p: None), lines
        )
        plain = median_us(lambda line: bare.evaluate("execute_command", {"command": line}), lines)
        with_grants = median_us(lambda line: granted.evaluate("execute_command", {"command": line}), lines)
    print(f"commands: {len(lines)}")
    print(f"derive a grant:        {derive:8.1f} µs/command")
    print(f"judge, no grants:      {plain:8.1f} µs/command")
    print(f"judge, 40 grants:      {with_grants:8.1f} µs/command ({(with_grants / plain - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
