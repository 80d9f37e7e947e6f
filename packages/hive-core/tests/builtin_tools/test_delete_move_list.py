from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from hive_core.builtin_tools import delete_file
from hive_core.builtin_tools import list_directory
from hive_core.builtin_tools import move_file

if TYPE_CHECKING:
    from .conftest import Project

pytestmark = pytest.mark.anyio


# delete_file


async def test_deletes_a_file(project: Project) -> None:
    path = project.write("old.txt", "bye")
    assert await project.call(delete_file, path="old.txt") == "Deleted old.txt"
    assert not path.exists()


async def test_never_deletes_a_directory(project: Project) -> None:
    project.write("src/keep.py", "x")
    with pytest.raises(IsADirectoryError, match="single files only"):
        await project.call(delete_file, path="src")
    assert (project.root / "src" / "keep.py").exists()


async def test_deleting_a_missing_file_fails(project: Project) -> None:
    with pytest.raises(FileNotFoundError, match=r"no file at ghost\.txt"):
        await project.call(delete_file, path="ghost.txt")


# move_file


async def test_moves_a_file_into_new_directories(project: Project) -> None:
    project.write("a.txt", "content")
    assert (
        await project.call(move_file, source="a.txt", destination="x/y/b.txt") == "Moved a.txt to x/y/b.txt"
    )
    assert not (project.root / "a.txt").exists()
    assert (project.root / "x/y/b.txt").read_text() == "content"


async def test_an_existing_destination_is_kept_unless_overwrite(project: Project) -> None:
    project.write("a.txt", "new")
    project.write("b.txt", "old")
    with pytest.raises(FileExistsError, match="overwrite"):
        await project.call(move_file, source="a.txt", destination="b.txt")
    assert (project.root / "a.txt").read_text() == "new"
    assert (project.root / "b.txt").read_text() == "old"
    reply = await project.call(move_file, source="a.txt", destination="b.txt", overwrite=True)
    assert reply == "Moved a.txt to b.txt (replaced the file that was there)"
    assert (project.root / "b.txt").read_text() == "new"
    assert not (project.root / "a.txt").exists()


async def test_a_directory_destination_needs_the_file_name(project: Project) -> None:
    project.write("a.txt", "x")
    (project.root / "docs").mkdir()
    with pytest.raises(IsADirectoryError, match=r"such as docs/a\.txt"):
        await project.call(move_file, source="a.txt", destination="docs")
    assert (project.root / "a.txt").exists()


async def test_directories_and_missing_files_are_not_moved(project: Project) -> None:
    (project.root / "src").mkdir()
    with pytest.raises(IsADirectoryError):
        await project.call(move_file, source="src", destination="lib")
    with pytest.raises(FileNotFoundError):
        await project.call(move_file, source="ghost.txt", destination="b.txt")
    project.write("a.txt", "x")
    with pytest.raises(ValueError, match="same file"):
        await project.call(move_file, source="a.txt", destination="./a.txt")


# list_directory


async def test_lists_directories_then_files_with_sizes(project: Project) -> None:
    project.write("b.txt", "x" * 2048)
    project.write("a.txt", "hi")
    project.write("src/main.py", "")
    project.write(".hidden", "")
    listing = await project.call(list_directory)
    assert listing.splitlines() == [
        "[DIR]  src/",
        "[FILE] .hidden (0 B)",
        "[FILE] a.txt (2 B)",
        "[FILE] b.txt (2.0 KB)",
    ]


async def test_recursive_listing_uses_relative_paths(project: Project) -> None:
    project.write("src/pkg/mod.py", "x")
    project.write("README", "r")
    listing = await project.call(list_directory, path=".", recursive=True)
    assert listing.splitlines() == [
        "[DIR]  src/",
        "[DIR]  src/pkg/",
        "[FILE] README (1 B)",
        "[FILE] src/pkg/mod.py (1 B)",
    ]
    assert await project.call(list_directory, path="src") == "[DIR]  pkg/"


async def test_listing_stops_at_500_entries_of_each_kind(project: Project) -> None:
    for n in range(505):
        project.write(f"many/f{n:03}.txt", "")
    lines = (await project.call(list_directory, path="many")).splitlines()
    assert len(lines) == 501
    assert lines[-2] == "[FILE] f499.txt (0 B)"
    assert lines[-1] == "... (cut at 500 of each; 0 directories and 505 files in all)"


async def test_empty_missing_and_file_paths(project: Project) -> None:
    (project.root / "empty").mkdir()
    project.write("a.txt", "x")
    assert await project.call(list_directory, path="empty") == "empty is empty"
    with pytest.raises(FileNotFoundError):
        await project.call(list_directory, path="nowhere")
    with pytest.raises(NotADirectoryError, match="read_file"):
        await project.call(list_directory, path="a.txt")
