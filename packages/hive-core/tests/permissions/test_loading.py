"""Finding and reading the rules: file precedence, the config section, and malformed input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hive_core.permissions import PermissionConfigError
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.permissions import load_permission_rules
from hive_core.permissions import parse_permission_section

FULL_YAML = """\
permissions:
  read:
    - pattern: "**/*"
      action: allow
    - pattern: "private/**"
      action: deny
      priority: 50
      reason: Private notes
  edit:
    - pattern: "docs/**"
      action: allow
  bash:
    - pattern: "make *"
      action: allow
  external_directory:
    - pattern: "/opt/shared/**"
      action: allow
  mcp_tools:
    - pattern: "*_search"
      action: allow
  tools:
    - pattern: "web_fetch"
      action: deny
  read_only_tools: ["web_*"]
  ask_before_delete: false
  default_action: deny
"""
WHOLE_YAML = FULL_YAML + "  inherit: false\n"
"""The same rules as the whole rule set (without the defaults)."""

FULL_RULES = PermissionRules(
    read=(
        PermissionRule(pattern="**/*", action="allow"),
        PermissionRule(pattern="private/**", action="deny", priority=50, reason="Private notes"),
    ),
    edit=(PermissionRule(pattern="docs/**", action="allow"),),
    bash=(PermissionRule(pattern="make *", action="allow"),),
    external_directory=(PermissionRule(pattern="/opt/shared/**", action="allow"),),
    mcp_tools=(PermissionRule(pattern="*_search", action="allow"),),
    tools=(PermissionRule(pattern="web_fetch", action="deny"),),
    read_only_tools=("web_*",),
    ask_before_delete=False,
    default_action="deny",
)


def write(project: Path, name: str, text: str) -> Path:
    path = project / ".hive" / name
    path.write_text(text, encoding="utf-8")
    return path


# -- where the rules come from --------------------------------------------------------------------------------


def test_no_file_and_no_config_gives_the_defaults(project: Path) -> None:
    assert load_permission_rules(project, trusted=True) == PermissionRules.default()


def test_no_hive_directory_at_all_gives_the_defaults(tmp_path: Path) -> None:
    assert load_permission_rules(tmp_path / "nowhere", trusted=True) == PermissionRules.default()


def test_yaml_file_is_read_whole(project: Path) -> None:
    write(project, "permissions.yaml", WHOLE_YAML)
    assert load_permission_rules(project, trusted=True) == FULL_RULES


def test_yml_and_json_files(project: Path) -> None:
    write(project, "permissions.yml", WHOLE_YAML)
    assert load_permission_rules(project, trusted=True) == FULL_RULES
    (project / ".hive" / "permissions.yml").unlink()
    import yaml

    write(project, "permissions.json", json.dumps(yaml.safe_load(WHOLE_YAML)))
    assert load_permission_rules(project, trusted=True) == FULL_RULES


def test_a_file_adds_to_the_defaults_and_wins_at_equal_priority(project: Path) -> None:
    write(project, "permissions.yaml", FULL_YAML)
    rules = load_permission_rules(project, trusted=True)
    defaults = PermissionRules.default()
    assert rules.bash[0] == PermissionRule(pattern="make *", action="allow")
    assert set(defaults.bash) <= set(rules.bash)
    assert rules.default_action == "deny"  # a field the file sets replaces the default's
    policy = PermissionPolicy(rules, project)
    assert policy.evaluate("execute_command", {"command": "make test"}).action == "allow"  # the file's rule
    assert policy.evaluate("execute_command", {"command": "git status"}).action == "allow"  # a default's
    assert policy.evaluate("execute_command", {"command": "sudo make"}).action == "deny"  # a default guard
    assert policy.evaluate("read_file", {"path": "private/notes.md"}).action == "deny"
    assert policy.evaluate("read_file", {"path": "secrets/key"}).action == "deny"  # still guarded
    write(
        project, "permissions.yaml", 'permissions:\n  edit:\n    - pattern: "src/**/*"\n      action: ask\n'
    )
    edits = PermissionPolicy(load_permission_rules(project, trusted=True), project)
    assert edits.evaluate("write_file", {"path": "src/app.py", "content": ""}).action == "ask"
    assert edits.evaluate("write_file", {"path": "tests/t.py", "content": ""}).action == "allow"


def test_inherit_must_be_a_boolean(project: Path) -> None:
    write(project, "permissions.yaml", "permissions:\n  inherit: maybe\n")
    with pytest.raises(PermissionConfigError, match="must be true or false"):
        load_permission_rules(project, trusted=True)


def test_file_precedence_yaml_then_yml_then_json(project: Path) -> None:
    write(project, "permissions.json", '{"permissions": {"default_action": "allow"}}')
    write(project, "permissions.yml", "permissions:\n  default_action: deny\n")
    write(project, "permissions.yaml", "permissions:\n  default_action: ask\n")
    assert load_permission_rules(project, trusted=True).default_action == "ask"
    (project / ".hive" / "permissions.yaml").unlink()
    assert load_permission_rules(project, trusted=True).default_action == "deny"
    (project / ".hive" / "permissions.yml").unlink()
    assert load_permission_rules(project, trusted=True).default_action == "allow"


def test_a_file_wins_over_the_config_section(project: Path) -> None:
    write(project, "permissions.yaml", "permissions:\n  default_action: deny\n")
    assert load_permission_rules(project, {"defaultAction": "allow"}, trusted=True).default_action == "deny"


def test_a_broken_file_is_an_error_even_with_a_config_section(project: Path) -> None:
    path = write(project, "permissions.json", "{")
    with pytest.raises(PermissionConfigError, match=str(path)):
        load_permission_rules(project, {"defaultAction": "allow"}, trusted=True)


def test_inherit_false_replaces_the_defaults(project: Path) -> None:
    write(project, "permissions.yaml", "permissions:\n  inherit: false\n  default_action: allow\n")
    rules = load_permission_rules(project, trusted=True)
    assert rules.read == ()
    assert rules.tools == ()
    assert rules.ask_before_delete is True
    assert PermissionPolicy(rules, project).evaluate("read_file", {"path": "secrets/k"}).action == "allow"


def test_an_empty_permissions_section_is_the_defaults_and_inherit_false_alone_is_no_rules(
    project: Path,
) -> None:
    write(project, "permissions.yaml", "permissions:\n")
    assert load_permission_rules(project, trusted=True) == PermissionRules.default()
    write(project, "permissions.yaml", "permissions:\n  inherit: false\n")
    assert load_permission_rules(project, trusted=True) == PermissionRules()


def test_rule_fields_default(project: Path) -> None:
    write(project, "permissions.yaml", "permissions:\n  tools:\n    - pattern: deploy\n")
    assert load_permission_rules(project, trusted=True).tools[0] == PermissionRule(
        pattern="deploy", action="ask", priority=0, reason=None
    )


def test_utf8_bom_is_accepted(project: Path) -> None:
    (project / ".hive" / "permissions.json").write_bytes(
        b'\xef\xbb\xbf{"permissions": {"default_action": "deny"}}'
    )
    assert load_permission_rules(project, trusted=True).default_action == "deny"


def test_the_loaded_file_drives_the_policy(project: Path) -> None:
    write(project, "permissions.yaml", FULL_YAML)
    policy = PermissionPolicy(load_permission_rules(project, trusted=True), project)
    assert policy.evaluate("read_file", {"path": "private/diary.md"}).reason.startswith("Private notes")
    # ask_before_delete is false in this file, so an allowed delete is not asked about.
    assert policy.evaluate("delete_file", {"path": "docs/old.md"}).action == "allow"
    assert policy.evaluate("execute_command", {"command": "make all"}).action == "allow"
    assert policy.evaluate("web_fetch", {}).action == "deny"
    # Planning mode lets web_lookup run (the file counts it read-only); then the default deny applies.
    assert policy.is_read_only("web_lookup")
    assert policy.evaluate("web_lookup", {}).action == "deny"
    assert not policy.is_read_only("write_file")


# -- the config.yaml section (camelCase) ----------------------------------------------------------------------


def test_config_section_uses_camel_case(project: Path) -> None:
    section: dict[str, Any] = {
        "read": [{"pattern": "**/*", "action": "allow"}],
        "externalDirectory": [{"pattern": "/opt/**", "action": "allow", "priority": 3}],
        "mcpTools": [{"pattern": "*_get", "action": "allow"}],
        "readOnlyTools": ["web_*"],
        "askBeforeDelete": False,
        "defaultAction": "deny",
        "inherit": False,
    }
    rules = load_permission_rules(project, section, trusted=True)
    assert rules.read == (PermissionRule(pattern="**/*", action="allow"),)
    assert rules.external_directory == (PermissionRule(pattern="/opt/**", action="allow", priority=3),)
    assert rules.mcp_tools == (PermissionRule(pattern="*_get", action="allow"),)
    assert rules.read_only_tools == ("web_*",)
    assert rules.ask_before_delete is False
    assert rules.default_action == "deny"


def test_an_empty_config_section_is_the_defaults(project: Path) -> None:
    assert load_permission_rules(project, {}, trusted=True) == PermissionRules.default()
    assert load_permission_rules(project, {"inherit": False}, trusted=True) == PermissionRules()


def test_config_section_with_snake_case_key_is_an_error_with_a_hint(project: Path) -> None:
    with pytest.raises(PermissionConfigError) as caught:
        load_permission_rules(
            project, {"external_directory": []}, config_origin="/home/u/.hive/config.yaml", trusted=True
        )
    assert caught.value.source == "/home/u/.hive/config.yaml"
    assert "'externalDirectory'" in str(caught.value)


def test_rules_file_with_camel_case_key_is_an_error_with_a_hint(project: Path) -> None:
    path = write(project, "permissions.yaml", "permissions:\n  defaultAction: allow\n")
    with pytest.raises(PermissionConfigError) as caught:
        load_permission_rules(project, trusted=True)
    assert caught.value.source == str(path)
    assert caught.value.line == 2
    assert "'default_action'" in str(caught.value)


def test_parse_permission_section_directly() -> None:
    rules = parse_permission_section({"default_action": "allow"}, source="inline")
    assert rules == PermissionRules(default_action="allow")
    with pytest.raises(PermissionConfigError, match="inline"):
        parse_permission_section(["not", "a", "mapping"], source="inline")


# -- malformed files ------------------------------------------------------------------------------------------

MALFORMED_YAML: list[tuple[str, str, int | None]] = [
    ("permissions:\n  read: [\n", "not valid YAML", 3),
    ("permissions:\n  read:\n  - pattern: a\n   action: allow\n", "not valid YAML", 4),
    ("---\npermissions: {}\n---\npermissions: {}\n", "not valid YAML", 3),
    ("", "empty", None),
    ("# only a comment\n", "empty", None),
    ("- a\n- b\n", "top level must be a mapping", 1),
    ("read: []\n", "unknown top-level key 'read'", 1),
    ("permissions: {}\nextra: 1\n", "unknown top-level key 'extra'", 2),
    ("permissions:\n  reed: []\n", "unknown key 'reed'", 2),
    ("permissions: [1, 2]\n", "must be a mapping", 1),
    ("permissions:\n  read: allow\n", "must be a list of rules", 2),
    ("permissions:\n  read:\n    - '**'\n", "must be a mapping with a pattern", 3),
    ("permissions:\n  read:\n    - action: allow\n", "has no pattern", 3),
    ("permissions:\n  bash:\n    - pattern: ''\n", "non-empty", 3),
    ("permissions:\n  bash:\n    - pattern: 5\n", "non-empty", 3),
    ("permissions:\n  read:\n    - pattern: a\n    - pattern: b\n      action: maybe\n", "not 'maybe'", 5),
    ("permissions:\n  read:\n    - pattern: a\n      action: yes\n", "not True", 4),
    ("permissions:\n  read:\n    - pattern: a\n      priority: high\n", "whole number", 4),
    ("permissions:\n  read:\n    - pattern: a\n      priority: true\n", "whole number", 4),
    ("permissions:\n  read:\n    - pattern: a\n      priority: 1.5\n", "whole number", 4),
    ("permissions:\n  read:\n    - pattern: '**.pem'\n      action: deny\n", "whole segment", 3),
    (
        "permissions:\n  edit:\n    - pattern: 'x{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}'\n",
        "braces expand",
        3,
    ),
    ("permissions:\n  read:\n    - pattern: a\n      reason: [x]\n", "reason", 4),
    ("permissions:\n  read:\n    - pattern: a\n      level: high\n", "unknown key 'level'", 4),
    ("permissions:\n  default_action: never\n", "default_action", 2),
    ("permissions:\n  ask_before_delete: sometimes\n", "true or false", 2),
    ("permissions:\n  read_only_tools: web_search\n", "list of tool-name patterns", 2),
    ("permissions:\n  read_only_tools: [web_search, '']\n", "read_only_tools[1]", 2),
    ("permissions:\n  read: []\n  read: []\n", "appears twice", 3),
    ("permissions:\n  read:\n    - pattern: a\n      pattern: b\n", "appears twice", 4),
]


MALFORMED_JSON: list[tuple[str, str, int | None]] = [
    ('{"permissions": {"read": [}\n}', "not valid JSON", 1),
    ('{\n  "permissions": {\n    "read": [\n  }\n}', "not valid JSON", 4),
    ('{"permissions": {"read": [{"action": "allow"}]}}', "has no pattern", 1),
    ('{"permissions": {"tools": [{"pattern": "x", "action": "block"}]}}', "not 'block'", 1),
    ('{"permissions": {"mcpTools": []}}', "'mcp_tools'", 1),
    ('{"permissions": {}, "permissions": {}}', "appears twice", 1),
    ('{"permissions": {"read": [{"pattern": "x", "priority": NaN}]}}', "whole number", 1),
    ("null", "empty", None),
    ("{}", "no top-level 'permissions'", 1),
]


@pytest.mark.parametrize(
    ("name", "text", "problem", "line"),
    [("permissions.yaml", *case) for case in MALFORMED_YAML]
    + [("permissions.json", *case) for case in MALFORMED_JSON],
)
def test_a_malformed_file_names_the_file_the_line_and_the_problem(
    project: Path, name: str, text: str, problem: str, line: int | None
) -> None:
    path = write(project, name, text)
    with pytest.raises(PermissionConfigError) as caught:
        load_permission_rules(project, trusted=True)
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.source == str(path)
    assert str(path) in str(error)
    assert problem in str(error)
    assert problem in error.problem
    assert error.line == line
    if line is not None:
        assert f"line {line}" in str(error)


def test_a_json_rules_file_names_the_line_and_column_of_the_fault(project: Path) -> None:
    path = write(
        project,
        "permissions.json",
        '{\n  "permissions": {\n    "read": [{"pattern": "a", "action": "block"}]\n  }\n}',
    )
    with pytest.raises(PermissionConfigError) as caught:
        load_permission_rules(project, trusted=True)
    assert (caught.value.line, caught.value.column) == (3, 31)
    assert str(caught.value).startswith(f"invalid permission rules in {path}, line 3, column 31: ")


def test_unreadable_files_are_errors_naming_the_file(project: Path) -> None:
    (project / ".hive" / "permissions.yaml").mkdir()
    with pytest.raises(PermissionConfigError, match=r"permissions\.yaml.*cannot read"):
        load_permission_rules(project, trusted=True)


def test_non_utf8_file_is_an_error(project: Path) -> None:
    (project / ".hive" / "permissions.yml").write_bytes(b"permissions:\n  default_action: \xff\xfe\n")
    with pytest.raises(PermissionConfigError, match=r"permissions\.yml.*UTF-8"):
        load_permission_rules(project, trusted=True)


def test_dangling_rules_file_link_is_an_error(project: Path) -> None:
    try:
        (project / ".hive" / "permissions.yaml").symlink_to(project / "missing.yaml")
    except OSError as error:  # pragma: no cover
        pytest.skip(f"cannot create symbolic links here: {error}")
    with pytest.raises(PermissionConfigError, match=r"permissions\.yaml"):
        load_permission_rules(project, {"defaultAction": "allow"}, trusted=True)


def test_recursive_yaml_alias_does_not_hang(project: Path) -> None:
    write(project, "permissions.yaml", "permissions:\n  read_only_tools: &a [*a]\n")
    with pytest.raises(PermissionConfigError, match="contains it"):
        load_permission_rules(project, trusted=True)


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        ({"defaultAction": "maybe"}, "defaultAction"),
        ({"read": [{"pattern": "x", "action": "allow", "extra": 1}]}, "unknown key 'extra'"),
        ({"tools": [{"reason": "x"}]}, "has no pattern"),
        ({"bogus": True}, "unknown key 'bogus'"),
    ],
)
def test_malformed_config_section_names_its_origin(
    project: Path, section: dict[str, Any], problem: str
) -> None:
    with pytest.raises(PermissionConfigError) as caught:
        load_permission_rules(project, section, config_origin="project config.yaml", trusted=True)
    assert str(caught.value).startswith("invalid permission rules in project config.yaml")
    assert problem in str(caught.value)
