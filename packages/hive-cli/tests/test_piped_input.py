"""Text piped into a one-shot: read from a file or a pipe, at most ``MAX_PIPED_BYTES``, past which the user is told
so as any user error (``hive: <message>``, exit 1)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hive_cli.errors import report_failure
from hive_cli.piped_input import MAX_PIPED_BYTES
from hive_cli.piped_input import PipedInputTooLarge
from hive_cli.piped_input import combine
from hive_cli.piped_input import read_piped
from hive_core.errors import HiveError
from hive_core.errors import UserError


def _file(tmp_path: Path, data: bytes) -> io.BufferedReader:
    path = tmp_path / "stdin"
    path.write_bytes(data)
    return path.open("rb")


def test_too_much_on_stdin_is_a_user_error_that_keeps_its_message(tmp_path: Path) -> None:
    with _file(tmp_path, b"x" * (MAX_PIPED_BYTES + 1)) as stdin, pytest.raises(PipedInputTooLarge) as raised:
        read_piped(stdin)
    error = raised.value
    assert isinstance(error, UserError)
    assert isinstance(error, HiveError)
    assert isinstance(error, ValueError)  # what it was before it joined the tree
    assert str(error) == "more than 16 MiB arrived on stdin"
    stream = io.StringIO()
    assert report_failure(error, stream) == 1
    assert stream.getvalue() == "hive: more than 16 MiB arrived on stdin\n"


def test_a_file_on_stdin_is_read_and_stripped(tmp_path: Path) -> None:
    with _file(tmp_path, b"\n  def f(:\n    return 1\n\n") as stdin:
        assert read_piped(stdin) == "def f(:\n    return 1"
    with _file(tmp_path, b" \n\n") as stdin:
        assert read_piped(stdin) is None


def test_the_piped_text_goes_before_the_prompt() -> None:
    assert combine("the diff", "review this") == "the diff\n\nreview this"
    assert combine(None, "review this") == "review this"
