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


_DEPTH = ("a.py", "src/b.py", "src/deep/c.py")


@pytest.mark.parametrize(
    ("files", "pattern", "names"),
    [
        # ``*`` and ``?`` stay in one segment, ``**/`` spans any depth.
        (_DEPTH, "*.py", ["a.py"]),
        (_DEPTH, "**/*.py", ["a.py", "src/b.py", "src/deep/c.py"]),
        (_DEPTH, "src/*.py", ["src/b.py"]),
        (_DEPTH, "src/**/*.py", ["src/b.py", "src/deep/c.py"]),
        (_DEPTH, "src/?.py", ["src/b.py"]),
        # Brackets are a set and match themselves: a deny rule for Next.js's "pages/[id].tsx" must keep denying
        # that very file; a search for it must find it.
        (
            ("pages/[id].tsx", "pages/i.tsx", "pages/x.tsx"),
            "pages/[id].tsx",
            ["pages/[id].tsx", "pages/i.tsx"],
        ),
        (("app/[slug]/page.tsx",), "app/[slug]/*.tsx", ["app/[slug]/page.tsx"]),
        # Braces expand.
        (("a.js", "a.ts", "a.py"), "a.{js,ts}", ["a.js", "a.ts"]),
        (("f1.txt", "f2.txt", "f9.txt"), "f{1..3}.txt", ["f1.txt", "f2.txt"]),
        # A backslash escapes.
        (("a*b.md", "axb.md"), "a\\*b.md", ["a*b.md"]),
        # A globstar joined to a name is one star (the rules file refuses this spelling: a deny rule would silently
        # cover less than its author meant).
        (("a.pem", "keys/b.pem"), "**.pem", ["a.pem"]),
    ],
)
async def test_both_find_the_same_names(
    project: Project, files: tuple[str, ...], pattern: str, names: list[str]
) -> None:
    for name in files:
        project.write(name, "")
    assert await _found(project, pattern) == names
    assert [name for name in files if glob_matches(pattern, name)] == names


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
