from __future__ import annotations

import codecs
from typing import TYPE_CHECKING
from typing import Any

import pytest

from hive_core.builtin_tools import read_file

if TYPE_CHECKING:
    from .conftest import Project

pytestmark = pytest.mark.anyio


async def test_reads_utf8_text(project: Project) -> None:
    project.write("notes.txt", "héllo\nwörld\n")
    assert await project.call(read_file, path="notes.txt") == "héllo\nwörld\n"


async def test_byte_order_mark_is_not_part_of_the_text(project: Project) -> None:
    project.write("bom.txt", codecs.BOM_UTF8 + b"first\nsecond\n")
    assert await project.call(read_file, path="bom.txt") == "first\nsecond\n"
    assert await project.call(read_file, path="bom.txt", start_line=1, line_count=1) == "first\n"


async def test_crlf_comes_back_as_lf(project: Project) -> None:
    project.write("dos.txt", b"one\r\ntwo\r\nthree")
    assert await project.call(read_file, path="dos.txt") == "one\ntwo\nthree"
    assert await project.call(read_file, path="dos.txt", start_line=2) == "two\nthree"


async def test_reads_utf16_by_its_mark(project: Project) -> None:
    project.write("wide.txt", codecs.BOM_UTF16_LE + "ab\r\ncd\r\n".encode("utf-16-le"))
    assert await project.call(read_file, path="wide.txt") == "ab\ncd\n"
    assert await project.call(read_file, path="wide.txt", start_line=2, line_count=1) == "cd\n"


async def test_line_ranges(project: Project) -> None:
    project.write("lines.txt", "".join(f"line {n}\n" for n in range(1, 11)))
    assert await project.call(read_file, path="lines.txt", start_line=3, line_count=2) == "line 3\nline 4\n"
    assert await project.call(read_file, path="lines.txt", start_line=9) == "line 9\nline 10\n"
    assert await project.call(read_file, path="lines.txt", line_count=1) == "line 1\n"
    assert await project.call(read_file, path="lines.txt", start_line=10, line_count=50) == "line 10\n"


async def test_a_range_past_the_end_says_how_long_the_file_is(project: Project) -> None:
    project.write("short.txt", "a\nb\n")
    with pytest.raises(ValueError, match="has 2 lines"):
        await project.call(read_file, path="short.txt", start_line=3)


@pytest.mark.parametrize(
    ("arguments", "message"), [({"start_line": 0}, "counted from 1"), ({"line_count": 0}, "at least one")]
)
async def test_nonsense_ranges_are_refused(project: Project, arguments: dict[str, Any], message: str) -> None:
    project.write("short.txt", "a\n")
    with pytest.raises(ValueError, match=message):
        await project.call(read_file, path="short.txt", **arguments)


async def test_a_whole_file_over_1_mb_is_refused_but_parts_of_it_can_be_read(project: Project) -> None:
    line = "x" * 99 + "\n"
    project.write("big.log", line * 11_000)  # 1.1 MB
    with pytest.raises(ValueError, match=r"big\.log is 1\.0 MB.*start_line and line_count"):
        await project.call(read_file, path="big.log")
    assert await project.call(read_file, path="big.log", start_line=10_999, line_count=5) == line * 2


async def test_a_range_over_1_mb_is_refused(project: Project) -> None:
    project.write("big.log", ("y" * 999 + "\n") * 1100)
    with pytest.raises(ValueError, match="fewer lines"):
        await project.call(read_file, path="big.log", start_line=1)


@pytest.mark.parametrize("ranged", [False, True])
async def test_binary_files_are_refused(project: Project, ranged: bool) -> None:
    project.write("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    arguments = {"start_line": 1} if ranged else {}
    with pytest.raises(ValueError, match="binary"):
        await project.call(read_file, path="image.png", **arguments)


async def test_undecodable_bytes_become_replacement_characters(project: Project) -> None:
    project.write("latin1.txt", "café\n".encode("latin-1"))
    assert await project.call(read_file, path="latin1.txt") == "caf\ufffd\n"


async def test_empty_file_is_named_as_empty(project: Project) -> None:
    project.write("empty.txt", b"")
    assert await project.call(read_file, path="empty.txt") == "(empty.txt is empty)"


async def test_paths_are_relative_to_the_working_directory_or_absolute(project: Project) -> None:
    target = project.write("src/pkg/mod.py", "x = 1\n")
    assert await project.call(read_file, path="src/pkg/mod.py") == "x = 1\n"
    assert await project.call(read_file, path=str(target)) == "x = 1\n"
    assert await project.call(read_file, path="src/../src/pkg/mod.py") == "x = 1\n"


async def test_missing_files_and_directories_are_refused(project: Project) -> None:
    (project.root / "src").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no file at nope\.txt"):
        await project.call(read_file, path="nope.txt")
    with pytest.raises(IsADirectoryError, match="list_directory"):
        await project.call(read_file, path="src")
