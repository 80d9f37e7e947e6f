"""Searches and listings that cannot escape: every entry judged, no link followed out, no pattern expanded out.

The tree: a project holding ``.env`` (the default rules ask before reading it), ``secrets/key.txt`` (denied), a
link ``link -> ../outside`` and a linked file ``leak.txt -> ../outside/secret.txt``; next to it ``outside/`` with
``secret.txt``. Each secret's text is a marker that must never come back, and neither must the names that lead to
what is denied or outside. Each escape test here fails on the search tools that walked with :mod:`glob` and
judged only the base directory; the others pin what must keep working (names of files the rules ask about, links
that stay inside the project).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from hive_core import Agent
from hive_core import collect_turn
from hive_core.approvals import PathJudge
from hive_core.builtin_tools import BUILTIN_TOOLS
from hive_core.builtin_tools import glob_files
from hive_core.builtin_tools import grep_files
from hive_core.builtin_tools import list_directory
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.testing import ScriptedChatClient
from hive_core.testing import call
from hive_core.testing import reply
from hive_core.tools import Tool
from hive_core.tools import ToolContext
from hive_protocol import ToolEndEvent

pytestmark = pytest.mark.anyio

ENV_MARKER = "ENV-MARKER-5b1d"
KEY_MARKER = "KEY-MARKER-77ce"
OUTSIDE_MARKER = "OUTSIDE-MARKER-a93f"
MARKERS = (ENV_MARKER, KEY_MARKER, OUTSIDE_MARKER)


@dataclass
class Tree:
    """The project, the directory beside it, and the default policy over the project."""

    root: Path
    outside: Path
    policy: PermissionPolicy

    def context(self, tool: Tool, judge: PathJudge | None) -> ToolContext:
        return ToolContext("c1", tool.name, self.root, lambda event: None, path_judge=judge)

    async def run(self, tool: Tool, *, judge: PathJudge | str | None = "policy", **arguments: Any) -> str:
        """What the model reads from ``tool`` (judged by the default policy unless told otherwise)."""
        chosen = self.policy if judge == "policy" else judge
        assert not isinstance(chosen, str)
        outcome = await tool.invoke(arguments, self.context(tool, chosen))
        assert outcome.success, outcome.content
        return outcome.content

    async def fails(self, tool: Tool, arguments: dict[str, Any], judge: PathJudge | None = None) -> str:
        """The message of the error ``tool`` stops with (no policy unless told otherwise)."""
        with pytest.raises((PermissionError, ValueError)) as raised:
            await tool.invoke(arguments, self.context(tool, judge))
        return str(raised.value)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return build_tree(tmp_path)


def build_tree(tmp_path: Path) -> Tree:
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    (root / "secrets").mkdir()
    outside.mkdir()
    (root / "src" / "app.py").write_text("needle = 1\n")
    (root / "notes.txt").write_text("needle in the notes\n")
    (root / ".env").write_text(f"TOKEN={ENV_MARKER} needle\n")
    (root / "secrets" / "key.txt").write_text(f"{KEY_MARKER} needle\n")
    (outside / "secret.txt").write_text(f"{OUTSIDE_MARKER} needle\n")
    (root / "link").symlink_to("../outside", target_is_directory=True)
    (root / "leak.txt").symlink_to("../outside/secret.txt")
    return Tree(root, outside, PermissionPolicy(PermissionRules.default(), root))


def assert_clean(reply: str, *, names: tuple[str, ...] = ("secret.txt", "key.txt", "leak.txt")) -> None:
    for secret in (*MARKERS, *names):
        assert secret not in reply, f"{secret!r} came back:\n{reply}"


# -- grep_files -------------------------------------------------------------------------------------------------


async def test_grep_reads_only_what_the_rules_allow_and_says_what_it_held_back(tree: Tree) -> None:
    reply = await tree.run(grep_files, pattern="needle", file_pattern="**/*")
    assert_clean(reply, names=("key.txt",))
    assert "notes.txt:\n  1: needle in the notes" in reply
    assert "src/app.py:\n  1: needle = 1" in reply
    # .env is hidden, so "**/*" never matched it; spelled, it is named (not read), and the denied file is counted.
    reply = await tree.run(grep_files, pattern="needle", file_pattern="**/{.env,*.txt}")
    assert_clean(reply, names=("key.txt",))
    assert "not searched: 1 file the permission rules ask about before reading (.env)" in reply
    assert "read_file asks for approval" in reply
    assert "(not searched: 1 entry the permission rules deny)" in reply
    assert "(skipped: 2 symbolic links leading outside the project)" in reply


async def test_grep_of_the_default_files_never_follows_a_link_out(tree: Tree) -> None:
    reply = await tree.run(grep_files, pattern=OUTSIDE_MARKER)
    assert reply.startswith(f"No matches for {OUTSIDE_MARKER!r} in 2 files searched")
    assert "(skipped: 2 symbolic links leading outside the project)" in reply
    assert "leak.txt" not in reply


@pytest.mark.parametrize(
    "file_pattern",
    ["{..,x}/outside/*", "../outside/*", "link/*", "link/**/*", "**/secret.txt", "*/../outside/*"],
)
async def test_grep_file_patterns_cannot_reach_outside(tree: Tree, file_pattern: str) -> None:
    try:
        reply = await tree.run(grep_files, pattern="needle", file_pattern=file_pattern)
    except ValueError as error:  # `..` after a wildcard is refused outright
        reply = str(error)
        assert "after a wildcard" in reply
    assert_clean(reply, names=())


async def test_grep_with_an_absolute_file_pattern_reads_nothing_outside(tree: Tree) -> None:
    reply = await tree.run(grep_files, pattern="needle", file_pattern=f"{tree.outside}/*")
    assert_clean(reply, names=())
    assert f"({tree.outside}/secret.txt)" in reply  # named as a file to ask for, never read
    assert "0 files searched" in reply


async def test_grep_of_one_linked_or_asked_file_reads_it_only_when_allowed(tree: Tree) -> None:
    for path in ("leak.txt", ".env", "../outside/secret.txt", str(tree.outside / "secret.txt")):
        reply = await tree.run(grep_files, pattern="needle", path=path)
        assert_clean(reply, names=())
        assert "0 files searched" in reply


async def test_grep_of_a_denied_file_or_directory_fails(tree: Tree) -> None:
    for path in ("secrets", "secrets/key.txt"):
        text = await tree.fails(grep_files, {"pattern": "needle", "path": path}, tree.policy)
        assert "not allowed" in text
        assert KEY_MARKER not in text


async def test_without_a_policy_nothing_outside_the_working_directory_is_read(tree: Tree) -> None:
    # No rules: the project is readable (the .env too), nothing beyond it is, whatever the spelling.
    reply = await tree.run(grep_files, judge=None, pattern="needle", file_pattern="**/{.env,*.txt}")
    assert ENV_MARKER in reply
    assert KEY_MARKER in reply
    assert OUTSIDE_MARKER not in reply
    for arguments in (
        {"path": "../outside"},
        {"path": "link"},
        {"path": "leak.txt"},
        {"file_pattern": "{..,x}/outside/*"},
        {"file_pattern": f"{tree.outside}/*"},
    ):
        text = await tree.fails(grep_files, {"pattern": "needle", **arguments})
        assert OUTSIDE_MARKER not in text
        assert "outside the working directory" in text


# -- glob_files -------------------------------------------------------------------------------------------------


async def test_glob_lists_neither_denied_files_nor_links_out(tree: Tree) -> None:
    reply = await tree.run(glob_files, pattern="**/*")
    assert reply.splitlines()[:3] == ["Found 2 files matching '**/*':", "  notes.txt", "  src/app.py"]
    assert_clean(reply)
    assert "(not listed: 1 entry the permission rules deny)" in reply
    assert "(skipped: 2 symbolic links leading outside the project)" in reply


async def test_glob_lists_the_names_of_files_the_rules_ask_about(tree: Tree) -> None:
    assert await tree.run(glob_files, pattern=".env*") == "Found 1 file matching '.env*':\n  .env"


@pytest.mark.parametrize(
    "pattern", ["{..,x}/outside/*", "../outside/*", "link/*", "link/**/*", "*/secret.txt", "**/secret.txt"]
)
async def test_glob_without_a_policy_lists_nothing_outside(tree: Tree, pattern: str) -> None:
    try:
        reply = await tree.run(glob_files, judge=None, pattern=pattern)
    except PermissionError as error:  # a base outside the working directory
        reply = str(error)
        assert "outside the working directory" in reply
    assert [line for line in reply.splitlines()[1:] if "secret" in line] == []


async def test_glob_of_an_absolute_pattern_is_judged_outside(tree: Tree) -> None:
    for pattern in (f"{tree.outside}/*", "/*", "/*/*"):
        text = await tree.fails(glob_files, {"pattern": pattern})
        assert "outside the working directory" in text
    rules = msgspec.structs.replace(
        PermissionRules.default(), external_directory=(PermissionRule(pattern="**", action="deny"),)
    )
    strict = PermissionPolicy(rules, tree.root)
    text = await tree.fails(glob_files, {"pattern": f"{tree.outside}/*"}, strict)
    assert "secret.txt" not in text


async def test_dot_dot_after_a_wildcard_is_refused(tree: Tree) -> None:
    text = await tree.fails(glob_files, {"pattern": "*/../../outside/*"}, tree.policy)
    assert "climbs out with '..' after a wildcard" in text


async def test_links_inside_the_project_are_followed_and_loops_end(tree: Tree) -> None:
    (tree.root / "alias").symlink_to("src", target_is_directory=True)
    (tree.root / "src" / "back").symlink_to("..", target_is_directory=True)
    reply = await tree.run(glob_files, pattern="**/app.py")
    assert reply.splitlines()[:3] == ["Found 2 files matching '**/app.py':", "  alias/app.py", "  src/app.py"]
    # A link into a denied directory is judged where it leads.
    (tree.root / "hidden_keys").symlink_to("secrets", target_is_directory=True)
    assert "key.txt" not in await tree.fails(glob_files, {"pattern": "hidden_keys/*"}, tree.policy)


# -- list_directory ---------------------------------------------------------------------------------------------


async def test_listing_hides_denied_entries_and_links_out(tree: Tree) -> None:
    listing = await tree.run(list_directory)
    assert listing.splitlines() == [
        "[DIR]  src/",
        "[FILE] .env (29 B)",
        "[FILE] notes.txt (20 B)",
        "(not listed: 1 entry the permission rules deny)",
        "(skipped: 2 symbolic links leading outside the project)",
    ]
    recursive = await tree.run(list_directory, recursive=True)
    assert "secrets" not in recursive
    assert_clean(recursive)
    assert "[FILE] src/app.py" in recursive


async def test_listing_without_a_policy_stays_inside(tree: Tree) -> None:
    listing = await tree.run(list_directory, judge=None, recursive=True)
    assert "secrets/key.txt" in listing  # no rules, no deny
    assert "[DIR]  link/" not in listing
    assert "leak.txt" not in listing
    assert "(skipped: 2 symbolic links leading outside the project)" in listing
    for path in ("link", "../outside", str(tree.outside)):
        text = await tree.fails(list_directory, {"path": path})
        assert "secret.txt" not in text


# -- through the agent -----------------------------------------------------------------------------------------


async def test_the_agents_policy_reaches_the_search_tools(tree: Tree) -> None:
    client = ScriptedChatClient(
        [
            call(("grep_files", {"pattern": "needle", "file_pattern": "**/{.env,*.txt}"})),
            call(("list_directory", {"recursive": True})),
            reply("Done."),
        ]
    )
    agent = Agent(client, tools=BUILTIN_TOOLS, policy=tree.policy, working_dir=tree.root)
    events = await collect_turn(agent.session(), "find the needle")
    ends = [event for event in events if isinstance(event, ToolEndEvent)]
    assert [(end.tool, end.success) for end in ends] == [("grep_files", True), ("list_directory", True)]
    outputs = "\n".join(end.output or "" for end in ends)
    assert "needle in the notes" in outputs
    assert_clean(outputs)
    assert "(.env)" in outputs


# -- the policy judges every brace variant ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("glob_files", {"pattern": "{..,x}/outside/*"}),
        ("glob_files", {"pattern": "{src,{x,..}}/outside/*"}),
        ("glob_files", {"pattern": "/*"}),
        ("glob_files", {"pattern": "link/*"}),
        ("grep_files", {"pattern": "x", "file_pattern": "{..,x}/outside/*"}),
        ("grep_files", {"pattern": "x", "file_pattern": "{src,secrets}/*"}),
        ("grep_files", {"pattern": "x", "path": "../outside"}),
        ("list_directory", {"path": "../outside"}),
        ("list_directory", {"path": "link"}),
    ],
)
def test_the_policy_does_not_allow_an_escaping_listing(
    tree: Tree, tool: str, arguments: dict[str, Any]
) -> None:
    assert tree.policy.evaluate(tool, arguments).action != "allow"


def test_the_policy_denies_a_pattern_with_too_many_variants(tree: Tree) -> None:
    verdict = tree.policy.evaluate("glob_files", {"pattern": "{a,b}" * 10})
    assert verdict.action == "deny"
    assert "more than 256" in verdict.reason


def test_a_denied_directory_is_judged_as_a_directory(tree: Tree) -> None:
    assert tree.policy.judge_path("read", "secrets").action == "deny"
    assert tree.policy.judge_path("read", "src").action == "allow"


# -- any pattern, any base ----------------------------------------------------------------------------------------

SEGMENTS = [
    "..",
    ".",
    "outside",
    "link",
    "secrets",
    "src",
    ".env",
    "leak.txt",
    "secret.txt",
    "key.txt",
    "*",
    "**",
    "?*",
    "*.txt",
    ".*",
    "[ls]*",
    "{..,x}",
    "{link,src}",
    "{secrets,.}",
]
BASES = [".", "src", "link", "..", "../outside", "leak.txt", "secrets"]


@pytest.fixture(scope="module")
def fixed_tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    """The tree of :func:`tree`, built once: the property test below only reads it."""
    # Four levels down, so that no pattern of four segments climbs out of this test's own directory.
    deep = tmp_path_factory.mktemp("escape") / "a" / "b" / "c"
    deep.mkdir(parents=True)
    return build_tree(deep)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    body = "/".join(draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4)))
    lead = draw(st.sampled_from(["", "", "{OUTSIDE}/"]))
    return lead + body


def listed(reply: str) -> list[str]:
    """The paths a glob or grep reply names as found (not the pattern it echoes, nor its notes)."""
    return [
        line.strip().removesuffix(":")
        for line in reply.splitlines()[1:]
        if line and not line.startswith(("(", "  1"))
    ]


@settings(max_examples=200, deadline=None)
@given(pattern=patterns(), base=st.sampled_from(BASES), judged=st.booleans())
def test_no_pattern_reaches_a_secret_and_an_allowed_call_stays_inside(
    fixed_tree: Tree, pattern: str, base: str, judged: bool
) -> None:
    pattern = pattern.replace("{OUTSIDE}", str(fixed_tree.outside))
    judge = fixed_tree.policy if judged else None
    for tool, arguments in (
        (glob_files, {"pattern": pattern, "path": base}),
        (grep_files, {"pattern": "needle", "file_pattern": pattern, "path": base}),
    ):
        context = fixed_tree.context(tool, judge)
        try:
            reply: str = tool.function(context, **arguments)
        except (PermissionError, ValueError, FileNotFoundError, NotADirectoryError):
            continue
        if judged:
            assert_clean(reply, names=())
        assert OUTSIDE_MARKER not in reply
        names = listed(reply)
        if judged:  # the denied file is never listed from inside the project
            assert [name for name in names if "key.txt" in name and not name.startswith(("..", "/"))] == []
        # A call the policy lets run unasked (and any call without a policy) names nothing outside the project;
        # one it asks about may, once approved, list the names of outside files the rules ask about.
        if judge is None or fixed_tree.policy.evaluate(tool.name, arguments).action == "allow":
            start = os.path.realpath(fixed_tree.root / base)
            project = str(fixed_tree.root)
            reached = [os.path.realpath(os.path.join(start, name)) for name in names]
            assert [path for path in reached if os.path.commonpath([project, path]) != project] == [], reply
