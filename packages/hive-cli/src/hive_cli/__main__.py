"""Entry point of the ``hive`` command.

Only ``--version`` works so far; the commands of the CLI arrive with the hive-cli issue.
"""

from __future__ import annotations

import sys

from . import __version__


def main(argv: list[str] | None = None) -> int:
    """Run ``hive`` with ``argv`` (default: the process arguments) and return the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        print(f"hive {__version__}")
        return 0
    print(
        "hive: only --version is available in this build; the agent commands are not implemented yet.",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
