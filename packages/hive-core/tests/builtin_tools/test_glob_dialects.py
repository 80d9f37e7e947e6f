"""The two glob dialects side by side: ``glob_files`` patterns and the permission rules' path patterns.

They agree on the shape of a path (``*`` and ``?`` stay in one segment, ``**/`` spans any depth, zero included),
and differ where the rules must not change meaning or must not let a spelling slip past a deny rule. Each difference
is pinned here so that merging the two (a maintained matcher such as wcmatch) is a decision, not an accident.
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
async def test_the_dialects_agree_on_segments_and_depth(
    project: Project, pattern: str, names: list[str]
) -> None:
    for name in ("a.py", "src/b.py", "src/deep/c.py"):
        project.write(name, "")
    assert await _found(project, pattern) == names
    assert [name for name in ("a.py", "src/b.py", "src/deep/c.py") if glob_matches(pattern, name)] == names


async def test_brackets_are_a_set_in_glob_files_and_literal_in_rules(project: Project) -> None:
    # A deny rule for Next.js's "pages/[id].tsx" must keep denying that very file.
    project.write("pages/[id].tsx", "")
    project.write("pages/i.tsx", "")
    assert await _found(project, "pages/[id].tsx") == ["pages/i.tsx"]
    assert glob_matches("pages/[id].tsx", "pages/[id].tsx")
    assert not glob_matches("pages/[id].tsx", "pages/i.tsx")


async def test_braces_expand_in_glob_files_and_are_literal_in_rules(project: Project) -> None:
    project.write("a.js", "")
    project.write("a.ts", "")
    assert await _found(project, "a.{js,ts}") == ["a.js", "a.ts"]
    assert not glob_matches("a.{js,ts}", "a.js")
    assert glob_matches("a.{js,ts}", "a.{js,ts}")


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
    assert glob_matches("**/*.pem", ".ssh/id.pem")
    assert glob_matches("*", ".env")
