"""One glob dialect for ``glob_files`` and the permission rules' path patterns, side by side on real files.

Both speak :mod:`hive_core.permissions.glob` (wcmatch): ``*`` and ``?`` stay in one segment, ``**/`` spans any
depth, brackets are sets that also match themselves, braces expand, a backslash escapes. Two settings differ by
purpose, and each is pinned here: the rules ignore case and let wildcards match dot names, so no spelling slips
past a deny rule; a search respects case and leaves dot names alone unless the pattern spells the dot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from hive_core.builtin_tools import glob_files
from hive_core.permissions import glob_matches

if TYPE_CHECKING:
    from .conftest import Project

pytestmark = pytest.mark.anyio


async def _found(project: Project, pattern: str) -> list[str]:
    reply = await project.call(glob_files, pattern=pattern)
    return sorted(line.strip() for line in reply.splitlines()[1:] if line.startswith("  "))


@pytest.mark.parametrize(
    ("pattern", "names"),
    [
        ("*.py", ["a.py"]),
        ("**/*.py", ["a.py", "src/b.py", "src/deep/c.py"]),
        ("src/*.py", ["src/b.py"]),
        ("src/**/*.py", ["src/b.py", "src/deep/c.py"]),
        ("src/?.py", ["src/b.py"]),
    ],
)
async def test_both_agree_on_segments_and_depth(project: Project, pattern: str, names: list[str]) -> None:
    for name in ("a.py", "src/b.py", "src/deep/c.py"):
        project.write(name, "")
    assert await _found(project, pattern) == names
    assert [name for name in ("a.py", "src/b.py", "src/deep/c.py") if glob_matches(pattern, name)] == names


async def test_brackets_are_a_set_and_match_themselves_in_both(project: Project) -> None:
    # A deny rule for Next.js's "pages/[id].tsx" must keep denying that very file; a search for it must find it.
    project.write("pages/[id].tsx", "")
    project.write("pages/i.tsx", "")
    project.write("pages/x.tsx", "")
    project.write("app/[slug]/page.tsx", "")
    assert await _found(project, "pages/[id].tsx") == ["pages/[id].tsx", "pages/i.tsx"]
    assert [
        name
        for name in ("pages/[id].tsx", "pages/i.tsx", "pages/x.tsx")
        if glob_matches("pages/[id].tsx", name)
    ] == [
        "pages/[id].tsx",
        "pages/i.tsx",
    ]
    assert await _found(project, "app/[slug]/*.tsx") == ["app/[slug]/page.tsx"]
    assert glob_matches("app/[slug]/*.tsx", "app/[slug]/page.tsx")


async def test_braces_expand_in_both(project: Project) -> None:
    for name in ("a.js", "a.ts", "a.py", "f1.txt", "f2.txt", "f9.txt"):
        project.write(name, "")
    assert await _found(project, "a.{js,ts}") == ["a.js", "a.ts"]
    assert [name for name in ("a.js", "a.ts", "a.py") if glob_matches("a.{js,ts}", name)] == ["a.js", "a.ts"]
    assert await _found(project, "f{1..3}.txt") == ["f1.txt", "f2.txt"]
    assert glob_matches("f{1..3}.txt", "f2.txt")
    assert not glob_matches("f{1..3}.txt", "f9.txt")


async def test_a_backslash_escapes_in_both(project: Project) -> None:
    project.write("a*b.md", "")
    project.write("axb.md", "")
    assert await _found(project, "a\\*b.md") == ["a*b.md"]
    assert glob_matches("a\\*b.md", "a*b.md")
    assert not glob_matches("a\\*b.md", "axb.md")


async def test_a_globstar_joined_to_a_name_is_one_star_in_both(project: Project) -> None:
    # The rules file refuses this spelling (a deny rule would silently cover less than its author meant).
    project.write("a.pem", "")
    project.write("keys/b.pem", "")
    assert await _found(project, "**.pem") == ["a.pem"]
    assert glob_matches("**.pem", "a.pem")
    assert not glob_matches("**.pem", "keys/b.pem")


async def test_case_counts_in_glob_files_not_in_rules(project: Project) -> None:
    # Rules ignore case so that ".ENV" on a case-insensitive disk cannot pass a deny rule for ".env".
    project.write("README.md", "")
    assert await _found(project, "readme.md") == []
    assert glob_matches("readme.md", "README.md")


async def test_wildcards_skip_dot_names_in_glob_files_not_in_rules(project: Project) -> None:
    # A rule "**/*.pem" must cover ".ssh/id.pem"; a search for "**/*" should not wade through ".git".
    project.write(".ssh/id.pem", "")
    project.write(".env", "")
    assert await _found(project, "**/*.pem") == []
    assert await _found(project, "*") == []
    assert await _found(project, ".ssh/*.pem") == [".ssh/id.pem"]
    assert glob_matches("**/*.pem", ".ssh/id.pem")
    assert glob_matches("*", ".env")
