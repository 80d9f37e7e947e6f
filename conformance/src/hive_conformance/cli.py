"""``hive-conformance``: run the conformance scenarios against a runner and print the verdict.

::

    hive-conformance stdio [OPTIONS] -- COMMAND [ARG...]    a stdio runner, a fresh process per scenario
    hive-conformance http [OPTIONS] URL                     an HTTP runner, a fresh session per scenario
    hive-conformance list                                   the scenarios and the requirements

Exit status: 0 when the runner is conformant, 1 when it is not, 2 when the kit could not run (bad options,
broken fixtures, a runner that cannot be started).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import msgspec

from hive_conformance.fixtures import FixtureError
from hive_conformance.fixtures import Scenario
from hive_conformance.fixtures import default_fixtures_dir
from hive_conformance.fixtures import load_scenarios
from hive_conformance.harness import DEFAULT_TIMEOUT
from hive_conformance.harness import Suite
from hive_conformance.harness import run_suite
from hive_conformance.report import Report
from hive_conformance.report import ScenarioResult
from hive_conformance.report import render_text
from hive_conformance.requirements import CAPABILITIES
from hive_conformance.requirements import REQUIREMENTS
from hive_conformance.targets import RunnerStartError
from hive_conformance.targets import StdioTarget
from hive_conformance.targets import Target

__all__ = ["main"]

_EXIT_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return _EXIT_ERROR
    if args.command == "list":
        return _list(args.fixtures)
    try:
        scenarios = load_scenarios(args.fixtures, names=args.scenario)
    except FixtureError as error:
        print(f"hive-conformance: {error}", file=sys.stderr)
        return _EXIT_ERROR
    target: Target
    if args.command == "stdio":
        command = list(args.runner)
        if command[:1] == ["--"]:
            command = command[1:]
        if not command:
            parser.error("stdio: give the runner's command after --")
        target = StdioTarget(command)
    else:
        from hive_conformance.http import HttpTarget

        target = HttpTarget(args.url, token=args.token or os.environ.get("HIVE_CONFORMANCE_TOKEN"))
    files = (args.fixtures or default_fixtures_dir()) / "files"
    try:
        with Suite(files, model_port=args.model_port, tools_port=args.tools_port) as suite:
            report = anyio.run(_run, scenarios, target, suite, args)
    except (FixtureError, RunnerStartError, OSError) as error:
        print(f"hive-conformance: {error}", file=sys.stderr)
        return _EXIT_ERROR
    sys.stdout.write(render_text(report, verbose=args.verbose))
    if args.report_json is not None:
        args.report_json.write_bytes(msgspec.json.format(msgspec.json.encode(report)) + b"\n")
    return 0 if report.conformant else 1


async def _run(scenarios: list[Scenario], target: Target, suite: Suite, args: argparse.Namespace) -> Report:
    def progress(result: ScenarioResult) -> None:
        if not args.quiet:
            print(f"{result.status:4}  {result.name} ({result.seconds:.1f} s)", file=sys.stderr, flush=True)

    return await run_suite(
        scenarios,
        target,
        suite,
        exact=args.exact,
        without=args.without,
        timeout=args.timeout,
        progress=progress,
        record=args.record,
        output_dir=args.output_dir,
    )


def _list(fixtures: Path | None) -> int:
    try:
        scenarios = load_scenarios(fixtures)
    except FixtureError as error:
        print(f"hive-conformance: {error}", file=sys.stderr)
        return _EXIT_ERROR
    print("scenarios:")
    for scenario in scenarios:
        print(f"  {scenario.name:<34} {' '.join(scenario.meta.requirements)}")
    print("requirements:")
    for requirement in REQUIREMENTS.values():
        print(f"  {requirement.id:<15} {requirement.tier:<10} {requirement.rule}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hive-conformance",
        description="Check that a turn-stream runner speaks the hive protocol byte for byte.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--fixtures", type=Path, metavar="DIR", help="the fixtures directory (default: the kit's own)"
        )
        sub.add_argument(
            "-k",
            "--scenario",
            action="append",
            default=[],
            metavar="NAME",
            help="run only this scenario (repeatable)",
        )
        sub.add_argument(
            "--exact",
            action="store_true",
            help="compare every byte, also the fields a runner that is not hive may vary (hive's own bar)",
        )
        sub.add_argument(
            "--without",
            action="append",
            default=[],
            choices=CAPABILITIES,
            metavar="CAPABILITY",
            help=f"the runner lacks this capability; skip its scenarios (one of {', '.join(CAPABILITIES)})",
        )
        sub.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            metavar="SECONDS",
            help=f"seconds per scenario (default {DEFAULT_TIMEOUT:g})",
        )
        sub.add_argument(
            "--report-json", type=Path, metavar="FILE", help="also write the report as JSON here"
        )
        sub.add_argument(
            "--output-dir",
            type=Path,
            metavar="DIR",
            help="write each scenario's event lines, exactly as the runner wrote them, to DIR/<scenario>.jsonl",
        )
        sub.add_argument(
            "--model-port",
            type=int,
            default=0,
            metavar="PORT",
            help="the scripted model server's port (default: free)",
        )
        sub.add_argument(
            "--tools-port",
            type=int,
            default=0,
            metavar="PORT",
            help="the fixture MCP server's port (default: free)",
        )
        sub.add_argument(
            "--record",
            action="store_true",
            help="write each scenario's output to its expected.jsonl (review it!)",
        )
        sub.add_argument("-v", "--verbose", action="store_true", help="list passed and skipped scenarios too")
        sub.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")

    stdio = commands.add_parser(
        "stdio",
        help="a runner speaking JSON Lines on stdin/stdout",
        description="Run every scenario against a fresh process of COMMAND, speaking JSON Lines on stdin/stdout.",
        epilog="example: hive-conformance stdio --exact --report-json report.json -- hive run --server",
    )
    common(stdio)
    stdio.add_argument("runner", nargs=argparse.REMAINDER, help="-- then the runner's command and arguments")
    http = commands.add_parser(
        "http",
        help="a runner reached over HTTP",
        description="Run every scenario in a fresh session of the runner at URL (the kit's HTTP binding).",
        epilog="example: hive-conformance http --model-port 8401 --tools-port 8402 http://127.0.0.1:8080",
    )
    common(http)
    http.add_argument("url", help="the runner's base URL")
    http.add_argument(
        "--token",
        help="sent as Authorization: Bearer TOKEN on every request (default: HIVE_CONFORMANCE_TOKEN)",
    )
    listing = commands.add_parser("list", help="list the scenarios and the requirements")
    listing.add_argument(
        "--fixtures", type=Path, metavar="DIR", help="the fixtures directory (default: the kit's own)"
    )
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
