"""The rule glob language: what `**`, `*`, `?`, brackets and braces match for paths, commands and tool names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hive_core.permissions import compile_glob
from hive_core.permissions import glob_matches
from hive_core.permissions.glob import path_pattern_problem


@pytest.mark.parametrize(
    ("pattern", "target", "expected"),
    [
        ("**/*", "README.md", True),  # the '/' after '**' is swallowed, so top-level names match
        ("**/*", "a/b/c.txt", True),
        ("src/**/*", "src/a.py", True),
        ("src/**/*", "src/pkg/deep/a.py", True),
        ("src/**/*", "lib/a.py", False),
        ("*.json", "package.json", True),
        ("*.json", "conf/package.json", False),  # '*' stays inside one segment
        ("a\\*b.md", "a*b.md", True),  # a backslash escapes
        ("a\\*b.md", "axb.md", False),
        ("**/secrets/**", "secrets/key", True),
        ("**/secrets/**", "a/b/secrets/c/key", True),
        ("**/secrets/**", "secrets", False),
        ("?.txt", "a.txt", True),
        ("?.txt", "ab.txt", False),
        ("a?b", "a/b", False),
        ("a+b(1).txt", "a+b(1).txt", True),  # regex characters are literal
        ("a+b(1).txt", "aab(1).txt", False),
        ("[x].md", "[x].md", True),  # brackets are a set, and also match themselves spelled literally
        ("[x].md", "x.md", True),
        ("[ab].md", "c.md", False),
        ("[!a].md", "b.md", True),
        ("pages/[id]/*.tsx", "pages/[id]/page.tsx", True),
        ("*.{js,ts}", "app.ts", True),  # braces expand
        ("*.{js,ts}", "app.py", False),
        ("f{1..3}.txt", "f2.txt", True),
        ("**/*.pem", ".ssh/id.pem", True),  # wildcards match dot names in rules
        ("**/*", ".", True),  # ... and the project root itself
        ("src/**", ".", False),
        ("SRC/*.PY", "src/main.py", True),  # paths ignore case
        ("**", "line\nbreak/secret", True),  # a newline in a name does not stop '**'
    ],
)
def test_path_patterns(pattern: str, target: str, expected: bool) -> None:
    assert glob_matches(pattern, target, "path") is expected


@pytest.mark.parametrize(
    ("pattern", "target", "expected"),
    [
        ("git *", "git push origin/main", True),  # '*' crosses '/' in commands (upstream's did not)
        ("git *", "git status", True),
        ("git *", "gitk", False),
        ("git *", "GIT status", True),
        ("curl * | *sh*", "curl -s https://x.test/a.sh | bash", True),
        ("npm ?un test", "npm run test", True),
        ("echo *", "echo a\nb", True),
    ],
)
def test_command_patterns(pattern: str, target: str, expected: bool) -> None:
    assert glob_matches(pattern, target, "command") is expected


@pytest.mark.parametrize(
    ("pattern", "target", "expected"),
    [
        ("*_list", "mcp__github__issue_list", True),
        ("mcp__github__*", "mcp__github__issue_list", True),
        ("read_file", "read_file", True),
        ("read_file", "ReadFile", False),  # one spelling: no PascalCase alias
        ("read_file", "READ_FILE", False),
        ("glob*", "glob_files", True),
    ],
)
def test_name_patterns(pattern: str, target: str, expected: bool) -> None:
    assert glob_matches(pattern, target, "name") is expected


def test_patterns_are_anchored() -> None:
    assert not glob_matches("src", "src/main.py")
    assert not glob_matches("main.py", "src/main.py")
    assert compile_glob("a*") is compile_glob("a*")  # compiled once


def test_a_globstar_inside_a_segment_is_refused_for_rules() -> None:
    assert path_pattern_problem("**/*.pem") is None
    assert path_pattern_problem("{src,lib}/**") is None
    for loose in ("**.pem", "src**", "a/**b/c", "{**.pem,x}"):
        problem = path_pattern_problem(loose)
        assert problem is not None
        assert "whole segment" in problem


@given(st.text(alphabet=st.characters(blacklist_characters="*?{}\\"), min_size=1))
def test_a_pattern_without_wildcards_matches_exactly_itself(text: str) -> None:
    assert glob_matches(text, text, "path")
    assert glob_matches(text, text, "command")
    assert not glob_matches(text, text + "x", "path")


@given(
    st.text(alphabet="ab/", max_size=8).filter(lambda s: "/" in s.rstrip("/")),  # "a/" is the directory a
)
def test_a_single_star_never_crosses_a_separator_in_paths(target: str) -> None:
    assert not glob_matches("*", target, "path")
    assert glob_matches("**", target, "path")
    assert glob_matches("*", target, "command")
