from __future__ import annotations

import codecs
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hive_core.builtin_tools import edit_file
from hive_core.builtin_tools import read_file
from hive_core.builtin_tools import write_file
from hive_core.tools import ToolContext

if TYPE_CHECKING:
    from .conftest import Project

BOM = codecs.BOM_UTF8


# write_file


@pytest.mark.anyio
async def test_creates_a_file_and_its_parents_as_utf8_without_a_mark(project: Project) -> None:
    reply = await project.call(write_file, path="a/b/new.txt", content="héllo\nthere\n")
    assert reply == "Created a/b/new.txt (13 bytes)"
    assert (project.root / "a/b/new.txt").read_bytes() == "héllo\nthere\n".encode()


@pytest.mark.anyio
async def test_rewriting_keeps_the_mark_and_crlf(project: Project) -> None:
    path = project.write("dos.txt", BOM + b"old\r\ntext\r\n")
    reply = await project.call(write_file, path="dos.txt", content="new\ncontent\n")
    assert path.read_bytes() == BOM + b"new\r\ncontent\r\n"
    assert "UTF-8 with a byte-order mark, CRLF line endings" in reply


@pytest.mark.anyio
async def test_appending_adds_no_second_mark_and_follows_crlf(project: Project) -> None:
    path = project.write("dos.txt", BOM + b"one\r\n")
    reply = await project.call(write_file, path="dos.txt", content="two\nthree\n", append=True)
    assert path.read_bytes() == BOM + b"one\r\ntwo\r\nthree\r\n"
    assert reply.startswith("Appended 12 bytes to dos.txt")


@pytest.mark.anyio
async def test_appending_to_utf16_stays_utf16(project: Project) -> None:
    path = project.write("wide.txt", codecs.BOM_UTF16_LE + "ab\n".encode("utf-16-le"))
    await project.call(write_file, path="wide.txt", content="cd\n", append=True)
    assert path.read_bytes() == codecs.BOM_UTF16_LE + "ab\ncd\n".encode("utf-16-le")


@pytest.mark.anyio
async def test_appending_creates_a_missing_file(project: Project) -> None:
    await project.call(write_file, path="log.txt", content="first\n", append=True)
    assert (project.root / "log.txt").read_bytes() == b"first\n"


@pytest.mark.anyio
async def test_content_that_brings_its_own_crlf_is_written_as_given(project: Project) -> None:
    path = project.write("unix.txt", b"a\nb\n")
    await project.call(write_file, path="unix.txt", content="c\r\nd\r\n")
    assert path.read_bytes() == b"c\r\nd\r\n"
    dos = project.write("dos.txt", b"a\r\n")
    await project.call(write_file, path="dos.txt", content="mixed\r\nand\n")
    assert dos.read_bytes() == b"mixed\r\nand\n"


@pytest.mark.anyio
async def test_a_binary_file_can_be_replaced_but_not_appended_to(project: Project) -> None:
    path = project.write("blob.bin", b"\x00\x01\x02")
    with pytest.raises(ValueError, match="binary"):
        await project.call(write_file, path="blob.bin", content="text", append=True)
    assert path.read_bytes() == b"\x00\x01\x02"
    await project.call(write_file, path="blob.bin", content="text")
    assert path.read_bytes() == b"text"


@pytest.mark.anyio
async def test_a_directory_is_not_written(project: Project) -> None:
    (project.root / "src").mkdir()
    with pytest.raises(IsADirectoryError):
        await project.call(write_file, path="src", content="x")


@pytest.mark.anyio
async def test_lone_surrogates_are_refused(project: Project) -> None:
    with pytest.raises(ValueError, match="cannot be stored"):
        await project.call(write_file, path="bad.txt", content="a\ud800b")
    assert not (project.root / "bad.txt").exists()


# edit_file


@pytest.mark.anyio
async def test_replaces_a_unique_match(project: Project) -> None:
    path = project.write("app.py", "def main():\n    print('hi')\n\nmain()\n")
    reply = await project.call(edit_file, path="app.py", old_text="print('hi')", new_text="print('bye')")
    assert reply == "Edited app.py: 1 replacement (at line 2)"
    assert path.read_text() == "def main():\n    print('bye')\n\nmain()\n"


@pytest.mark.anyio
async def test_an_ambiguous_match_is_refused_unless_replace_all(project: Project) -> None:
    original = "x = 1\ny = 2\nx = 1\n"
    path = project.write("vars.py", original)
    with pytest.raises(ValueError, match=r"occurs 2 times in vars\.py \(at lines 1, 3\).*replace_all"):
        await project.call(edit_file, path="vars.py", old_text="x = 1", new_text="x = 3")
    assert path.read_text() == original
    reply = await project.call(
        edit_file, path="vars.py", old_text="x = 1", new_text="x = 3", replace_all=True
    )
    assert reply == "Edited vars.py: 2 replacements (at lines 1, 3)"
    assert path.read_text() == "x = 3\ny = 2\nx = 3\n"


@pytest.mark.anyio
async def test_a_whitespace_mismatch_gets_a_hint_showing_the_real_text(project: Project) -> None:
    original = "class A:\n\tdef f(self):\n\t\treturn 1\n"
    path = project.write("tabs.py", original)
    with pytest.raises(ValueError, match="different whitespace") as caught:
        await project.call(
            edit_file, path="tabs.py", old_text="    def f(self):\n        return 1", new_text="    pass"
        )
    message = str(caught.value)
    assert "at lines 2-3" in message
    assert "\tdef f(self):\n\t\treturn 1" in message
    assert path.read_text() == original


@pytest.mark.anyio
async def test_text_that_is_not_there_at_all_gets_no_whitespace_hint(project: Project) -> None:
    path = project.write("a.txt", "alpha beta\n")
    with pytest.raises(ValueError, match=r"does not occur in a\.txt;") as caught:
        await project.call(edit_file, path="a.txt", old_text="gamma", new_text="delta")
    assert "whitespace" not in str(caught.value)
    assert path.read_text() == "alpha beta\n"


@pytest.mark.anyio
async def test_an_lf_edit_of_a_crlf_file_keeps_crlf_and_the_mark(project: Project) -> None:
    path = project.write("dos.txt", BOM + b"one\r\ntwo\r\nthree\r\n")
    await project.call(edit_file, path="dos.txt", old_text="one\ntwo\n", new_text="1\n2\n2.5\n")
    assert path.read_bytes() == BOM + b"1\r\n2\r\n2.5\r\nthree\r\n"


@pytest.mark.anyio
async def test_edits_utf16_files_in_place(project: Project) -> None:
    path = project.write("wide.txt", codecs.BOM_UTF16_BE + "naïve\r\n".encode("utf-16-be"))
    await project.call(edit_file, path="wide.txt", old_text="naïve", new_text="naive")
    assert path.read_bytes() == codecs.BOM_UTF16_BE + "naive\r\n".encode("utf-16-be")


@pytest.mark.anyio
async def test_a_file_mixing_line_endings_still_matches_as_sent(project: Project) -> None:
    path = project.write("mixed.txt", b"a\r\nb\nc\n")
    await project.call(edit_file, path="mixed.txt", old_text="b\nc", new_text="B\nC")
    assert path.read_bytes() == b"a\r\nB\nC\n"


@pytest.mark.anyio
async def test_a_file_that_is_not_utf8_is_not_edited(project: Project) -> None:
    original = "café = 1\n".encode("latin-1")
    path = project.write("latin1.py", original)
    with pytest.raises(ValueError, match="not valid UTF-8"):
        await project.call(edit_file, path="latin1.py", old_text="= 1", new_text="= 2")
    assert path.read_bytes() == original


@pytest.mark.anyio
async def test_binary_and_oversized_files_are_not_edited(project: Project) -> None:
    project.write("blob.bin", b"abc\x00def")
    with pytest.raises(ValueError, match="binary"):
        await project.call(edit_file, path="blob.bin", old_text="abc", new_text="xyz")
    project.write("big.txt", "z" * (1024 * 1024 + 1))
    with pytest.raises(ValueError, match=r"more than the 1\.0 MB"):
        await project.call(edit_file, path="big.txt", old_text="zz", new_text="y")


@pytest.mark.anyio
async def test_pointless_edits_are_refused(project: Project) -> None:
    project.write("a.txt", "same\n")
    with pytest.raises(ValueError, match="old_text is empty"):
        await project.call(edit_file, path="a.txt", old_text="", new_text="x")
    with pytest.raises(ValueError, match="change nothing"):
        await project.call(edit_file, path="a.txt", old_text="same", new_text="same")


@pytest.mark.anyio
async def test_editing_a_missing_file_points_to_write_file(project: Project) -> None:
    with pytest.raises(FileNotFoundError, match="write_file creates new ones"):
        await project.call(edit_file, path="new.txt", old_text="a", new_text="b")


@pytest.mark.anyio
async def test_deleting_text_with_an_empty_replacement(project: Project) -> None:
    path = project.write("a.txt", "keep\ndrop\nkeep too\n")
    await project.call(edit_file, path="a.txt", old_text="drop\n", new_text="")
    assert path.read_text() == "keep\nkeep too\n"


@pytest.mark.anyio
async def test_what_is_read_can_be_edited_back(project: Project) -> None:
    path = project.write("dos.txt", BOM + b"if x:\r\n    y()\r\n")
    text = await project.call(read_file, path="dos.txt")
    await project.call(
        edit_file, path="dos.txt", old_text=text.splitlines(keepends=True)[1], new_text="    z()\n"
    )
    assert path.read_bytes() == BOM + b"if x:\r\n    z()\r\n"


# NUL would make the file binary, and a leading U+FEFF would read as a byte-order mark.
_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00\ufeff"), max_size=200
)


@given(_text, st.sampled_from([b"", BOM]), st.booleans())
def test_a_write_reads_back_and_keeps_the_format(text: str, mark: bytes, crlf: bool) -> None:
    async def check(root: Path) -> None:
        path = root / "f.txt"
        path.write_bytes(mark + b"seed" + (b"\r\n" if crlf else b"\n"))
        context = ToolContext(call_id="c1", tool_name="write_file", working_dir=root, emit=lambda _: None)
        await write_file.invoke({"path": "f.txt", "content": text}, context)
        expected = text.replace("\n", "\r\n") if crlf else text
        assert path.read_bytes() == mark + expected.encode()
        outcome = await read_file.invoke({"path": "f.txt"}, context)
        assert outcome.content == (text or "(f.txt is empty)")

    with tempfile.TemporaryDirectory() as directory:
        anyio.run(check, Path(directory))
