"""Search and listing skip what the project ignores (.gitignore at every level, .ignore, .git/info/exclude), name
what they skipped, include it on request, and still judge what they include; results come nearest first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest

from hive_core.builtin_tools import glob_files
from hive_core.builtin_tools import grep_files
from hive_core.builtin_tools import list_directory
from hive_core.builtin_tools._ignores import global_excludes_file
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.tools import ToolContext

if TYPE_CHECKING:
    from .conftest import Project

pytestmark = pytest.mark.anyio


@pytest.fixture
def ignoring(project: Project) -> Project:
    project.write(".git/info/exclude", "scratch.txt\n")
    project.write(".gitignore", "node_modules/\n/build/\n*.log\n!keep.log\n")
    project.write(".ignore", "fixtures/big.txt\n")
    project.write("src/app.py", "needle\n")
    project.write("src/.gitignore", "generated/\n")
    project.write("src/generated/out.py", "needle\n")
    project.write("src/sub/deep.py", "needle\n")
    project.write("node_modules/lib/index.js", "needle\n")
    project.write("build/out.txt", "needle\n")
    project.write("docs/build/page.txt", "needle\n")  # /build/ is anchored at the top: this one stays
    project.write("debug.log", "needle\n")
    project.write("keep.log", "needle\n")
    project.write("scratch.txt", "needle\n")
    project.write("fixtures/big.txt", "needle\n")
    project.write("fixtures/small.txt", "needle\n")
    return project


_SHOWN = ["docs/build/page.txt", "fixtures/small.txt", "keep.log", "src/app.py", "src/sub/deep.py"]
_IGNORED = [
    "build/out.txt",
    "debug.log",
    "fixtures/big.txt",
    "node_modules/lib/index.js",
    "scratch.txt",
    "src/generated/out.py",
]


def _listed(reply: str) -> list[str]:
    return sorted(line.strip() for line in reply.splitlines() if line.startswith("  ") and "..." not in line)


def _searched(reply: str) -> list[str]:
    return sorted(
        line[:-1] for line in reply.splitlines() if line.endswith(":") and not line.startswith("Found")
    )


async def test_glob_skips_ignored_files_and_names_them(ignoring: Project) -> None:
    reply = await ignoring.call(glob_files, pattern="**/*")
    assert _listed(reply) == _SHOWN
    assert reply.splitlines()[-1] == (
        "(not listed: 6 entries the project ignores in .gitignore or .ignore (build/, debug.log, "
        "fixtures/big.txt, node_modules/, scratch.txt, src/generated/); set include_ignored to true to include them)"
    )
    everything = await ignoring.call(glob_files, pattern="**/*", include_ignored=True)
    assert _listed(everything) == sorted(_SHOWN + _IGNORED)
    assert "ignores" not in everything


async def test_grep_skips_ignored_files(ignoring: Project) -> None:
    reply = await ignoring.call(grep_files, pattern="needle")
    assert _searched(reply) == _SHOWN
    assert "node_modules/" in reply.splitlines()[-1]
    assert "include_ignored" in reply.splitlines()[-1]
    everything = await ignoring.call(grep_files, pattern="needle", include_ignored=True)
    assert _searched(everything) == sorted(_SHOWN + _IGNORED)


async def test_listing_skips_ignored_entries(ignoring: Project) -> None:
    listing = await ignoring.call(list_directory)
    names = [line.split()[1] for line in listing.splitlines() if line.startswith("[")]
    assert names == [".git/", "docs/", "fixtures/", "src/", ".gitignore", ".ignore", "keep.log"]
    assert listing.splitlines()[-1].startswith("(not listed: 4 entries the project ignores")
    recursive = await ignoring.call(list_directory, recursive=True)
    assert "[DIR]  src/generated/" not in recursive
    assert "[FILE] src/sub/deep.py" in recursive
    assert "[FILE] node_modules/lib/index.js" not in recursive
    full = await ignoring.call(list_directory, recursive=True, include_ignored=True)
    assert "[FILE] node_modules/lib/index.js" in full
    assert "[FILE] src/generated/out.py" in full


async def test_a_path_naming_an_ignored_place_is_searched(ignoring: Project) -> None:
    assert _listed(await ignoring.call(glob_files, pattern="build/*.txt")) == ["build/out.txt"]
    assert _listed(await ignoring.call(glob_files, pattern="*", path="node_modules/lib")) == ["index.js"]
    assert _searched(await ignoring.call(grep_files, pattern="needle", path="src/generated")) == ["out.py"]
    single = await ignoring.call(grep_files, pattern="needle", path="debug.log")
    assert single == "Found 1 match in 1 file:\n\ndebug.log:\n  1: needle"
    listing = await ignoring.call(list_directory, path="node_modules")
    assert listing == "[DIR]  lib/"


async def test_a_deeper_ignore_file_overrides_a_shallower_one(project: Project) -> None:
    project.write(".gitignore", "*.txt\n")
    project.write("keep/.gitignore", "!*.txt\n")
    project.write("a.txt", "")
    project.write("keep/b.txt", "")
    assert _listed(await project.call(glob_files, pattern="**/*.txt")) == ["keep/b.txt"]


async def test_without_git_the_project_root_still_counts(project: Project) -> None:
    project.write(".ignore", "out/\n")
    project.write("out/x.py", "")
    project.write("src/y.py", "")
    reply = await project.call(glob_files, pattern="**/*.py", path="src")
    assert _listed(reply) == ["y.py"]
    assert _listed(await project.call(glob_files, pattern="**/*.py")) == ["src/y.py"]


async def test_included_ignored_files_are_still_judged(ignoring: Project) -> None:
    rules = msgspec.structs.replace(
        PermissionRules.default(),
        read=(
            PermissionRule(pattern="node_modules/**", action="deny"),
            PermissionRule(pattern="build/**", action="ask"),
            PermissionRule(pattern="**", action="allow"),
        ),
    )
    policy = PermissionPolicy(rules, ignoring.root)
    context = ToolContext("c1", "grep_files", ignoring.root, lambda event: None, path_judge=policy)
    reply = grep_files.function(context, "needle", include_ignored=True)
    searched = _searched(reply)
    assert "node_modules/lib/index.js" not in searched
    assert "build/out.txt" not in searched
    assert "src/generated/out.py" in searched
    assert "(build/out.txt); read_file asks" in reply
    assert "the permission rules deny" in reply
    # Ignored and denied: counted as denied, never named as ignored.
    plain = grep_files.function(context, "needle")
    assert "node_modules" not in plain
    assert "build/" in plain.splitlines()[-1]


async def test_results_come_nearest_first_and_most_matches_first(project: Project) -> None:
    project.write("a/b/c/deep.py", "x\n")
    project.write("z.py", "x\n")
    project.write("m/mid.py", "x\nx\nx\n")
    project.write("a/top.py", "x\n")
    assert [
        line.strip() for line in (await project.call(glob_files, pattern="**/*.py")).splitlines()[1:]
    ] == [
        "z.py",
        "a/top.py",
        "m/mid.py",
        "a/b/c/deep.py",
    ]
    reply = await project.call(grep_files, pattern="x")
    assert [line for line in reply.splitlines() if line.endswith(".py:")] == [
        "m/mid.py:",
        "z.py:",
        "a/top.py:",
        "a/b/c/deep.py:",
    ]


async def test_search_stops_at_nearer_files_first(project: Project) -> None:
    # With more matching files than are shown, the shallow ones are the ones kept.
    for n in range(60):
        project.write(f"deep/er/f{n:02}.txt", "x\n")
    project.write("near.txt", "x\n")
    reply = await project.call(grep_files, pattern="x")
    assert "near.txt:" in reply


def test_ignore_files_are_read_once_per_directory(tmp_path: Path) -> None:
    from hive_core.builtin_tools._ignores import Ignores

    (tmp_path / ".gitignore").write_text("*.tmp\n")
    ignores = Ignores(str(tmp_path))
    assert ignores.ignored(os.path.join(tmp_path, "a", "x.tmp"), is_dir=False)
    os.remove(tmp_path / ".gitignore")
    assert ignores.ignored(os.path.join(tmp_path, "a", "y.tmp"), is_dir=False)
    assert not ignores.ignored(os.path.join(tmp_path, "a", "y.txt"), is_dir=False)


@pytest.mark.parametrize(
    "path",
    [
        "a.log",
        "keep.log",
        "x/keep.log",
        "build/",
        "x/build/",
        "build",
        "top",
        "x/top",
        "doc/a.md",
        "doc/b/c.md",
        "deep/x/y/z.tmp",
        "other.txt",
        "[x].txt",
        "node_modules/",
    ],
)
def test_the_quick_check_agrees_with_pathspec(tmp_path: Path, path: str) -> None:
    from pathspec import GitIgnoreSpec

    from hive_core.builtin_tools._ignores import Ignores

    lines = ["*.log", "!keep.log", "build/", "/top", "doc/**/*.md", "**/z.tmp", "\\[x\\].txt", "# note", ""]
    (tmp_path / ".gitignore").write_text("\n".join(lines))
    expected = bool(GitIgnoreSpec.from_lines(lines).check_file(path).include)
    is_dir = path.endswith("/")
    assert Ignores(str(tmp_path)).ignored(os.path.join(tmp_path, path.rstrip("/")), is_dir=is_dir) is expected


async def test_the_users_global_git_excludes_apply_inside_a_repository(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitignore_global").write_text("*.swp\n.idea/\n", encoding="utf-8")
    (home / ".gitconfig").write_text(
        '[user]\n\tname = A\n[core]\n\teditor = vi\n\texcludesFile = "~/.gitignore_global"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    project.write(".git/HEAD", "ref: refs/heads/main\n")
    project.write(".gitignore", "!keep.swp\n")  # the project's own files come after the global one
    for name in ("a.py", "a.py.swp", "keep.swp", ".idea/workspace.xml"):
        project.write(name, "needle\n")
    reply = await project.call(glob_files, pattern="**/*")
    assert _listed(reply) == ["a.py", "keep.swp"]
    assert "a.py.swp" in reply  # named as skipped
    assert _listed(await project.call(glob_files, pattern="**/*", include_ignored=True)) == [
        "a.py",
        "a.py.swp",
        "keep.swp",
    ]


def test_the_global_excludes_file_is_found_as_git_finds_it(tmp_path: Path) -> None:
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}
    assert global_excludes_file(env) == str(xdg / "git" / "ignore")  # the default
    (xdg / "git" / "config").write_text("[core]\n  excludesfile = /from/xdg\n", encoding="utf-8")
    assert global_excludes_file(env) == "/from/xdg"
    (home / ".gitconfig").write_text("[Core]\n  ExcludesFile = ~/from-home ; a comment\n", encoding="utf-8")
    assert global_excludes_file(env) == str(home / "from-home")  # ~/.gitconfig after the XDG file; no comment
    (tmp_path / "only").write_text("[core]\nexcludesFile = /only\n", encoding="utf-8")
    assert global_excludes_file({**env, "GIT_CONFIG_GLOBAL": str(tmp_path / "only")}) == "/only"


async def test_a_project_inside_a_larger_repository_follows_the_repositorys_ignore_files(
    tmp_path: Path,
) -> None:
    from .conftest import Project

    repository = tmp_path / "monorepo"
    (repository / ".git" / "info").mkdir(parents=True)
    (repository / ".git" / "info" / "exclude").write_text("*.tmp\n", encoding="utf-8")
    (repository / ".gitignore").write_text("node_modules/\n/app/dist/\n", encoding="utf-8")
    app = Project(repository / "app")
    for name in ("src/main.ts", "node_modules/x/index.js", "dist/bundle.js", "notes.tmp"):
        app.write(name, "needle\n")
    assert _listed(await app.call(glob_files, pattern="**/*")) == ["src/main.ts"]
    assert _searched(await app.call(grep_files, pattern="needle")) == ["src/main.ts"]
