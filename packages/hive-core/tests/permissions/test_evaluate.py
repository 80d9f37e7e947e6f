"""The policy: categories, priorities and ties, paths and links, deletes and moves, listings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import pytest
from permissions_harness import Build
from permissions_harness import rule

from hive_core.approvals import PermissionAction
from hive_core.permissions import RULE_CATEGORIES
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.permissions import resolve_path


def symlink(link: Path, target: Path) -> None:
    try:
        link.symlink_to(target, target_is_directory=target.is_dir())
    except OSError as error:  # pragma: no cover - platforms without symlink rights
        pytest.skip(f"cannot create symbolic links here: {error}")


# -- categories -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "category"),
    [
        ("read_file", {"path": "notes.txt"}, "read"),
        ("write_file", {"path": "notes.txt", "content": "x"}, "edit"),
        ("edit_file", {"path": "notes.txt", "old_text": "a", "new_text": "b"}, "edit"),
        ("delete_file", {"path": "notes.txt"}, "edit"),
        ("move_file", {"source": "notes.txt", "destination": "notes2.txt"}, "edit"),
        ("execute_command", {"command": "make test"}, "bash"),
        ("mcp__files__upload", {}, "mcp_tools"),
        ("manage_todo", {"action": "list"}, "tools"),
        ("advisor", {}, "tools"),
        ("load_skill", {"name": "pdf"}, "tools"),
    ],
)
def test_each_tool_is_judged_by_its_category(
    make_policy: Build, tool: str, arguments: dict[str, Any], category: str
) -> None:
    # Every category denies with a reason naming it; only the tool's own category may decide.
    rules = msgspec.structs.replace(
        PermissionRules(default_action="allow"),
        **{name: (rule("**", "deny", reason=f"by-{name}"),) for name in RULE_CATEGORIES},
    )
    verdict = make_policy(rules).evaluate(tool, arguments)
    assert verdict.action == "deny"
    assert verdict.reason.startswith(f"by-{category} ")


def test_mcp_tools_are_not_judged_by_tools_rules(make_policy: Build) -> None:
    policy = make_policy(tools=(rule("mcp__*", "allow"),), mcp_tools=(rule("*_delete", "deny"),))
    assert policy.evaluate("mcp__db__row_delete", {}).action == "deny"
    assert policy.evaluate("mcp__db__row_insert", {}).action == "ask"  # no mcp_tools rule: default


def test_mcp_tools_rules_match_the_full_name(make_policy: Build) -> None:
    policy = make_policy(mcp_tools=(rule("mcp__github__*", "allow"),))
    assert policy.evaluate("mcp__github__create_pr", {}).action == "allow"
    assert policy.evaluate("mcp__gitlab__create_pr", {}).action == "ask"


@pytest.mark.parametrize("default", ["allow", "deny", "ask"])
def test_unknown_tool_gets_the_default_action(make_policy: Build, default: PermissionAction) -> None:
    verdict = make_policy(default_action=default).evaluate("teleport", {"where": "mars"})
    assert verdict.action == default
    assert "teleport" in verdict.reason


def test_tool_names_have_one_spelling(make_policy: Build) -> None:
    # `ReadFile` is not `read_file`: it is an unknown tool, judged by the tools rules and the default.
    policy = make_policy(read=(rule("**", "allow"),), default_action="deny")
    assert policy.evaluate("read_file", {"path": "a.txt"}).action == "allow"
    assert policy.evaluate("ReadFile", {"path": "a.txt"}).action == "deny"
    assert policy.evaluate("READ_FILE", {"path": "a.txt"}).action == "deny"


def test_empty_tool_name_gets_the_default(make_policy: Build) -> None:
    assert make_policy(tools=(rule("*", "allow"),), default_action="deny").evaluate("", {}).action == "deny"


# -- priorities and ties --------------------------------------------------------------------------------------


def test_highest_priority_wins_whatever_the_order(make_policy: Build) -> None:
    low, high = rule("**", "allow", 1, "low"), rule("*.txt", "deny", 5, "high")
    for order in ((low, high), (high, low)):
        verdict = make_policy(read=order).evaluate("read_file", {"path": "a.txt"})
        assert (verdict.action, verdict.reason.split(" ")[0]) == ("deny", "high")


def test_equal_priority_goes_to_the_first_listed(make_policy: Build) -> None:
    first, second = rule("*.txt", "allow", 3, "first"), rule("a.*", "deny", 3, "second")
    assert make_policy(read=(first, second)).evaluate("read_file", {"path": "a.txt"}).action == "allow"
    assert make_policy(read=(second, first)).evaluate("read_file", {"path": "a.txt"}).action == "deny"


def test_a_rule_that_does_not_match_has_no_say(make_policy: Build) -> None:
    policy = make_policy(read=(rule("*.md", "deny", 100), rule("*.txt", "allow", -5)))
    assert policy.evaluate("read_file", {"path": "a.txt"}).action == "allow"
    assert policy.evaluate("read_file", {"path": "a.md"}).action == "deny"


def test_negative_priority_still_beats_no_rule(make_policy: Build) -> None:
    policy = make_policy(bash=(rule("make *", "allow", -10),), default_action="deny")
    assert policy.evaluate("execute_command", {"command": "make all"}).action == "allow"


def test_rule_action_defaults_to_ask(make_policy: Build) -> None:
    policy = make_policy(tools=(PermissionRule(pattern="deploy"),), default_action="allow")
    assert policy.evaluate("deploy", {}).action == "ask"


# -- paths ----------------------------------------------------------------------------------------------------


def test_relative_paths_resolve_dots_before_matching(make_policy: Build) -> None:
    policy = make_policy()
    assert policy.evaluate("write_file", {"path": "docs/../src/./new.py", "content": ""}).action == "allow"
    verdict = policy.evaluate("read_file", {"path": "src/../secrets/k"})
    assert verdict.action == "deny"
    assert "'secrets/k'" in verdict.reason


def test_absolute_path_inside_the_project_is_judged_as_relative(make_policy: Build, project: Path) -> None:
    verdict = make_policy().evaluate("write_file", {"path": str(project / "src" / "x.py"), "content": ""})
    assert verdict.action == "allow"
    assert "'src/x.py'" in verdict.reason


def test_path_rules_ignore_case(make_policy: Build) -> None:
    policy = make_policy(read=(rule("**", "allow"), rule("**/secrets/**", "deny", 5)))
    assert policy.evaluate("read_file", {"path": "Config/SECRETS/key"}).action == "deny"


@pytest.mark.parametrize("path", ["../outside/data.txt", "src/../../outside/data.txt", "/etc/hostname"])
def test_paths_outside_use_only_external_directory_rules(make_policy: Build, path: str) -> None:
    policy = make_policy(
        read=(rule("**", "allow"),),
        external_directory=(rule("**", "deny", reason="outside"),),
        default_action="allow",
    )
    verdict = policy.evaluate("read_file", {"path": path})
    assert verdict.action == "deny"
    assert verdict.reason.startswith("outside ")


def test_external_rules_see_the_absolute_path(make_policy: Build, outside: Path) -> None:
    policy = make_policy(external_directory=(rule(f"{outside.as_posix()}/**", "allow"),))
    assert policy.evaluate("read_file", {"path": str(outside / "data.txt")}).action == "allow"
    assert policy.evaluate("write_file", {"path": "../outside/new.txt", "content": ""}).action == "allow"
    assert policy.evaluate("read_file", {"path": "/etc/hostname"}).action == "ask"


def test_outside_path_without_external_rule_gets_the_default(make_policy: Build) -> None:
    verdict = make_policy(read=(rule("**", "allow"),), default_action="deny").evaluate(
        "read_file", {"path": "../outside/data.txt"}
    )
    assert verdict.action == "deny"
    assert "external_directory" in verdict.reason


def test_a_sibling_sharing_the_project_name_prefix_is_outside(make_policy: Build, project: Path) -> None:
    (project.parent / "project2").mkdir()
    policy = make_policy(read=(rule("**", "allow"),), default_action="deny")
    assert policy.evaluate("read_file", {"path": str(project.parent / "project2" / "a")}).action == "deny"
    assert policy.evaluate("read_file", {"path": "../project2/a"}).action == "deny"


def test_symlink_inside_pointing_outside_is_judged_as_external(
    make_policy: Build, project: Path, outside: Path
) -> None:
    symlink(project / "docs" / "shared", outside)
    policy = make_policy(
        read=(rule("**", "allow"),),
        edit=(rule("**", "allow"),),
        external_directory=(rule("**", "ask", reason="leaves the project"),),
        default_action="deny",
    )
    for tool, arguments in [
        ("read_file", {"path": "docs/shared/data.txt"}),
        ("write_file", {"path": "docs/shared/new.txt", "content": "x"}),
        (
            "edit_file",
            {"path": str(project / "docs" / "shared" / "data.txt"), "old_text": "a", "new_text": "b"},
        ),
    ]:
        verdict = policy.evaluate(tool, arguments)
        assert verdict.action == "ask", tool
        assert verdict.reason.startswith("leaves the project"), tool
        assert outside.resolve().as_posix() in verdict.reason


def test_symlinked_file_and_dangling_link_pointing_outside(
    make_policy: Build, project: Path, outside: Path
) -> None:
    symlink(project / "data.txt", outside / "data.txt")
    symlink(project / "future.txt", outside / "not-yet.txt")  # dangling: writing it creates a file outside
    policy = make_policy(edit=(rule("**", "allow"),), read=(rule("**", "allow"),), default_action="deny")
    assert policy.evaluate("read_file", {"path": "data.txt"}).action == "deny"
    assert policy.evaluate("write_file", {"path": "future.txt", "content": ""}).action == "deny"


def test_symlink_into_a_denied_directory_is_denied(make_policy: Build, project: Path) -> None:
    (project / "secrets").mkdir()
    (project / "secrets" / "key").write_text("k")
    symlink(project / "docs" / "innocent", project / "secrets")
    verdict = make_policy().evaluate("read_file", {"path": "docs/innocent/key"})
    assert verdict.action == "deny"
    assert "'secrets/key'" in verdict.reason


def test_working_dir_given_through_a_symlink(make_policy: Build, project: Path) -> None:
    alias = project.parent / "alias"
    symlink(alias, project)
    policy = make_policy(working_dir=alias)
    assert policy.working_dir == project.resolve()
    assert policy.evaluate("write_file", {"path": "src/a.py", "content": ""}).action == "allow"
    assert (
        policy.evaluate("write_file", {"path": str(project / "src" / "a.py"), "content": ""}).action
        == "allow"
    )
    assert (
        policy.evaluate("write_file", {"path": str(alias / "src" / "a.py"), "content": ""}).action == "allow"
    )


def test_external_rule_cannot_be_reached_through_a_link(
    make_policy: Build, project: Path, outside: Path
) -> None:
    # `/.../outside/**` is allowed, but a link there that leads back into a denied place is judged where it leads.
    private = project.parent / "private"
    private.mkdir()
    symlink(outside / "door", private)
    policy = make_policy(
        external_directory=(
            rule(f"{outside.as_posix()}/**", "allow"),
            rule(f"{private.as_posix()}/**", "deny"),
        ),
    )
    assert policy.evaluate("read_file", {"path": str(outside / "door" / "x")}).action == "deny"


def test_nul_in_a_path_is_refused(make_policy: Build) -> None:
    verdict = make_policy().evaluate("read_file", {"path": "src/a\0.py"})
    assert verdict.action == "deny"
    assert "NUL" in verdict.reason


@pytest.mark.parametrize("tool", ["read_file", "write_file", "delete_file"])
def test_a_path_that_is_not_text_is_refused(make_policy: Build, tool: str) -> None:
    verdict = make_policy().evaluate(tool, {"path": ["src/a.py"]})
    assert verdict.action == "deny"
    assert "'path'" in verdict.reason


def test_missing_paths(make_policy: Build) -> None:
    policy = make_policy(read=(rule("**", "deny"),), default_action="deny")
    assert policy.evaluate("read_file", {}).action == "allow"
    assert policy.evaluate("write_file", {"content": "x"}) == policy.evaluate("edit_file", {"path": ""})
    no_path_write, no_path_delete = policy.evaluate("write_file", {}), policy.evaluate("delete_file", {})
    assert (no_path_write.action, no_path_write.level) == ("ask", "medium")
    assert (no_path_delete.action, no_path_delete.level) == ("ask", "high")


# -- delete and move ------------------------------------------------------------------------------------------


def test_ask_before_delete_asks_even_where_edits_are_allowed(make_policy: Build) -> None:
    policy = make_policy(edit=(rule("**", "allow"),), ask_before_delete=True)
    assert policy.evaluate("write_file", {"path": "a.txt", "content": ""}).action == "allow"
    verdict = policy.evaluate("delete_file", {"path": "a.txt"})
    assert (verdict.action, verdict.level) == ("ask", "medium")
    assert "deleting" in verdict.reason


def test_without_ask_before_delete_the_edit_rules_decide(make_policy: Build) -> None:
    policy = make_policy(edit=(rule("**", "allow"), rule("keep/**", "deny", 1)), ask_before_delete=False)
    assert policy.evaluate("delete_file", {"path": "a.txt"}).action == "allow"
    assert policy.evaluate("delete_file", {"path": "keep/a.txt"}).action == "deny"


def test_ask_before_delete_never_softens_a_deny(make_policy: Build) -> None:
    policy = make_policy(edit=(rule("**", "deny"),), ask_before_delete=True)
    assert policy.evaluate("delete_file", {"path": "a.txt"}).action == "deny"


@pytest.mark.parametrize(
    ("source", "destination", "expected"),
    [
        ("free/a", "free/b", "allow"),
        ("free/a", "locked/b", "deny"),  # destination stricter
        ("locked/a", "free/b", "deny"),  # source stricter
        ("asked/a", "free/b", "ask"),
        ("free/a", "asked/b", "ask"),
        ("asked/a", "locked/b", "deny"),
    ],
)
def test_move_takes_the_stricter_of_source_and_destination(
    make_policy: Build, source: str, destination: str, expected: str
) -> None:
    policy = make_policy(
        edit=(rule("free/**", "allow"), rule("locked/**", "deny"), rule("asked/**", "ask")),
        ask_before_delete=False,
    )
    assert policy.evaluate("move_file", {"source": source, "destination": destination}).action == expected


def test_move_source_counts_as_a_delete(make_policy: Build) -> None:
    policy = make_policy(edit=(rule("**", "allow"),), ask_before_delete=True)
    verdict = policy.evaluate("move_file", {"source": "a", "destination": "b"})
    assert verdict.action == "ask"
    assert "deleting" in verdict.reason


def test_move_out_of_the_project_is_judged_as_external(make_policy: Build) -> None:
    policy = make_policy(
        edit=(rule("**", "allow"),), external_directory=(rule("**", "deny"),), ask_before_delete=False
    )
    assert policy.evaluate("move_file", {"source": "a", "destination": "../outside/a"}).action == "deny"
    assert policy.evaluate("move_file", {"source": "a"}).action == "ask"


# -- listing tools --------------------------------------------------------------------------------------------


def test_listing_tools_check_the_tools_rules_first(make_policy: Build) -> None:
    policy = make_policy(
        tools=(rule("grep_files", "deny", reason="no grepping"),), read=(rule("**", "allow"),)
    )
    verdict = policy.evaluate("grep_files", {"pattern": "x"})
    assert verdict.action == "deny"
    assert verdict.reason.startswith("no grepping")


def test_listing_a_denied_directory_is_denied(make_policy: Build) -> None:
    policy = make_policy()
    for tool, arguments in [
        ("list_directory", {"path": "secrets"}),
        ("grep_files", {"pattern": "password", "path": "config/secrets"}),
        ("glob_files", {"pattern": "*.pem", "path": "secrets/tls"}),
        ("glob_files", {"pattern": "secrets/*.pem"}),
    ]:
        assert policy.evaluate(tool, arguments).action == "deny", arguments


def test_listing_without_a_matching_read_rule_keeps_the_tools_verdict(make_policy: Build) -> None:
    policy = make_policy(tools=(rule("list_directory", "allow"),), read=(rule("private/**", "deny"),))
    assert policy.evaluate("list_directory", {"path": "src"}).action == "allow"
    assert policy.evaluate("list_directory", {"path": "private"}).action == "deny"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("list_directory", {"path": ".."}),
        ("list_directory", {"path": "/"}),
        ("glob_files", {"pattern": "../outside/*"}),
        ("glob_files", {"pattern": "/etc/*.conf"}),
        ("glob_files", {"pattern": "*.txt", "path": "../outside"}),
        ("grep_files", {"pattern": "x", "file_pattern": "../../**/*"}),
    ],
)
def test_listing_outside_the_project_is_external(
    make_policy: Build, tool: str, arguments: dict[str, Any]
) -> None:
    policy = make_policy(
        tools=(rule("*", "allow"),),
        read=(rule("**", "allow"),),
        external_directory=(rule("**", "deny", reason="ext"),),
    )
    verdict = policy.evaluate(tool, arguments)
    assert verdict.action == "deny"
    assert verdict.reason.startswith("ext ")


def test_glob_climbing_after_a_wildcard_cannot_be_allowed(make_policy: Build) -> None:
    policy = make_policy(tools=(rule("*", "allow"),), read=(rule("**", "allow"),), default_action="allow")
    assert policy.evaluate("glob_files", {"pattern": "**/*.py"}).action == "allow"
    verdict = policy.evaluate("glob_files", {"pattern": "*/../../*"})
    assert verdict.action == "ask"


# -- the rest -------------------------------------------------------------------------------------------------


def test_read_only_tools_patterns_name_tools_planning_mode_lets_run(make_policy: Build) -> None:
    policy = make_policy(
        PermissionRules(read_only_tools=("mcp__*__*_list", "web_search"), default_action="allow")
    )
    assert policy.is_read_only("mcp__github__issue_list")
    assert policy.is_read_only("web_search")
    assert not policy.is_read_only("mcp__github__issue_create")
    assert not policy.is_read_only("Read_File")
    # A built-in tool's read-only-ness is its own marking, not the rules'.
    assert not make_policy().is_read_only("read_file")


def test_policy_exposes_rules_and_root(make_policy: Build, project: Path) -> None:
    rules = PermissionRules(default_action="deny")
    policy = make_policy(rules)
    assert policy.rules is rules
    assert policy.working_dir == Path(os.path.realpath(project))


def test_judge_path_serves_tools_filtering_results(make_policy: Build, outside: Path) -> None:
    policy = make_policy()
    assert policy.judge_path("read", "src/main.py").action == "allow"
    assert policy.judge_path("read", "config/secrets/db.txt").action == "deny"
    assert policy.judge_path("edit", "src/main.py").action == "allow"
    assert policy.judge_path("edit", "notes.md").action == "ask"
    assert "external_directory" in policy.judge_path("read", str(outside / "data.txt")).reason
    assert (
        policy.judge_path("read", "bad\\name").action == "allow"
    )  # on POSIX a backslash is a plain character
    assert policy.judge_path("read", "bad\0name").action == "deny"  # a NUL cannot be in any path


def test_resolve_path_follows_links_and_dots(project: Path, outside: Path) -> None:
    symlink(project / "docs" / "shared", outside)
    assert resolve_path(project, "docs/shared/data.txt") == (outside / "data.txt").resolve()
    assert resolve_path(project, "src/../docs/./x") == (project / "docs" / "x").resolve()
    assert resolve_path(project, str(outside)) == outside.resolve()
    with pytest.raises(ValueError, match="NUL"):
        resolve_path(project, "a\0b")
