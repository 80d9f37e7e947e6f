"""What a command inherits from hive's environment: the allow-list, never a key, with and without the sandbox;
and the ``sandbox`` configuration section as the command tool reads it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hive_core.builtin_tools import builtin_tools
from hive_core.builtin_tools import execute_command_tool
from hive_core.config import SCHEMA
from hive_core.config import ConfigError
from hive_core.config import ConfigSchema
from hive_core.config import FieldSpec
from hive_core.config import SectionSpec
from hive_core.config import load_config
from hive_core.sandbox import SandboxMode
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import command_environment
from hive_core.sandbox import probe_bubblewrap

if TYPE_CHECKING:
    from .conftest import Project

pytestmark = pytest.mark.anyio

_PROBE = probe_bubblewrap()
BOTH_MODES = pytest.mark.parametrize(
    "mode",
    [
        pytest.param(
            "workspace-write",
            marks=pytest.mark.skipif(not _PROBE.usable, reason=f"no usable sandbox here: {_PROBE.problem}"),
        ),
        "off",
    ],
)

KEY = "sk-test-hive-env-0123456789abcdef"

# A host's schema: hive-core's keys plus one provider section whose key comes from a variable.
HOST_SCHEMA = ConfigSchema(
    [
        SectionSpec(
            name="openai",
            doc="A provider.",
            fields=(FieldSpec(name="apiKey", kind="str", doc="The key.", env=("OPENAI_API_KEY",)),),
        ),
        *SCHEMA.values(),
    ]
)


async def run(project: Project, command: str, settings: SandboxSettings) -> str:
    return await project.call(execute_command_tool(settings), command=command)


@BOTH_MODES
async def test_a_provider_key_never_reaches_a_command(
    project: Project, monkeypatch: pytest.MonkeyPatch, mode: SandboxMode
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-hive-test-token")
    monkeypatch.setenv("LANG", "C.UTF-8")
    command = 'printenv OPENAI_API_KEY; echo "key=$?"; printenv GITHUB_TOKEN; echo "lang=$LANG"'
    reply = await run(project, command, SandboxSettings(mode=mode))
    assert reply == "Exit code: 0\nOutput:\nkey=1\nlang=C.UTF-8"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@BOTH_MODES
async def test_the_git_alias_attack_prints_no_key(
    project: Project, monkeypatch: pytest.MonkeyPatch, mode: SandboxMode
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # Made outside: the sandbox lets no command create a repository.
    await run(project, "git init -q .", SandboxSettings(mode="off"))
    command = "git -c alias.e='!printenv OPENAI_API_KEY' e; echo exit=$?"
    reply = await run(project, command, SandboxSettings(mode=mode))
    assert KEY not in reply
    assert reply.endswith("exit=1"), reply


@BOTH_MODES
async def test_configured_variables_pass_but_wildcards_pass_no_secret(
    project: Project, monkeypatch: pytest.MonkeyPatch, mode: SandboxMode
) -> None:
    for name, value in {
        "MY_TOOL_HOME": "/opt/tool",
        "HIVEX_COLOR": "blue",
        "HIVEX_TOKEN": "hidden-1",
        "HIVEX_API_KEY": "hidden-2",
        "EXACT_TOKEN": "named-exactly",
        "UNLISTED": "hidden-3",
    }.items():
        monkeypatch.setenv(name, value)
    settings = SandboxSettings(mode=mode, passed_variables=("MY_TOOL_HOME", "HIVEX_*", "EXACT_TOKEN"))
    reply = await run(project, "env | grep -E '^(MY_TOOL|HIVEX|EXACT|UNLISTED)' | sort", settings)
    assert reply == (
        "Exit code: 0\nOutput:\nEXACT_TOKEN=named-exactly\nHIVEX_COLOR=blue\nMY_TOOL_HOME=/opt/tool"
    )


def test_withheld_variables_never_pass_whatever_lists_them() -> None:
    environ = {"OPENAI_API_KEY": KEY, "OPENAI_ENDPOINT": "https://user:pw@host", "PATH": "/bin", "ODD": "1"}
    passed = command_environment(
        environ, passed=("OPENAI_API_KEY", "*"), withheld={"OPENAI_API_KEY", "OPENAI_ENDPOINT"}
    )
    assert passed == {"PATH": "/bin", "ODD": "1"}


def test_the_built_in_list_passes_the_basics_and_nothing_else() -> None:
    environ = {
        "PATH": "/bin",
        "HOME": "/home/me",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TERM": "xterm",
        "SSH_AUTH_SOCK": "/run/agent",
        "AWS_SECRET_ACCESS_KEY": "x",
        "ANTHROPIC_API_KEY": "y",
        "HIVE_HOME": "/h",
        "PWD": "/elsewhere",
    }
    assert command_environment(environ) == {
        "PATH": "/bin",
        "HOME": "/home/me",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TERM": "xterm",
    }


@pytest.mark.skipif(not _PROBE.usable, reason=f"no usable sandbox here: {_PROBE.problem}")
async def test_tmpdir_outside_the_sandbox_s_reach_becomes_its_own(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", "/var/tmp")
    reply = await run(project, 'echo "$TMPDIR"; mktemp', SandboxSettings(mode="workspace-write"))
    assert reply.startswith("Exit code: 0\nOutput:\n/tmp\n/tmp/tmp."), reply


# -- the configuration --------------------------------------------------------------------------------------------


def write_config(project: Path, text: str) -> None:
    (project / ".hive").mkdir(exist_ok=True)
    (project / ".hive" / "config.yaml").write_text(text, encoding="utf-8")


def test_the_defaults(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, {"HIVE_HOME": str(tmp_path / "home")}, schema=HOST_SCHEMA)
    settings = SandboxSettings.from_config(loaded)
    assert settings == SandboxSettings(
        mode="auto",
        network_access=False,
        # The store's URL may hold its password: a command the model runs does not see it.
        withheld_variables=frozenset({"OPENAI_API_KEY", "HIVE_SESSION_STORE"}),
        hive_home=tmp_path / "home",
    )


def test_every_key_is_read(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        "sandbox:\n  mode: read-only\n  networkAccess: true\n  passVariables: [JAVA_OPTS, 'MY_*']\n"
        "  writablePaths: [~/cache, build]\n",
    )
    loaded = load_config(
        tmp_path,
        {"HIVE_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)},
        schema=HOST_SCHEMA,
        trusted=True,
    )
    settings = SandboxSettings.from_config(loaded)
    assert settings.mode == "read-only"
    assert settings.network_access is True
    assert settings.passed_variables == ("JAVA_OPTS", "MY_*")
    assert settings.writable_paths == (Path("~/cache").expanduser(), tmp_path / "build")


def test_an_unknown_mode_is_an_error_naming_the_file(tmp_path: Path) -> None:
    write_config(tmp_path, "sandbox:\n  mode: strict\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, {"HIVE_HOME": str(tmp_path / "home")}, schema=HOST_SCHEMA)
    message = str(caught.value)
    assert "config.yaml:2" in message
    assert "'sandbox.mode' must be one of auto, workspace-write, read-only, off" in message


@pytest.mark.skipif(not _PROBE.usable, reason=f"no usable sandbox here: {_PROBE.problem}")
async def test_a_dotenv_that_holds_keys_is_hidden_and_one_that_does_not_is_seen(project: Project) -> None:
    home = {"HIVE_HOME": str(project.root.parent / "home")}
    project.write(".env", f"OPENAI_API_KEY={KEY}\n")
    keyed = SandboxSettings.from_config(load_config(project.root, home, schema=HOST_SCHEMA))
    assert KEY not in await run(project, "cat .env", keyed)
    project.write(".env", "APP_PORT=8080\n")
    plain = SandboxSettings.from_config(load_config(project.root, home, schema=HOST_SCHEMA))
    assert "APP_PORT=8080" in await run(project, "cat .env", plain)


async def test_builtin_tools_threads_the_settings_into_execute_command(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = builtin_tools(sandbox=SandboxSettings(mode="off", passed_variables=("HIVE_TEST_PASSED",)))
    assert [each.name for each in tools] == [each.name for each in builtin_tools()]
    (command,) = [each for each in tools if each.name == "execute_command"]
    monkeypatch.setenv("HIVE_TEST_PASSED", "yes")
    assert await project.call(command, command="printenv HIVE_TEST_PASSED") == "Exit code: 0\nOutput:\nyes"
