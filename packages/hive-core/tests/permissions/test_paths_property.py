"""Property: no path that leads outside the project is ever judged by the read or edit rules.

Paths are generated from `..`, `.`, symbolic links (into the project, out of it, to the root, to the parent),
absolute prefixes, case changes and both separators. Whether a path leads outside is decided by the kernel
(``os.stat`` and inode numbers of the project tree), independently of how the policy resolves paths.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules


class Tree:
    """A project with links pointing every which way, plus look-alike siblings outside it."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "project"
        (self.root / "sub" / "deeper").mkdir(parents=True)
        (self.root / "sub" / "inner.txt").write_text("in")
        (base / "outside").mkdir()
        (base / "outside" / "data.txt").write_text("out")
        (base / "project2").mkdir()  # shares the project's name as a prefix
        if not (base / "PROJECT").exists():  # a case-sensitive file system: a different, outside directory
            (base / "PROJECT").mkdir()
        links = {
            "link_out": base / "outside",
            "link_in": self.root / "sub",
            "link_up": base,
            "link_root": Path("/"),
            "link_file_out": base / "outside" / "data.txt",
        }
        for name, target in links.items():
            (self.root / name).symlink_to(target, target_is_directory=target.is_dir())
        (self.root / "sub" / "back_out").symlink_to(Path("..") / ".." / "outside", target_is_directory=True)
        self.inside = self._inside_inodes()

    def _inside_inodes(self) -> set[tuple[int, int]]:
        found: set[tuple[int, int]] = set()
        for directory, dirs, files in os.walk(self.root, followlinks=False):
            for name in [".", *dirs, *files]:
                info = os.lstat(os.path.join(directory, name))
                found.add((info.st_dev, info.st_ino))
        return found

    def leads_outside(self, path: str) -> bool | None:
        """Whether a tool in the project opening ``path`` touches something outside; None if the kernel cannot say."""
        full = os.path.join(self.root, path)
        try:
            info = os.stat(full)
        except OSError:
            head, tail = os.path.split(full)
            if tail in ("", ".", "..") or os.path.islink(full):
                return None
            try:
                info = os.stat(head)  # a new file would be created in this directory
            except OSError:
                return None
        return (info.st_dev, info.st_ino) not in self.inside


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    try:
        return Tree(tmp_path_factory.mktemp("tree"))
    except OSError as error:  # pragma: no cover - platforms without symlink rights
        pytest.skip(f"cannot create symbolic links here: {error}")


def marked(name: str) -> tuple[PermissionRule, ...]:
    return (PermissionRule(pattern="**", action="allow", reason=name),)


RULES = PermissionRules(
    read=marked("READ"),
    edit=marked("EDIT"),
    external_directory=(PermissionRule(pattern="**", action="ask", reason="EXTERNAL"),),
    tools=(PermissionRule(pattern="*", action="allow", reason="TOOLS"),),
    ask_before_delete=False,
    default_action="deny",
)

SEGMENTS = [
    *("..", ".", "", "...", "..\\..", "sub\\.."),  # climbing, and names that only look like it on POSIX
    *("sub", "SUB", "Sub", "deeper", "inner.txt", "data.txt", "new.txt", "tmp", "etc"),
    *("outside", "OUTSIDE", "project", "PROJECT", "Project", "project2"),
    *("link_out", "LINK_OUT", "link_in", "link_up", "link_root", "link_file_out", "back_out"),
]


@st.composite
def paths(draw: st.DrawFn, tree: Tree) -> str:
    parts = draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=7))
    separators = draw(
        st.lists(st.sampled_from(["/", "\\", "//", "/./"]), min_size=len(parts), max_size=len(parts))
    )
    text = "".join(part + separator for part, separator in zip(parts, separators, strict=True))
    text = text if draw(st.booleans()) else text.rstrip("/\\")
    prefix = draw(
        st.sampled_from(
            [
                "",
                "",
                "",
                str(tree.root) + "/",
                str(tree.base) + "/",
                "/",
                str(tree.root).upper() + "/",
                str(tree.root).swapcase() + "/",
                str(tree.root) + "\\",
                str(tree.root / "link_out") + "/",
            ]
        )
    )
    return prefix + text or "."


def judged_by(policy: PermissionPolicy, tool: str, arguments: dict[str, Any]) -> str:
    verdict = policy.evaluate(tool, arguments)
    return verdict.reason.split(" ", 1)[0]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_outside_paths_are_never_judged_by_read_or_edit_rules(tree: Tree, data: st.DataObject) -> None:
    path = data.draw(paths(tree))
    outside = tree.leads_outside(path)
    policy = PermissionPolicy(RULES, tree.root)
    expected_read, expected_edit = ("EXTERNAL", "EXTERNAL") if outside else ("READ", "EDIT")
    judged = {
        "read_file": judged_by(policy, "read_file", {"path": path}),
        "write_file": judged_by(policy, "write_file", {"path": path, "content": ""}),
        "delete_file": judged_by(policy, "delete_file", {"path": path}),
        "move_file source": judged_by(policy, "move_file", {"source": path, "destination": "sub/new.txt"}),
        "move_file destination": judged_by(
            policy, "move_file", {"source": "sub/inner.txt", "destination": path}
        ),
    }
    if outside is None:  # the kernel could not open it; still, read/edit rules may only judge what is inside
        resolved = os.path.realpath(os.path.join(tree.root, path))
        outside = os.path.commonpath([resolved, os.path.realpath(tree.root)]) != os.path.realpath(tree.root)
        expected_read, expected_edit = ("EXTERNAL", "EXTERNAL") if outside else ("READ", "EDIT")
    assert judged["read_file"] == expected_read, path
    assert judged["write_file"] == expected_edit, path
    assert judged["delete_file"] == expected_edit, path
    assert judged["move_file source"] == expected_edit, path
    # Both sides of a move are allowed inside, so an "EDIT" here means the destination was judged as inside.
    assert judged["move_file destination"] in (("EXTERNAL",) if outside else ("EDIT",)), path


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_listing_outside_the_project_is_never_judged_by_read_rules(tree: Tree, data: st.DataObject) -> None:
    path = data.draw(paths(tree))
    outside = tree.leads_outside(path)
    if outside is None:
        return
    policy = PermissionPolicy(RULES, tree.root)
    judged = judged_by(policy, "list_directory", {"path": path})
    assert judged == ("EXTERNAL" if outside else "READ"), path


def test_the_generator_reaches_both_sides(tree: Tree) -> None:
    # Guard against a vacuous property: these spellings must be told apart correctly.
    assert tree.leads_outside("link_out/data.txt") is True
    assert tree.leads_outside("sub/back_out/data.txt") is True
    assert tree.leads_outside("link_in/inner.txt") is False
    assert tree.leads_outside("sub/../sub/new.txt") is False
    assert tree.leads_outside(str(tree.base / "PROJECT" / "x")) is True
    assert tree.leads_outside("..\\..") is False  # one odd file name inside the project, on POSIX
    policy = PermissionPolicy(RULES, tree.root)
    assert judged_by(policy, "read_file", {"path": "link_out/data.txt"}) == "EXTERNAL"
    assert judged_by(policy, "read_file", {"path": "link_in/inner.txt"}) == "READ"
    assert (
        judged_by(policy, "read_file", {"path": str(tree.root).swapcase() + "/sub/inner.txt"}) == "EXTERNAL"
    )
