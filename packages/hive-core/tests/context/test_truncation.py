"""Tool-result truncation: the seed's head-and-tail cut, byte for byte."""

from __future__ import annotations

from hive_core.context import truncate_tool_result


def numbered(count: int, width: int = 600) -> str:
    return "\n".join(f"{i:05d} " + "x" * (width - 6) for i in range(count))


def test_a_long_result_keeps_50_head_and_20_tail_lines() -> None:
    content = numbered(200, width=200)  # 200 lines of 200 characters: 40,199 characters
    lines = content.split("\n")

    cut = truncate_tool_result(content)

    expected = (
        "\n".join(lines[:50])
        + "\n\n[... 130 lines omitted (40,199 chars total) ...]\n\n"
        + "\n".join(lines[180:])
    )
    assert cut == expected


def test_a_result_at_the_limit_is_untouched() -> None:
    content = "y" * 30_000
    assert truncate_tool_result(content) is content


def test_a_result_with_too_few_lines_keeps_its_first_characters() -> None:
    content = "z" * 30_001

    cut = truncate_tool_result(content)

    assert cut == "z" * 30_000 + "\n[... truncated (30,001 chars total) ...]"


def test_few_enormous_lines_fall_back_to_the_character_cut() -> None:
    # 71 lines: enough for the line cut, but the kept 70 lines would still be 70,000 characters.
    content = numbered(71, width=1000)

    cut = truncate_tool_result(content)

    assert cut == content[:30_000] + f"\n[... truncated ({len(content):,} chars total) ...]"


def test_the_limits_are_settings() -> None:
    content = "\n".join(str(i) for i in range(10))  # 19 characters

    cut = truncate_tool_result(content, max_chars=10, head_lines=2, tail_lines=1)

    assert cut == "0\n1\n\n[... 7 lines omitted (19 chars total) ...]\n\n9"
