from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hive_core.builtin_tools import glob_files
from hive_core.builtin_tools import grep_files
from hive_core.permissions.glob import expand_braces

if TYPE_CHECKING:
    from .conftest import Project

# glob_files


@pytest.fixture
def tree(project: Project) -> Project:
    for name in (
        "setup.py",
        "src/app.py",
        "src/util/helpers.py",
        "src/app.ts",
        "src/view.tsx",
        "docs/index.md",
    ):
        project.write(name, f"# {name}\n")
    project.write(".venv/lib/site.py", "hidden\n")
    project.write(".github/workflows/ci.yml", "on: push\n")
    return project


@pytest.mark.anyio
async def test_double_star_matches_every_depth(tree: Project) -> None:
    assert await tree.call(glob_files, pattern="**/*.py") == (
        "Found 3 files matching '**/*.py':\n  setup.py\n  src/app.py\n  src/util/helpers.py"
    )


@pytest.mark.anyio
async def test_single_star_stays_in_one_directory(tree: Project) -> None:
    assert await tree.call(glob_files, pattern="*.py") == "Found 1 file matching '*.py':\n  setup.py"
    assert (
        await tree.call(glob_files, pattern="*.py", path="src") == "Found 1 file matching '*.py':\n  app.py"
    )


@pytest.mark.anyio
async def test_braces_expand(tree: Project) -> None:
    reply = await tree.call(glob_files, pattern="src/*.{ts,tsx}")
    assert reply.splitlines()[1:] == ["  src/app.ts", "  src/view.tsx"]


@pytest.mark.anyio
async def test_hidden_directories_only_when_spelled(tree: Project) -> None:
    assert ".venv" not in await tree.call(glob_files, pattern="**/*")
    assert "site.py" in await tree.call(glob_files, pattern=".venv/**/*.py")
    assert "ci.yml" in await tree.call(glob_files, pattern=".github/**/*.yml")


@pytest.mark.anyio
async def test_results_are_capped_at_100(project: Project) -> None:
    for n in range(130):
        project.write(f"f{n:03}.txt", "")
    lines = (await project.call(glob_files, pattern="*.txt")).splitlines()
    assert lines[0] == "Found 130 files matching '*.txt':"
    assert len(lines) == 102
    assert lines[-1] == "  ... and 30 more; narrow the pattern to see them"


@pytest.mark.anyio
async def test_no_match_and_bad_base(tree: Project) -> None:
    assert await tree.call(glob_files, pattern="**/*.rs") == "No files match '**/*.rs' under ."
    with pytest.raises(FileNotFoundError):
        await tree.call(glob_files, pattern="*", path="nowhere")
    with pytest.raises(ValueError, match="empty"):
        await tree.call(glob_files, pattern=" ")


@given(st.lists(st.text(alphabet="abc", min_size=1, max_size=3), min_size=2, max_size=4, unique=True))
def test_brace_expansion_yields_each_choice(choices: list[str]) -> None:
    assert expand_braces("x{" + ",".join(choices) + "}y") == [f"x{choice}y" for choice in choices]


def test_nested_braces_expand() -> None:
    assert expand_braces("{a,b{1,2}}.c") == ["a.c", "b1.c", "b2.c"]
    assert expand_braces("{single}.c") == ["{single}.c"]


# grep_files


@pytest.mark.anyio
async def test_regex_matches_with_line_numbers(project: Project) -> None:
    project.write("src/a.py", "import os\n\ndef run():\n    os.getcwd()\n")
    project.write("src/b.py", "def other():\n    pass\n")
    reply = await project.call(grep_files, pattern=r"^def \w+\(")
    assert (
        reply == "Found 2 matches in 2 files:\n\nsrc/a.py:\n  3: def run():\n\nsrc/b.py:\n  1: def other():"
    )


@pytest.mark.anyio
async def test_literal_mode_takes_the_text_as_written(project: Project) -> None:
    project.write("a.py", "call(x)\ncallx\n")
    with pytest.raises(ValueError, match="literal"):
        await project.call(grep_files, pattern="call(")
    assert (
        await project.call(grep_files, pattern="call(", literal=True)
        == "Found 1 match in 1 file:\n\na.py:\n  1: call(x)"
    )
    assert "2: callx" in await project.call(grep_files, pattern="call.")


@pytest.mark.anyio
async def test_case_sensitive_unless_asked(project: Project) -> None:
    project.write("a.txt", "Error\nerror\n")
    assert "2 matches" not in await project.call(grep_files, pattern="error")
    assert "Found 2 matches" in await project.call(grep_files, pattern="(?i)error")


@pytest.mark.anyio
async def test_a_file_pattern_without_slash_matches_names_at_any_depth(project: Project) -> None:
    project.write("top.py", "needle\n")
    project.write("deep/er/mod.py", "needle\n")
    project.write("deep/notes.md", "needle\n")
    reply = await project.call(grep_files, pattern="needle", file_pattern="*.py")
    assert reply == "Found 2 matches in 2 files:\n\ntop.py:\n  1: needle\n\ndeep/er/mod.py:\n  1: needle"
    reply = await project.call(grep_files, pattern="needle", file_pattern="deep/*.md")
    assert reply == "Found 1 match in 1 file:\n\ndeep/notes.md:\n  1: needle"


@pytest.mark.anyio
async def test_reads_every_text_encoding_and_skips_binaries(project: Project) -> None:
    project.write("bom.txt", codecs.BOM_UTF8 + b"needle one\r\n")
    project.write("wide.txt", codecs.BOM_UTF16_LE + "x\r\nneedle two\r\n".encode("utf-16-le"))
    project.write("blob.bin", b"needle\x00\x01")
    reply = await project.call(grep_files, pattern="needle")
    assert reply == (
        "Found 2 matches in 2 files:\n\nbom.txt:\n  1: needle one\n\nwide.txt:\n  2: needle two\n"
        "(skipped files: 1 binary)"
    )


@pytest.mark.anyio
async def test_output_stops_at_100_matches(project: Project) -> None:
    project.write("a.txt", "hit\n" * 80)
    project.write("b.txt", "hit\n" * 80)
    reply = await project.call(grep_files, pattern="hit")
    assert reply.startswith("Showing the first 100 matches, in 2 files; the search stopped there")
    assert reply.count(": hit") == 100
    assert "  20: hit" in reply
    assert "  21: hit" not in reply.split("b.txt:")[1]


@pytest.mark.anyio
async def test_exactly_100_matches_are_not_reported_as_cut(project: Project) -> None:
    project.write("a.txt", "hit\n" * 100)
    assert (await project.call(grep_files, pattern="hit")).startswith("Found 100 matches in 1 file:")


@pytest.mark.anyio
async def test_output_stops_at_50_files(project: Project) -> None:
    for n in range(55):
        project.write(f"f{n:02}.txt", "hit\n")
    reply = await project.call(grep_files, pattern="hit")
    assert reply.startswith("Showing the first 50 matches, in 50 files")
    assert "f49.txt" in reply
    assert "f50.txt" not in reply


@pytest.mark.anyio
async def test_long_lines_are_cut_around_the_match(project: Project) -> None:
    project.write("min.js", "a" * 1000 + "NEEDLE" + "b" * 1000 + "\n")
    reply = await project.call(grep_files, pattern="NEEDLE")
    line = reply.splitlines()[-1]
    excerpt = line.removeprefix("  1: ")
    assert excerpt.startswith("…a")
    assert excerpt.endswith("b…")
    assert "NEEDLE" in excerpt
    assert len(excerpt) == 202


@pytest.mark.anyio
async def test_no_matches_and_single_files(project: Project) -> None:
    project.write("a.txt", "alpha\n")
    project.write("b.txt", "beta\n")
    assert await project.call(grep_files, pattern="gamma") == "No matches for 'gamma' in 2 files searched"
    assert (
        await project.call(grep_files, pattern="a", path="b.txt")
        == "Found 1 match in 1 file:\n\nb.txt:\n  1: beta"
    )
    assert await project.call(grep_files, pattern="x", file_pattern="*.rs") == "No files match '*.rs' under ."
