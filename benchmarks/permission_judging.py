"""Cost of judging an ``execute_command`` call: the bash parse, and the parse plus every rule.

Run: uv run python benchmarks/permission_judging.py

Judges a corpus of 1,000 real-world command lines (git, npm, pytest, ls, find and grep pipelines, built from the
templates below with varied files, flags and branches) with the default rules, in a small temporary project, and
prints CPU microseconds per command (process time, median of several runs) for:
- floor: ``str.split`` of the line;
- pattern only: every default bash rule matched against the whole line (what the judge did before the parse);
- parse: ``parse_command`` (tree-sitter-bash and the flattening into simple commands);
- parse + rules: ``PermissionPolicy.evaluate`` (parse, command table, bash rules, path rules on file arguments and
  redirections, the walk of a directory a recursive search reads).
Goal: judging under 1 ms per command.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hive_core.approvals import Verdict
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.permissions import glob_matches
from hive_core.permissions import parse_command

REPEATS = 5
SIZE = 1_000

TEMPLATES = [
    "git status",
    "git status --short",
    "git diff",
    "git diff --stat",
    "git diff HEAD~{n} -- {file}",
    "git diff --cached {file}",
    "git log --oneline -{n}",
    "git log --oneline --graph --decorate -{n}",
    "git --no-pager log -p -{n} -- {file}",
    "git show HEAD~{n} --stat",
    "git show {branch}:{file}",
    "git branch -a",
    "git rev-parse --abbrev-ref HEAD",
    "git ls-files | grep {pattern}",
    "git blame -L {n},+10 {file}",
    "git checkout -b {branch}",
    "git add {file} && git commit -m 'Fix {pattern} handling'",
    "git stash && git pull --rebase origin {branch} && git stash pop",
    "git push origin {branch}",
    "git log --author=dev --since='2 weeks ago' --oneline | wc -l",
    "ls",
    "ls -la {dir}",
    "ls -1 {dir} | head -{n}",
    "cat {file}",
    "cat {file} | grep -n {pattern}",
    "head -n {n} {file}",
    "tail -n {n} {file}",
    "wc -l {file} {file2}",
    "grep -rn '{pattern}' {dir}",
    "grep -rn --include='*.py' '{pattern}' {dir} | head -{n}",
    "rg -n '{pattern}' {dir}",
    "rg --files {dir} | sort",
    "find {dir} -name '*.py' | head -{n}",
    "find . -type f -name '*.py' -not -path './.git/*' | xargs wc -l",
    "find {dir} -type d -maxdepth 2",
    "tree -L 2 {dir}",
    "pwd && ls",
    "echo $PATH",
    "which python3",
    "stat {file}",
    "diff {file} {file2}",
    "sort {file} | uniq -c | sort -rn | head -{n}",
    "pytest",
    "pytest -x -q",
    "pytest {test} -k {pattern} -x",
    "python -m pytest {test} -q 2>&1 | tail -{n}",
    "uv run pytest {test} -x -q",
    "uv run ruff check {dir}",
    "uv run basedpyright {file}",
    "cd {dir} && pytest -q",
    "npm test",
    "npm test -- --watch=false",
    "npm run build",
    "npm run lint -- --fix",
    "npm ci && npm test",
    "npx tsc --noEmit",
    "cargo test",
    "cargo build --release",
    "cargo test -p {pattern} -- --nocapture",
    "go test ./...",
    "go build ./... && go vet ./...",
    "dotnet test",
    "make test",
    "make -j4 && make install",
    "mkdir -p {dir}/new && touch {dir}/new/__init__.py",
    "cp {file} {file2}",
    "mv {file} {dir}/",
    "rm -rf build dist",
    "sed -i 's/{pattern}/renamed/g' {file}",
    "python3 -c 'import sys; print(sys.version)'",
    "python {file}",
    "pip install -e .",
    "curl -s https://example.test/api | python3 -m json.tool",
    "docker ps --format '{{{{.Names}}}}'",
    'echo "done: $(date)" >> {dir}/log.txt',
    "for f in {dir}/*.py; do echo $f; done",
    "if [ -f {file} ]; then cat {file}; fi",
    "export NODE_ENV=test && npm test",
    "FOO=1 pytest {test}",
    "git status 2>&1 | head -{n} # quick look",
    "python -m pytest {test} -q --basetemp=build/tmp",
    "uv run pytest {test} -x",
    "git log -p -n {n} -- {file}",
    "for i in $(seq 1 {n}); do echo $((i * 2)); done",
    "echo ${{name:-default}} ${{#items[@]}} ${{items[0]}}",
]
FILES = [
    "src/app/main.py",
    "src/app/util.py",
    "README.md",
    "tests/test_main.py",
    "pyproject.toml",
    "docs/guide.md",
]
DIRS = ["src", "tests", "docs", "src/app", "."]
PATTERNS = ["parse", "TODO", "config", "session", "def main", "import os"]
BRANCHES = ["main", "feature/parser", "fix/issue-12", "release-1.2"]
TESTS = ["tests", "tests/test_main.py", "tests/test_main.py::test_parse"]


def corpus() -> list[str]:
    """:data:`SIZE` command lines: every template with a deterministic rotation of its variables."""
    cycles = {
        "file": itertools.cycle(FILES),
        "file2": itertools.cycle(FILES[1:] + FILES[:1]),
        "dir": itertools.cycle(DIRS),
        "pattern": itertools.cycle(PATTERNS),
        "branch": itertools.cycle(BRANCHES),
        "test": itertools.cycle(TESTS),
        "n": itertools.cycle(["1", "5", "10", "20", "50"]),
    }
    lines: list[str] = []
    for template in itertools.cycle(TEMPLATES):
        if len(lines) == SIZE:
            return lines
        lines.append(template.format(**{name: next(values) for name, values in cycles.items()}))
    raise AssertionError("unreachable")


def project(root: Path) -> Path:
    """A small project for the path rules to look at."""
    for name in [*FILES, ".env", "secrets/key.txt"]:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    return root


def median_us(judge: Callable[[str], object], lines: list[str]) -> float:
    runs: list[float] = []
    for _ in range(REPEATS):
        start = time.process_time()
        for line in lines:
            judge(line)
        runs.append(time.process_time() - start)
    return statistics.median(runs) / len(lines) * 1e6


def main() -> None:
    lines = corpus()
    rules = PermissionRules.default()
    with tempfile.TemporaryDirectory() as temporary:
        policy = PermissionPolicy(rules, project(Path(temporary)))

        def pattern_only(line: str) -> object:
            return [rule for rule in rules.bash if glob_matches(rule.pattern, line, "command")]

        def judged(line: str) -> Verdict:
            return policy.evaluate("execute_command", {"command": line})

        parse_command(lines[0])  # build the parser outside the timing
        figures = [
            ("floor (str.split)", median_us(str.split, lines)),
            ("pattern only (old judge)", median_us(pattern_only, lines)),
            ("parse", median_us(parse_command, lines)),
            ("parse + rules", median_us(judged, lines)),
        ]
        verdicts = [judged(line) for line in lines]
    actions = {action: sum(v.action == action for v in verdicts) for action in ("allow", "ask", "deny")}
    print(f"{len(lines)} command lines ({len(TEMPLATES)} templates), median of {REPEATS} runs, CPU time")
    for name, us in figures:
        print(f"{name:26s}: {us:8.1f} us/command")
    print(f"verdicts with the default rules: {actions}")
    print(f"goal: parse + rules under 1000 us/command -> {'met' if figures[-1][1] < 1000 else 'NOT met'}")


if __name__ == "__main__":
    main()
