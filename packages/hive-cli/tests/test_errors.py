"""What ``hive`` prints when a command fails: a user error is one line, anything else a bug report."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable

import click
import pytest

from hive_cli.cli import cli
from hive_cli.cli import run_cli
from hive_cli.conversation import SessionChoiceError
from hive_cli.errors import USER_ERRORS
from hive_core.config import ConfigError
from hive_core.errors import HiveError
from hive_core.errors import UserError
from hive_providers.registry import ProviderSelectionError
from hive_providers.registry import UnknownProviderError

_BUG_LINE = "hive: this is a bug in hive; run it again with --debug for the traceback, and report it\n"


@pytest.mark.parametrize(
    ("error", "base"),
    [
        (ProviderSelectionError, ValueError),
        (UnknownProviderError, ValueError),
        (SessionChoiceError, LookupError),
    ],
    ids=["ProviderSelectionError", "UnknownProviderError", "SessionChoiceError"],
)
def test_the_errors_of_providers_and_the_cli_are_user_errors(
    error: type[Exception], base: type[Exception]
) -> None:
    assert issubclass(error, UserError)
    assert issubclass(error, base)


def test_the_cli_catches_user_errors_and_only_those() -> None:
    assert (UserError,) == USER_ERRORS


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> Callable[[BaseException], None]:
    """Make ``hive explode`` a command that raises the exception given."""

    def install(error: BaseException) -> None:
        def explode() -> None:
            raise error

        monkeypatch.setitem(cli.commands, "explode", click.Command("explode", callback=explode))

    monkeypatch.delenv("HIVE_DEBUG", raising=False)
    return install


def test_a_user_error_is_one_line_and_exit_1(
    failing: Callable[[BaseException], None], capsys: pytest.CaptureFixture[str]
) -> None:
    failing(ConfigError("'openai' must be a mapping", source="config.yaml", line=2, column=3))
    assert run_cli(["explode"]) == 1
    assert capsys.readouterr().err == "hive: config.yaml:2:3: 'openai' must be a mapping\n"


def test_a_user_error_inside_a_task_group_is_still_one_line(
    failing: Callable[[BaseException], None], capsys: pytest.CaptureFixture[str]
) -> None:
    failing(ExceptionGroup("unhandled errors in a TaskGroup", [UserError("no such session")]))
    assert run_cli(["explode"]) == 1
    assert capsys.readouterr().err == "hive: no such session\n"


@pytest.mark.parametrize(
    "error",
    [RuntimeError("boom"), ValueError("boom"), KeyError("boom"), HiveError("boom")],
    ids=["RuntimeError", "ValueError", "KeyError", "HiveError"],
)
def test_a_programming_error_is_reported_as_a_bug_without_a_traceback(
    failing: Callable[[BaseException], None], capsys: pytest.CaptureFixture[str], error: Exception
) -> None:
    failing(error)
    assert run_cli(["explode"]) == 70
    err = capsys.readouterr().err
    assert err == f"hive: internal error: {type(error).__name__}: {error}\n{_BUG_LINE}"


def test_a_bug_in_a_task_group_names_the_exception_inside(
    failing: Callable[[BaseException], None], capsys: pytest.CaptureFixture[str]
) -> None:
    failing(ExceptionGroup("unhandled errors in a TaskGroup", [AttributeError("no attribute 'x'\nat all")]))
    assert run_cli(["explode"]) == 70
    assert (
        capsys.readouterr().err
        == f"hive: internal error: AttributeError: no attribute 'x' at all\n{_BUG_LINE}"
    )


def test_debug_prints_the_traceback(
    failing: Callable[[BaseException], None], capsys: pytest.CaptureFixture[str]
) -> None:
    failing(RuntimeError("boom"))
    assert run_cli(["--debug", "explode"]) == 70
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n")
    assert "in explode\n" in err
    assert err.endswith(
        "RuntimeError: boom\nhive: internal error: RuntimeError: boom\n"
        "hive: this is a bug in hive; please report it with the traceback above\n"
    )


def test_hive_debug_in_the_environment_is_the_same_as_the_option(
    failing: Callable[[BaseException], None],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failing(RuntimeError("boom"))
    monkeypatch.setenv("HIVE_DEBUG", "1")
    assert run_cli(["explode"]) == 70
    assert capsys.readouterr().err.startswith("Traceback (most recent call last):\n")


def test_debug_leaves_a_user_error_one_line(
    failing: Callable[[BaseException], None], capsys: pytest.CaptureFixture[str]
) -> None:
    failing(ConfigError("bad value"))
    assert run_cli(["--debug", "explode"]) == 1
    assert capsys.readouterr().err == "hive: bad value\n"


def test_the_installed_command_reports_a_bug_with_exit_70() -> None:
    # An internal error in a real process: ``hive`` is started with a command injected before it runs.
    probe = (
        "import sys, click\n"
        "from hive_cli.cli import cli\n"
        "from hive_cli.__main__ import main\n"
        "def explode():\n"
        "    raise RuntimeError('boom')\n"
        "cli.add_command(click.Command('explode', callback=explode))\n"
        "sys.exit(main(['explode']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False, env={}
    )
    assert result.returncode == 70
    assert result.stderr == f"hive: internal error: RuntimeError: boom\n{_BUG_LINE}"


def _library_logs_an_exception() -> None:
    try:
        raise BrokenPipeError("the CLI is gone")
    except BrokenPipeError:
        logging.exception("Background task failed")  # what the ACP library does, on the root logger


def test_a_library_log_is_one_line_of_hive_not_a_traceback(
    failing: Callable[[BaseException], None], capsys: pytest.CaptureFixture[str]
) -> None:
    failing(UserError("stop here"))
    run_cli(["explode"])
    capsys.readouterr()
    _library_logs_an_exception()
    logging.getLogger("httpx").info("HTTP Request: POST")  # below WARNING: not shown
    assert capsys.readouterr().err == "hive: root: Background task failed\n"


def test_debug_shows_every_log_record_with_its_traceback(
    failing: Callable[[BaseException], None], capsys: pytest.CaptureFixture[str]
) -> None:
    failing(UserError("stop here"))
    run_cli(["--debug", "explode"])
    capsys.readouterr()
    _library_logs_an_exception()
    logging.getLogger("httpx").info("HTTP Request: POST")
    err = capsys.readouterr().err
    assert err.startswith("hive: root: Background task failed\nTraceback (most recent call last):\n")
    assert "BrokenPipeError: the CLI is gone\n" in err
    assert err.endswith("hive: httpx: HTTP Request: POST\n")
