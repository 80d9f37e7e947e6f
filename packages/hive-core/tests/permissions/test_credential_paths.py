"""Credential stores and the hive home are denied to every file tool and to shell commands' paths, by absolute
path, whatever the project root and whatever the rules allow: a project at the home folder held ``~/.ssh`` and
``~/.aws`` "inside the project", where the default read rules allow everything."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from permissions_harness import rule

from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.sandbox import CREDENTIAL_STORES

EVERYTHING = PermissionRules(
    bash=(rule("*", "allow"),),
    read=(rule("**/*", "allow"),),
    edit=(rule("**/*", "allow"),),
    external_directory=(rule("**", "allow"),),
    tools=(rule("*", "allow"),),
    default_action="allow",
)
"""Rules that allow everything: only the credential check can refuse."""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake ``$HOME`` holding every credential store, with the hive home at its default ``~/.hive``."""
    home = tmp_path / "home"
    for name in CREDENTIAL_STORES:
        store = home / name
        store.parent.mkdir(parents=True, exist_ok=True)
        if "." in name.rsplit("/", 1)[-1].lstrip(".") or name.endswith(("credentials", "rc", "token")):
            store.write_text("SECRET\n")
        else:
            store.mkdir(exist_ok=True)
            (store / "secret").write_text("SECRET\n")
    (home / ".ssh" / "id_rsa").write_text("SSH-SECRET\n")
    (home / ".aws" / "credentials").write_text("AWS-SECRET\n")
    (home / ".hive").mkdir()
    (home / ".hive" / "config.yaml").write_text("api_key: KEY\n")
    (home / "notes.txt").write_text("mine\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("HIVE_HOME", raising=False)
    return home


def _a_file_in(store: Path) -> Path:
    return store / "secret" if store.is_dir() else store


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": ".ssh/id_rsa"}),
    ("read_file", {"path": "~/.ssh/id_rsa"}),
    ("read_file", {"path": "./src/../.aws/credentials"}),
    ("read_file", {"path": ".hive/config.yaml"}),
    ("write_file", {"path": ".ssh/authorized_keys", "content": "k"}),
    ("edit_file", {"path": ".aws/credentials", "old": "a", "new": "b"}),
    ("delete_file", {"path": ".gnupg/secret"}),
    ("move_file", {"source": ".aws/credentials", "destination": "stolen.txt"}),
    ("move_file", {"source": "notes.txt", "destination": ".ssh/authorized_keys"}),
    ("list_directory", {"path": ".ssh"}),
    ("glob_files", {"pattern": ".aws/*"}),
    ("glob_files", {"path": ".config", "pattern": "gcloud/**"}),
    ("grep_files", {"path": ".hive", "pattern": "key"}),
    ("execute_command", {"command": "cat .ssh/id_rsa"}),
    ("execute_command", {"command": "cat ~/.ssh/id_rsa"}),
    ("execute_command", {"command": "head -n 3 .aws/credentials"}),
    ("execute_command", {"command": "cp .hive/config.yaml /tmp/x"}),
    ("execute_command", {"command": "cat < .config/gcloud/secret"}),
    ("execute_command", {"command": "echo key >> .ssh/authorized_keys"}),
]


@pytest.mark.parametrize(("tool", "arguments"), CALLS)
def test_a_project_at_home_does_not_reach_its_credentials(
    tool: str, arguments: dict[str, Any], home: Path
) -> None:
    arguments = {
        key: os.path.expanduser(value) if key == "path" else value for key, value in arguments.items()
    }
    for rules in (PermissionRules.default(), EVERYTHING):
        verdict = PermissionPolicy(rules, home).evaluate(tool, arguments)
        assert verdict.action == "deny", (tool, arguments, verdict)
        assert "credentials" in verdict.reason


@pytest.mark.parametrize("name", CREDENTIAL_STORES)
def test_every_store_the_sandbox_hides_is_denied_by_absolute_path(
    name: str, home: Path, project: Path
) -> None:
    target = _a_file_in(home / name)
    policy = PermissionPolicy(EVERYTHING, project)
    for tool in ("read_file", "write_file"):
        verdict = policy.evaluate(tool, {"path": str(target), "content": ""})
        assert verdict.action == "deny", (tool, target, verdict)
    verdict = policy.evaluate("execute_command", {"command": f"cat {target}"})
    assert verdict.action == "deny", (target, verdict)


def test_a_moved_hive_home_is_denied_where_it_is(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = home.parent / "elsewhere-hive"
    moved.mkdir()
    (moved / "config.yaml").write_text("api_key: KEY\n")
    monkeypatch.setenv("HIVE_HOME", str(moved))
    verdict = PermissionPolicy(EVERYTHING, project).evaluate(
        "read_file", {"path": str(moved / "config.yaml")}
    )
    assert verdict.action == "deny"


def test_a_link_in_the_project_to_a_store_is_denied(home: Path, project: Path) -> None:
    (project / "keys").symlink_to(home / ".ssh")
    policy = PermissionPolicy(EVERYTHING, project)
    assert policy.evaluate("read_file", {"path": "keys/id_rsa"}).action == "deny"
    assert policy.evaluate("execute_command", {"command": "cat keys/id_rsa"}).action == "deny"


def test_the_rest_of_the_home_folder_is_judged_by_the_rules(home: Path) -> None:
    policy = PermissionPolicy(PermissionRules.default(), home)
    assert policy.evaluate("read_file", {"path": "notes.txt"}).action == "allow"
    assert policy.evaluate("execute_command", {"command": "cat notes.txt"}).action == "allow"
    assert policy.evaluate("list_directory", {"path": "."}).action == "allow"
