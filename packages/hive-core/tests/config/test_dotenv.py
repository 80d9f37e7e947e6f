"""Parsing the project's .env file."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import ConfigError
from hive_core.config import parse_dotenv
from hive_core.config import read_dotenv


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("KEY=plain", "plain"),
        ("KEY = spaced  ", "spaced"),
        ("export KEY=exported", "exported"),
        ("export   KEY=tabs", "tabs"),
        ("KEY=", ""),
        ("KEY=with # a comment", "with"),
        ("KEY=hash#inside", "hash#inside"),
        ("KEY= #only a comment", ""),
        ("KEY='single # quoted'", "single # quoted"),
        ("KEY='no \\n escapes'", "no \\n escapes"),
        ('KEY="double \\"escaped\\" \\\\ \\n\\t\\$"', 'double "escaped" \\ \n\t$'),
        ('KEY="keeps \\q unknown"', "keeps \\q unknown"),
        ('KEY="quoted" # trailing comment', "quoted"),
        ("KEY=  'padded'  ", "padded"),
        ("KEY=a=b=c", "a=b=c"),
        ('KEY=""', ""),
        ("KEY=sk-abc'def", "sk-abc'def"),
    ],
)
def test_values(line: str, value: str) -> None:
    parsed = parse_dotenv(f"{line}\n")
    assert parsed.values == {"KEY": value}
    assert parsed.warnings == ()


def test_comments_blank_lines_and_line_numbers() -> None:
    text = "# header\n\n   # indented comment\nA=1\r\nB=2\r\n\nexport C=3"
    parsed = parse_dotenv(text, source="p/.env")
    assert parsed.values == {"A": "1", "B": "2", "C": "3"}
    assert parsed.lines == {"A": 4, "B": 5, "C": 7}
    assert parsed.source == "p/.env"


def test_a_later_line_wins() -> None:
    parsed = parse_dotenv("A=first\nA=second\n")
    assert parsed.values == {"A": "second"}
    assert parsed.lines == {"A": 2}


def test_quoted_values_may_span_lines() -> None:
    parsed = parse_dotenv("KEY=\"line one\nline two\"\nNEXT=x\nPEM='a\nb'\n")
    assert parsed.values == {"KEY": "line one\nline two", "NEXT": "x", "PEM": "a\nb"}
    assert parsed.lines == {"KEY": 1, "NEXT": 3, "PEM": 4}


@pytest.mark.parametrize("line", ["JUSTAWORD", "1BAD=x", "SPACE IN=x", "=value", "export"])
def test_lines_that_are_not_assignments_warn_and_are_skipped(line: str) -> None:
    parsed = parse_dotenv(f"GOOD=1\n{line}\nALSO=2\n", source="x/.env")
    assert parsed.values == {"GOOD": "1", "ALSO": "2"}
    [warning] = parsed.warnings
    assert (warning.source, warning.line) == ("x/.env", 2)


def test_text_after_a_closing_quote_warns() -> None:
    parsed = parse_dotenv("KEY='value' junk\n")
    assert parsed.values == {"KEY": "value"}
    [warning] = parsed.warnings
    assert warning.key == "KEY"
    assert warning.line == 1


def test_an_unterminated_quote_is_an_error_naming_line_and_column() -> None:
    with pytest.raises(ConfigError, match="never closed") as caught:
        parse_dotenv('A=1\nKEY = "open\nB=2\n', source="p/.env")
    error = caught.value
    assert (error.source, error.line, error.column, error.key) == ("p/.env", 2, 7, "KEY")


def test_a_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_bytes(b"\xef\xbb\xbfKEY=v\n")
    parsed = read_dotenv(path)
    assert parsed is not None
    assert parsed.values == {"KEY": "v"}
    assert parsed.source == str(path)


def test_a_missing_file_is_none(tmp_path: Path) -> None:
    assert read_dotenv(tmp_path / ".env") is None
