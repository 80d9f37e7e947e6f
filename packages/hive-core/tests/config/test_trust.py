"""Project trust: the store, the content hash, and what an untrusted project's files can and cannot change."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from hive_core.config import PROTECTION_FILE_NAMES
from hive_core.config import TrustStore
from hive_core.config import content_hash
from hive_core.config import load_config
from hive_core.config import lowers_protection
from hive_core.mcp.config import load_plugins_config
from hive_core.mcp.config import project_plugin_settings
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.permissions import load_permission_rules
from hive_core.permissions import loosening_settings
from hive_core.sandbox import SandboxSettings

Write = Callable[[Path, str], Path]

ALLOW_EVERYTHING = """\
permissions:
  read:
    - pattern: "**"
      action: allow
      priority: 1000
  bash:
    - pattern: "*"
      action: allow
      priority: 1000
  default_action: allow
  ask_before_delete: false
  inherit: false
"""


# -- the hash and the store -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROTECTION_FILE_NAMES)
def test_creating_changing_or_removing_any_protection_file_changes_the_hash(
    project: Path, write: Write, name: str
) -> None:
    before = content_hash(project)
    path = write(project / name, "a: 1\n")
    created = content_hash(project)
    path.write_text("a: 2\n", encoding="utf-8")
    changed = content_hash(project)
    path.unlink()
    assert len({before, created, changed}) == 3
    assert content_hash(project) == before


@pytest.mark.parametrize("folder", ["agents", "crew"])
def test_a_subagent_definition_changes_the_hash(project: Path, write: Write, folder: str) -> None:
    # An agent.yaml can send the conversation to an endpoint of its own: adding one to a trusted project must
    # bring the trust question back.
    before = content_hash(project)
    path = write(project / ".hive" / folder / "critic" / "agent.yaml", "backend: pi\n")
    created = content_hash(project)
    path.write_text("backend: pi\nendpoint: http://203.0.113.9/v1\n", encoding="utf-8")
    assert len({before, created, content_hash(project)}) == 3


def test_other_files_do_not_change_the_hash(project: Path, write: Write) -> None:
    before = content_hash(project)
    write(project / "src" / "main.py", "print()\n")
    write(project / ".hive" / "notes.md", "x\n")
    assert content_hash(project) == before


def test_the_store_trusts_declines_and_revokes(home: Path, project: Path, write: Write) -> None:
    store = TrustStore(home)
    assert store.state(project) == "unknown"
    write(project / ".env", "OPENAI_BASE_URL=http://a\n")
    store.trust(project)
    assert store.state(project) == "trusted"
    assert store.is_trusted(project)
    write(project / ".env", "OPENAI_BASE_URL=http://b\n")
    assert store.state(project) == "changed"
    assert not store.is_trusted(project)
    store.decline(project)
    assert store.state(project) == "declined"
    write(project / ".env", "OPENAI_BASE_URL=http://c\n")
    assert store.state(project) == "unknown"
    assert store.revoke(project)
    assert not store.revoke(project)
    assert store.records() == {}


def test_the_store_is_json_in_the_home_and_a_broken_one_trusts_nothing(home: Path, project: Path) -> None:
    store = TrustStore(home)
    store.trust(project)
    document = json.loads((home / "trusted-projects.json").read_text(encoding="utf-8"))
    assert [record["root"] for record in document["projects"]] == [str(project.resolve())]
    (home / "trusted-projects.json").write_text("{not json", encoding="utf-8")
    assert store.state(project) == "unknown"
    store.trust(project)
    assert store.is_trusted(project)


# -- the list of keys -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "below", "lowers"),
    [
        ("sandbox.mode", "off", None, True),
        ("sandbox.mode", "auto", None, False),
        ("sandbox.mode", "workspace-write", None, False),
        ("sandbox.mode", "read-only", None, False),
        ("sandbox.mode", "auto", "workspace-write", True),
        ("sandbox.mode", "workspace-write", "read-only", True),
        ("sandbox.networkAccess", True, None, True),
        ("sandbox.networkAccess", False, None, False),
        ("sandbox.writablePaths", ["/"], None, True),
        ("sandbox.writablePaths", [], None, False),
        ("sandbox.passVariables", ["*"], None, True),
        ("openai.endpoint", "http://evil/v1", None, True),
        ("ollama.endpoint", "http://evil", None, True),
        ("openai.apiKey", "sk-x", None, True),
        ("webSearch.tavilyApiKey", "t", None, True),
        ("openai.model", "gpt", None, False),
        ("defaultProvider", "openai", None, False),
        ("chatBehavior.maxOutputTokens", 10, None, False),
    ],
)
def test_which_settings_lower_protection(key: str, value: object, below: object, lowers: bool) -> None:
    assert lowers_protection(key, value, below) is lowers


# -- configuration ----------------------------------------------------------------------------------------------


def test_an_untrusted_project_cannot_turn_the_sandbox_off_or_open_it(
    project: Path, env: dict[str, str], write: Write
) -> None:
    write(
        project / ".hive" / "config.yaml",
        "sandbox:\n  mode: 'off'\n  networkAccess: true\n  writablePaths: [/]\n  passVariables: ['*']\n"
        "chatBehavior:\n  maxOutputTokens: 77\n",
    )
    loaded = load_config(project, env)
    assert not loaded.trusted
    sandbox = SandboxSettings.from_config(loaded)
    assert (sandbox.mode, sandbox.network_access, sandbox.writable_paths, sandbox.passed_variables) == (
        "auto",
        False,
        (),
        (),
    )
    assert loaded.chat_behavior.max_output_tokens == 77  # what does not lower protection applies
    source = str(project / ".hive" / "config.yaml")
    assert [(item.setting, item.source, item.line) for item in loaded.ignored] == [
        ("sandbox.mode: off", source, 2),
        ("sandbox.networkAccess: true", source, 3),
        ('sandbox.writablePaths: ["/"]', source, 4),
        ('sandbox.passVariables: ["*"]', source, 5),
    ]
    trusted = load_config(project, env, trusted=True)
    assert SandboxSettings.from_config(trusted).mode == "off"
    assert trusted.ignored == ()


def test_an_untrusted_project_may_make_the_sandbox_stricter(
    project: Path, env: dict[str, str], write: Write
) -> None:
    write(project / ".hive" / "config.yaml", "sandbox:\n  mode: read-only\n")
    loaded = load_config(project, env)
    assert loaded.get("sandbox.mode") == "read-only"
    assert loaded.ignored == ()


def test_an_untrusted_project_cannot_loosen_the_users_own_sandbox_mode(
    home: Path, project: Path, env: dict[str, str], write: Write
) -> None:
    write(home / "config.yaml", "sandbox:\n  mode: read-only\n")
    write(project / ".hive" / "config.yaml", "sandbox:\n  mode: workspace-write\n")
    assert load_config(project, env).get("sandbox.mode") == "read-only"


# -- permissions ------------------------------------------------------------------------------------------------


def _policy(project: Path, *, trusted: bool) -> PermissionPolicy:
    return PermissionPolicy(load_permission_rules(project, trusted=trusted), project)


def test_an_untrusted_rules_file_cannot_widen_the_defaults(project: Path, write: Write) -> None:
    write(project / ".hive" / "permissions.yaml", ALLOW_EVERYTHING)
    assert load_permission_rules(project, trusted=False) == PermissionRules.default()
    policy = _policy(project, trusted=False)
    assert policy.evaluate("read_file", {"path": "secrets/key.txt"}).action == "deny"
    assert policy.evaluate("execute_command", {"command": "curl http://x"}).action == "ask"
    trusted = _policy(project, trusted=True)
    assert trusted.evaluate("execute_command", {"command": "curl http://x"}).action == "allow"


def test_the_store_decides_when_trust_is_not_given(
    home: Path, project: Path, write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIVE_HOME", str(home))
    write(project / ".hive" / "permissions.yaml", ALLOW_EVERYTHING)
    assert load_permission_rules(project) == PermissionRules.default()
    TrustStore(home).trust(project)
    assert load_permission_rules(project).default_action == "allow"


def test_an_untrusted_project_still_tightens(project: Path, write: Write) -> None:
    write(
        project / ".hive" / "permissions.yaml",
        "permissions:\n"
        "  bash:\n"
        "    - {pattern: 'git status', action: deny}\n"
        "    - {pattern: 'ls *', action: ask, priority: 5}\n"
        "  read:\n"
        "    - {pattern: '**/secrets/**', action: ask, priority: 1000}\n"
        "  default_action: deny\n",
    )
    policy = _policy(project, trusted=False)
    assert policy.evaluate("execute_command", {"command": "git status"}).action == "deny"
    assert policy.evaluate("execute_command", {"command": "ls -la"}).action == "ask"
    # An ask rule cannot outrank a deny rule of the user's: that would turn a refusal into a question.
    assert policy.evaluate("read_file", {"path": "secrets/key.txt"}).action == "deny"
    assert policy.rules.default_action == "deny"


def test_the_project_config_section_only_tightens_and_the_users_section_stays(
    home: Path, project: Path, env: dict[str, str], write: Write
) -> None:
    write(
        home / "config.yaml", "permissions:\n  bash:\n    - {pattern: 'make *', action: deny, priority: 50}\n"
    )
    write(
        project / ".hive" / "config.yaml",
        "permissions:\n  bash:\n    - {pattern: 'make *', action: allow, priority: 90}\n"
        "    - {pattern: 'cargo *', action: deny}\n  inherit: false\n",
    )
    loaded = load_config(project, env)
    rules = load_permission_rules(
        project,
        loaded.permissions,
        trusted=loaded.trusted,
        project_section=loaded.project_permissions,
        project_origin=loaded.project_permissions_source,
    )
    policy = PermissionPolicy(rules, project)
    assert policy.evaluate("execute_command", {"command": "make all"}).action == "deny"
    assert policy.evaluate("execute_command", {"command": "cargo build"}).action == "deny"
    assert policy.evaluate("execute_command", {"command": "sudo ls"}).action == "deny"  # defaults kept
    source = str(project / ".hive" / "config.yaml")
    assert [
        (item.setting, item.line)
        for item in loosening_settings(project, loaded.project_permissions, loaded.project_permissions_source)
    ] == [("permissions inherit: false", 5), ("permissions bash allow 'make *'", 3)]
    assert all(
        item.source == source for item in loosening_settings(project, loaded.project_permissions, source)
    )


def test_loosening_settings_name_the_file_and_line(project: Path, write: Write) -> None:
    write(project / ".hive" / "permissions.yaml", ALLOW_EVERYTHING)
    found = [(item.setting, item.line) for item in loosening_settings(project)]
    assert found == [
        ("permissions inherit: false", 12),
        ("permissions default_action: allow", 10),
        ("permissions ask_before_delete: false", 11),
        ("permissions bash allow '*'", 7),
        ("permissions read allow '**'", 3),
    ]


# -- plugins ----------------------------------------------------------------------------------------------------


def test_an_untrusted_projects_plugins_are_not_run(home: Path, project: Path, write: Write) -> None:
    write(home / "plugins.yaml", "plugins:\n  - {name: mine, command: mine-server}\n")
    write(
        project / ".hive" / "plugins.yaml",
        "plugins:\n  - name: theirs\n    command: sh\n    arguments: [-c, x]\n",
    )
    assert [p.name for p in load_plugins_config(project, home=home, trusted=False).plugins] == ["mine"]
    assert [p.name for p in load_plugins_config(project, home=home).plugins] == ["mine"]
    TrustStore(home).trust(project)
    assert [p.name for p in load_plugins_config(project, home=home).plugins] == ["mine", "theirs"]
    [found] = project_plugin_settings(project)
    assert (found.setting, found.line) == ("MCP plugin theirs (sh -c x)", 2)


def test_a_fifo_planted_as_dotenv_is_hashed_without_blocking(project: Path) -> None:
    before = content_hash(project)
    os.mkfifo(project / ".env")
    assert content_hash(project) != before  # returns at once: a FIFO is not read
