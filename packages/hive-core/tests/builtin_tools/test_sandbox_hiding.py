"""What the sandbox hides because the read rules refuse it: the walk that finds it (:func:`refused_paths`), and
``execute_command`` in real bubblewrap, where a command (a test the model wrote, run by an allowed ``pytest``)
must not read what ``read_file`` would not.

Each hiding is checked against a command that can read the file where the rules do not refuse it (no policy, or
approved), so no check passes for a reason other than the hiding.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Literal

import pytest

from hive_core.approvals import PathJudge
from hive_core.approvals import PermissionAction
from hive_core.approvals import Verdict
from hive_core.builtin_tools import execute_command_tool
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.sandbox import RefusedScanTooLarge
from hive_core.sandbox import SandboxMode
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import probe_bubblewrap
from hive_core.sandbox import refused
from hive_core.sandbox import refused_paths as find_refused
from hive_core.tools import Tool
from hive_core.tools import ToolContext

if TYPE_CHECKING:
    from .conftest import Project

_PROBE = probe_bubblewrap()
needs_sandbox = pytest.mark.skipif(
    not _PROBE.usable, reason=f"no usable bubblewrap sandbox on this machine: {_PROBE.problem}"
)

SECRETS = {
    ".env": "ENV-SECRET-1a2b",
    "sub/.env.local": "ENV-LOCAL-SECRET-3c4d",
    "a/b/c/.env.prod": "ENV-PROD-SECRET-5e6f",
    "x.env": "X-ENV-SECRET-7a8b",
    "secrets/key.txt": "DENIED-SECRET-9c0d",
    "src/secrets/x": "SRC-DENIED-SECRET-1e2f",
    "secrets/deeper/.env": "DEEP-DENIED-SECRET-3a4b",
}
"""Files the default read rules refuse, and the secret each holds."""

ASKED = {".env", "sub/.env.local", "a/b/c/.env.prod", "x.env"}
"""The paths of :data:`SECRETS` the default rules ask about (the rest are denied)."""


PRIVATE_DATA_DENIED = PermissionRules(
    read=(
        *PermissionRules.default().read,
        PermissionRule(pattern="data/private/**", action="deny", priority=30),
    ),
    default_action=PermissionRules.default().default_action,
)
"""The default rules and a user's rule that denies reading ``data/private``."""


def plant(project: Project) -> None:
    for name, secret in SECRETS.items():
        project.write(name, secret + "\n")
    project.write("src/main.py", "print('visible')\n")
    project.write("node_modules/pkg/.env", "IGNORED-FOLDER-SECRET-5c6d\n")


def policy_for(root: Path, rules: PermissionRules | None = None) -> PermissionPolicy:
    return PermissionPolicy(rules or PermissionRules.default(), root)


def by_rules(policy: PermissionPolicy) -> refused.ReadJudge:
    def judge(relative: str, directory: bool) -> PermissionAction:
        return policy.judge_relative("read", relative, directory=directory).action

    return judge


# -- the walk -------------------------------------------------------------------------------------------------


def test_the_walk_finds_what_the_default_rules_refuse_at_any_depth(project: Project) -> None:
    plant(project)
    found = find_refused(project.root, by_rules(policy_for(project.root)))
    # A denied folder is hidden whole: `secrets/deeper/.env` is not listed on its own.
    assert found.denied == ("secrets", "src/secrets")
    # Ignored folders are walked too: a package can ship a `.env`.
    assert found.asked == tuple(sorted({*ASKED, "node_modules/pkg/.env"}))
    assert found.hidden(approved=True) == found.denied
    assert set(found.hidden(approved=False)) == {*found.denied, *found.asked}


def test_the_walk_agrees_with_the_policy_s_own_judgement_of_each_path(project: Project) -> None:
    plant(project)
    policy = policy_for(project.root)
    found = find_refused(project.root, by_rules(policy))
    for path in found.denied:
        assert policy.judge_path("read", str(project.root / path)).action == "deny", path
    for path in found.asked:
        assert policy.judge_path("read", str(project.root / path)).action == "ask", path
    assert policy.judge_path("read", str(project.root / "src/main.py")).action == "allow"


def test_a_refused_folder_is_not_entered_to_be_judged(project: Project) -> None:
    plant(project)
    policy = policy_for(project.root)
    asked_about: list[str] = []

    def judge(relative: str, directory: bool) -> PermissionAction:
        asked_about.append(relative)
        return policy.judge_relative("read", relative, directory=directory).action

    find_refused(project.root, judge)
    assert "secrets" in asked_about
    assert not [path for path in asked_about if path.startswith(("secrets/", "src/secrets/"))]


def test_links_are_not_followed_out_of_the_project(project: Project, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "secrets").mkdir(parents=True)
    (outside / ".env").write_text("OUTSIDE\n")
    (outside / "secrets" / "k").write_text("OUTSIDE\n")
    project.write("src/main.py", "")
    (project.root / "out").symlink_to(outside, target_is_directory=True)
    (project.root / "loop").symlink_to(project.root, target_is_directory=True)
    judged: list[str] = []

    def judge(relative: str, directory: bool) -> PermissionAction:
        judged.append(relative)
        return "allow"

    found = find_refused(project.root, judge)
    assert found.denied == found.asked == ()
    assert not [path for path in judged if path.startswith(("out/", "loop/")) or path in ("out", "loop")]


def test_a_hard_link_of_a_refused_file_is_refused_as_it_is(project: Project) -> None:
    plant(project)
    os.link(project.root / "secrets" / "key.txt", project.root / "src" / "copy.txt")
    os.link(project.root / ".env", project.root / "src" / "settings.txt")
    found = find_refused(project.root, by_rules(policy_for(project.root)))
    assert "src/copy.txt" in found.denied
    assert "src/settings.txt" in found.asked
    assert "src/main.py" not in (*found.denied, *found.asked)


def test_a_user_rule_hides_its_folder(project: Project) -> None:
    project.write("data/private/people.csv", "x")
    project.write("data/public/open.csv", "x")
    found = find_refused(project.root, by_rules(policy_for(project.root, PRIVATE_DATA_DENIED)))
    assert found.denied == ("data/private",)


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists every folder, so none is unlistable")
def test_a_folder_that_cannot_be_listed_is_hidden_as_denied(project: Project) -> None:
    locked = project.root / "locked"
    locked.mkdir()
    (locked / ".env").write_text("x")
    locked.chmod(0o311)  # enterable, not listable: a command could still open a name it guessed
    try:
        found = find_refused(project.root, lambda relative, directory: "allow")
    finally:
        locked.chmod(0o755)
    assert found.denied == ("locked",)


def test_the_walk_gives_up_past_its_limit(project: Project) -> None:
    for index in range(10):
        project.write(f"f{index}.txt", "")
    with pytest.raises(RefusedScanTooLarge, match="more than 5 files and folders"):
        find_refused(project.root, lambda relative, directory: "allow", limit=5)


def test_a_finder_sees_a_change_made_right_after_its_walk(project: Project) -> None:
    project.write("src/main.py", "")
    policy = policy_for(project.root)
    finder = refused.RefusedFinder()
    assert finder.find(project.root, by_rules(policy), rules=policy).asked == ()
    # Within the racy window the listing is not trusted; past it the change moved the directory's times.
    project.write("src/.env", "x")
    project.write("secrets/key.txt", "x")
    found = finder.find(project.root, by_rules(policy), rules=policy)
    assert (found.denied, found.asked) == (("secrets",), ("src/.env",))


def test_a_finder_judges_again_only_what_changed(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    plant(project)
    monkeypatch.setattr(refused, "_RACY_NS", -(10**12))  # every listing counts as settled at once
    policy = policy_for(project.root)
    judged: list[str] = []

    def judge(relative: str, directory: bool) -> PermissionAction:
        judged.append(relative)
        return policy.judge_relative("read", relative, directory=directory).action

    finder = refused.RefusedFinder()
    first = finder.find(project.root, judge, rules=policy)
    assert judged
    judged.clear()
    assert finder.find(project.root, judge, rules=policy) == first
    assert judged == []
    os.utime(project.root / "sub", ns=(0, 0))  # the directory's times moved: listed and judged again
    assert finder.find(project.root, judge, rules=policy) == first
    assert judged == ["sub/.env.local"]
    judged.clear()
    other = policy_for(project.root)  # other rules: nothing remembered holds
    assert finder.find(project.root, judge, rules=other) == first
    assert len(judged) > 1


# -- execute_command in the sandbox ---------------------------------------------------------------------------

READ_ALL = "; ".join(f"cat {name} 2>&1" for name in (*SECRETS, "node_modules/pkg/.env")) + "; cat src/main.py"


def context(
    project: Project,
    tool: Tool,
    *,
    judge: PathJudge | None,
    approved: bool = False,
    working_dir: Path | None = None,
) -> ToolContext:
    """A call of ``tool`` in ``working_dir`` (the project's root by default), its paths judged by ``judge``."""
    return ToolContext(
        call_id="c1",
        tool_name=tool.name,
        working_dir=project.root if working_dir is None else working_dir,
        emit=project.events.append,
        path_judge=judge,
        approved=approved,
    )


async def run(
    project: Project,
    command: str,
    *,
    judge: PermissionPolicy | None,
    approved: bool = False,
    mode: SandboxMode = "workspace-write",
) -> str:
    tool = execute_command_tool(SandboxSettings(mode=mode))
    outcome = await tool.invoke({"command": command}, context(project, tool, judge=judge, approved=approved))
    assert outcome.success, outcome.content
    return outcome.content


@needs_sandbox
@pytest.mark.anyio
async def test_a_sandboxed_command_cannot_read_what_the_rules_refuse(project: Project) -> None:
    plant(project)
    control = await run(project, READ_ALL, judge=None)
    assert all(secret in control for secret in SECRETS.values())  # without rules nothing extra is hidden
    output = await run(project, READ_ALL, judge=policy_for(project.root))
    for secret in SECRETS.values():
        assert secret not in output
    assert "IGNORED-FOLDER-SECRET" not in output
    assert "visible" in output
    refused = [line for line in output.splitlines() if line.startswith("cat: ")]
    assert len(refused) == len(SECRETS) + 1
    assert all(line.endswith("Permission denied") for line in refused)
    # The model is told what it could not read and why; what is denied is counted, not named.
    note = output.splitlines()[-1]
    assert note.startswith("Hidden from the command (unreadable, 'Permission denied'): ")
    assert ".env" in note
    assert "read_file asks the user" in note
    assert "2 paths the read rules deny" in note
    assert "secrets" not in note


@needs_sandbox
@pytest.mark.anyio
async def test_an_approved_command_sees_what_the_rules_ask_about_but_never_what_they_deny(
    project: Project,
) -> None:
    plant(project)
    output = await run(project, READ_ALL, judge=policy_for(project.root), approved=True)
    for name, secret in SECRETS.items():
        assert (secret in output) == (name in ASKED), name
    assert (
        output.splitlines()[-1]
        == "Hidden from the command (unreadable, 'Permission denied'): 2 paths the read rules deny."
    )


@needs_sandbox
@pytest.mark.anyio
async def test_hidden_stays_hidden_whatever_the_command_tries(project: Project) -> None:
    plant(project)
    (project.root / "src" / "alias").symlink_to(project.root / "secrets" / "key.txt")
    os.link(project.root / "secrets" / "key.txt", project.root / "src" / "copy.txt")
    attempts = (
        "chmod 700 secrets 2>&1; ls -a secrets 2>&1; cat secrets/key.txt 2>&1",
        "cat src/alias src/copy.txt 2>&1",
        "mv secrets gone 2>&1; cat gone/key.txt 2>&1",
        "mv src moved 2>&1; cat moved/secrets/x 2>&1",
        "echo NEW > .env 2>&1; rm -f .env 2>&1; cat .env 2>&1",
        "ln secrets/key.txt src/again 2>&1; cat src/again 2>&1",
        "find . -path ./node_modules -prune -o -type f -print0 | xargs -0 cat 2>/dev/null",
    )
    policy = policy_for(project.root)
    for command in attempts:
        output = await run(project, command, judge=policy)
        for secret in SECRETS.values():
            assert secret not in output, command
    assert (project.root / "secrets" / "key.txt").read_text() == SECRETS["secrets/key.txt"] + "\n"
    assert (project.root / ".env").read_text() == SECRETS[".env"] + "\n"


@needs_sandbox
@pytest.mark.anyio
async def test_a_user_deny_rule_hides_its_folder_from_commands(project: Project) -> None:
    project.write("data/private/people.csv", "PRIVATE-ROW-7d8e\n")
    project.write("data/public/open.csv", "PUBLIC-ROW\n")
    policy = policy_for(project.root, PRIVATE_DATA_DENIED)
    output = await run(project, "cat data/*/*.csv 2>&1", judge=policy)
    assert "PRIVATE-ROW" not in output
    assert "PUBLIC-ROW" in output
    # Renamed, the folder would escape the rule that names it, for the next command to read.
    output = await run(project, "mv data elsewhere 2>&1; cat elsewhere/private/people.csv 2>&1", judge=policy)
    assert "Device or resource busy" in output
    assert (project.root / "data" / "private" / "people.csv").exists()
    output = await run(project, "cat data/private/people.csv elsewhere/private/people.csv 2>&1", judge=policy)
    assert "PRIVATE-ROW" not in output
    # Inside the folders leading to it the project stays writable.
    await run(project, "echo new > data/public/new.csv", judge=policy)
    assert (project.root / "data" / "public" / "new.csv").read_text() == "new\n"


@needs_sandbox
@pytest.mark.anyio
async def test_a_command_in_a_folder_of_the_project_cannot_read_the_rest_either(project: Project) -> None:
    plant(project)
    tool = execute_command_tool(SandboxSettings(mode="workspace-write"))
    inner = context(project, tool, judge=policy_for(project.root), working_dir=project.root / "src")
    outcome = await tool.invoke({"command": "cat ../.env ../secrets/key.txt secrets/x main.py 2>&1"}, inner)
    assert outcome.success, outcome.content
    assert "visible" in outcome.content
    for secret in SECRETS.values():
        assert secret not in outcome.content


class _OnlyPaths:
    """A judge that is not a :class:`PermissionPolicy`: it only answers ``judge_path``."""

    def __init__(self, policy: PermissionPolicy) -> None:
        self.policy = policy

    def judge_path(self, category: Literal["read", "edit"], path: str) -> Verdict:
        return self.policy.judge_path(category, path)


@needs_sandbox
@pytest.mark.anyio
async def test_any_path_judge_is_asked_about_each_path(project: Project) -> None:
    plant(project)
    tool = execute_command_tool(SandboxSettings(mode="workspace-write"))
    ctx = context(project, tool, judge=_OnlyPaths(policy_for(project.root)))
    outcome = await tool.invoke({"command": READ_ALL}, ctx)
    assert outcome.success, outcome.content
    assert "visible" in outcome.content
    for secret in SECRETS.values():
        assert secret not in outcome.content


@pytest.mark.anyio
async def test_unconfined_nothing_is_hidden_and_nothing_is_said_to_be(project: Project) -> None:
    plant(project)
    output = await run(project, "cat .env", judge=policy_for(project.root), mode="off")
    assert SECRETS[".env"] in output
    assert "Hidden" not in output


async def _refused_past_a_limit(
    project: Project, monkeypatch: pytest.MonkeyPatch, limit: str, value: int
) -> tuple[Tool, Path]:
    """Lower one limit of the refused-path scan to ``value`` and check that a command past it is refused, not
    run; the tool and the file the command would have made."""
    plant(project)
    monkeypatch.setattr(refused, limit, value)
    tool = execute_command_tool(SandboxSettings(mode="workspace-write"))
    marker = project.root / "src" / "ran"
    with pytest.raises(RefusedScanTooLarge, match="so the command was not run"):
        await tool.invoke(
            {"command": f"touch {marker}"}, context(project, tool, judge=policy_for(project.root))
        )
    assert not marker.exists()
    return tool, marker


@needs_sandbox
@pytest.mark.anyio
async def test_a_project_too_large_to_check_is_refused(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _refused_past_a_limit(project, monkeypatch, "SCAN_LIMIT", 5)


@needs_sandbox
@pytest.mark.anyio
async def test_more_refused_paths_than_a_command_can_hide_refuses_it(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool, marker = await _refused_past_a_limit(project, monkeypatch, "HIDDEN_LIMIT", 3)
    # Approved, only the two denied folders are hidden: that fits.
    outcome = await tool.invoke(
        {"command": f"touch {marker}"}, context(project, tool, judge=policy_for(project.root), approved=True)
    )
    assert outcome.success, outcome.content
    assert marker.exists()
