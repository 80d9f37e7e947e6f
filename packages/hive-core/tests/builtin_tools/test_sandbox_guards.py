"""What git and hive trust stays read-only in the sandbox, present or absent, and the mount points hive makes for
absent ones leave the tree as it was, also when commands run at once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest

from hive_core.builtin_tools import execute_command_tool
from hive_core.sandbox import SandboxMode
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import probe_bubblewrap
from hive_core.sandbox.placeholders import Placeholder
from hive_core.sandbox.placeholders import claim_placeholders

if TYPE_CHECKING:
    from .conftest import Project

pytestmark = pytest.mark.anyio

_PROBE = probe_bubblewrap()
needs_sandbox = pytest.mark.skipif(
    not _PROBE.usable, reason=f"no usable bubblewrap sandbox on this machine: {_PROBE.problem}"
)
CONFINED_AND_NOT = pytest.mark.parametrize(
    "mode", [pytest.param("workspace-write", marks=needs_sandbox), "off"]
)


async def run(project: Project, command: str, mode: SandboxMode = "workspace-write") -> str:
    return await project.call(execute_command_tool(SandboxSettings(mode=mode)), command=command)


@needs_sandbox
async def test_a_guard_outlives_a_command_that_ends_while_another_relies_on_it(project: Project) -> None:
    fifo = project.root / "go"
    os.mkfifo(fifo)
    outputs: dict[str, str] = {}

    async def first() -> None:
        outputs["first"] = await run(project, 'cat go > /dev/null; echo planted > .env; echo "first: $?"')

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(first)
        with anyio.fail_after(30):
            # Opening the pipe for writing returns once the first command, inside its sandbox, reads it.
            writer = await anyio.to_thread.run_sync(
                lambda: os.open(fifo, os.O_WRONLY), abandon_on_cancel=True
            )
        outputs["second"] = await run(project, "echo second ran")
        # The second command is over; the first still runs, so its read-only .env stays in place.
        assert (project.root / ".env").exists()
        os.write(writer, b"go\n")
        os.close(writer)
    assert "second ran" in outputs["second"]
    assert "first: 1" in outputs["first"], outputs
    assert "Read-only file system" in outputs["first"] or "Permission denied" in outputs["first"]
    assert sorted(path.name for path in project.root.iterdir()) == ["go"]


@CONFINED_AND_NOT
async def test_a_git_file_and_the_repository_it_names_stay_read_only(
    project: Project, mode: SandboxMode
) -> None:
    store = project.root / "store"
    (store / "hooks").mkdir(parents=True)
    (store / "config").write_text("[core]\n")
    gitfile = project.write(".git", "gitdir: store\n")
    command = (
        "echo '  fsmonitor = evil' >> store/config; echo evil > store/hooks/pre-commit; "
        "echo 'gitdir: /elsewhere' > .git; mv .git moved; echo done"
    )
    assert "done" in await run(project, command, mode)
    changed = mode == "off"
    assert ("evil" in (store / "config").read_text()) is changed
    assert (store / "hooks" / "pre-commit").exists() is changed
    assert (project.root / "moved").exists() is changed
    if not changed:
        assert gitfile.read_text() == "gitdir: store\n"


@needs_sandbox
async def test_git_reads_in_the_sandbox_and_cannot_commit(project: Project) -> None:
    git = "git -c user.name=t -c user.email=t@example.test"
    command = (
        f"{git} init -q && echo one > a.txt && {git} add a.txt && {git} commit -q -m one && echo two >> a.txt"
    )
    await run(project, command, "off")
    reply = await run(
        project,
        f"git status --short; git diff --stat; git log --oneline; {git} commit -qam two; echo commit $?",
    )
    assert " M a.txt" in reply
    assert "1 file changed" in reply
    assert " one" in reply
    assert "Read-only file system" in reply
    assert "commit 128" in reply


def test_a_placeholder_stays_while_claimed_and_goes_with_the_last_claim(tmp_path: Path) -> None:
    wanted = [Placeholder(tmp_path / ".env", False), Placeholder(tmp_path / ".git", True)]
    first = claim_placeholders(wanted)
    second = claim_placeholders(wanted)
    assert (tmp_path / ".env").is_file()
    assert (tmp_path / ".git").is_dir()
    first.release()
    assert (tmp_path / ".env").is_file()
    assert (tmp_path / ".git").is_dir()
    second.release()
    second.release()
    assert list(tmp_path.iterdir()) == []


def test_what_existed_or_was_filled_is_never_removed(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("")  # the user's own, empty
    claim = claim_placeholders([Placeholder(tmp_path / ".env", False), Placeholder(tmp_path / ".hive", True)])
    (tmp_path / ".hive" / "todo.json").write_text("[]")  # hive wrote there meanwhile
    claim.release()
    assert (tmp_path / ".env").is_file()
    assert (tmp_path / ".hive" / "todo.json").is_file()


@CONFINED_AND_NOT
async def test_the_common_directory_a_repository_names_stays_read_only(
    project: Project, mode: SandboxMode
) -> None:
    shared = project.root / "shared"
    shared.mkdir()
    (shared / "config").write_text("[core]\n")
    project.write(".git/commondir", "../shared\n")
    assert "done" in await run(project, "echo '  fsmonitor = evil' >> shared/config; echo done", mode)
    assert ("evil" in (shared / "config").read_text()) is (mode == "off")


@needs_sandbox
async def test_a_guarded_link_is_put_back(project: Project) -> None:
    real_env = project.write("config/env", "APP_PORT=8080\n")
    (project.root / ".env").symlink_to("config/env")
    real_git = project.root / "repository"
    (real_git / "hooks").mkdir(parents=True)
    (project.root / ".git").symlink_to("repository")
    command = (
        "echo X=1 >> .env; rm .env && echo OPENAI_BASE_URL=http://evil.invalid > .env; "
        "echo evil > repository/hooks/pre-commit; rm .git && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit; "
        "echo done"
    )
    assert "done" in await run(project, command)
    assert os.readlink(project.root / ".env") == "config/env"
    assert real_env.read_text() == "APP_PORT=8080\n"
    assert os.readlink(project.root / ".git") == "repository"
    assert not (real_git / "hooks" / "pre-commit").exists()
    # The directory the command built in the link's place is kept, aside, where git does not look.
    (aside,) = [path for path in project.root.iterdir() if path.name.startswith(".git.replaced-")]
    assert (aside / "hooks" / "pre-commit").read_text() == "evil\n"


@CONFINED_AND_NOT
async def test_hooks_and_included_configuration_in_the_worktree_stay_read_only(
    project: Project, mode: SandboxMode
) -> None:
    git = "git -c user.name=t -c user.email=t@example.test"
    setup = (
        f"{git} init -q && git config core.hooksPath .husky && git config include.path ../shared.gitconfig "
        "&& git config includeIf.onbranch:main.path ../later.gitconfig && mkdir .husky "
        "&& echo 'echo ok' > .husky/pre-commit && printf '[user]\\n\\tname = t\\n' > shared.gitconfig"
    )
    await run(project, setup, "off")
    command = (
        "echo evil >> .husky/pre-commit; echo '[core] fsmonitor = evil' >> shared.gitconfig; "
        "echo '[core] fsmonitor = evil' > later.gitconfig; echo done"
    )
    assert "done" in await run(project, command, mode)
    changed = mode == "off"
    assert ("evil" in (project.root / ".husky" / "pre-commit").read_text()) is changed
    assert ("evil" in (project.root / "shared.gitconfig").read_text()) is changed
    assert (project.root / "later.gitconfig").exists() is changed


@CONFINED_AND_NOT
async def test_other_env_files_stay_read_only(project: Project, mode: SandboxMode) -> None:
    local = project.write(".env.local", "APP_PORT=8080\n")
    assert "done" in await run(
        project, "echo OPENAI_BASE_URL=http://evil.invalid >> .env.local; echo done", mode
    )
    assert ("evil" in local.read_text()) is (mode == "off")
