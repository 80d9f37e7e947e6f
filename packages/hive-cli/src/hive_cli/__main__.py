"""Entry point of the ``hive`` command.

``hive --version`` is answered before the command line is imported: only the installed metadata is read.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``hive`` with ``argv`` (default: the process arguments) and return the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        from . import __version__

        sys.stdout.write(f"hive {__version__}\n")
        return 0
    from .cli import run_cli

    return run_cli(args)


if __name__ == "__main__":
    raise SystemExit(main())
