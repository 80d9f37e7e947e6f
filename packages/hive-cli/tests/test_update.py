"""``hive update`` against a fake package index on 127.0.0.1 (newer, same, pre-release, yanked, HTML, unreachable),
and the upgrade command it runs for each way of installing hive (recorded, never run)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import pytest
from cli_fake_index import FakeIndex
from cli_fake_index import fake_index
from cli_harness import Workspace

from hive_cli.commands.update import index_url
from hive_cli.commands.update import index_urls
from hive_cli.commands.update import update_main
from hive_providers.installation import Installation
from hive_providers.installation import detect_installation
from hive_providers.installation import local_runtime_advice

INSTALLED = metadata.version("hive-agent-host")
"""The version of the workspace's hive-agent-host (what the dev environment's ``hive`` checks)."""


@pytest.fixture
def index() -> Iterator[FakeIndex]:
    with fake_index() as fake:
        yield fake


def wheel(version: str, name: str = "hive_agent_host") -> str:
    return f"{name}-{version}-py3-none-any.whl"


def index_env(url: str, **extra: str) -> dict[str, str]:
    return {
        "PIP_INDEX_URL": url,
        "UV_INDEX_URL": "",
        "UV_DEFAULT_INDEX": "",
        "PIP_EXTRA_INDEX_URL": "",
        "UV_EXTRA_INDEX_URL": "",
        "UV_INDEX": "",
        "PIP_CONFIG_FILE": "/dev/null",
        **extra,
    }


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- the check, through the command --------------------------------------------------------------------------------


def test_a_newer_version_is_exit_2_and_asked_through_the_json_api(ws: Workspace, index: FakeIndex) -> None:
    index.files["hive-agent-host"] = [wheel("0.0.5"), wheel("99.1.0"), "hive_agent_host-99.0.3.tar.gz"]
    result = ws.run("update", "--check", env=index_env(index.url))
    assert result.code == 2, result
    assert result.stdout.startswith(f"hive-agent-host 99.1.0 is available (you have {INSTALLED}).\n")
    path, accept = index.requests[0]
    assert path == "/simple/hive-agent-host/"
    assert accept.startswith("application/vnd.pypi.simple.v1+json")


def test_the_same_version_is_up_to_date(ws: Workspace, index: FakeIndex) -> None:
    index.files["hive-agent-host"] = [wheel("0.0.5"), wheel(INSTALLED)]
    result = ws.run("update", "--check", env=index_env(index.url))
    assert result.code == 0, result
    assert (
        result.stdout
        == f"hive {INSTALLED} is up to date (hive-agent-host {INSTALLED} is the newest on the index).\n"
    )


def test_a_pre_release_is_ignored_unless_pre(ws: Workspace, index: FakeIndex) -> None:
    index.files["hive-agent-host"] = [wheel(INSTALLED), wheel("99.0.0rc1")]
    plain = ws.run("update", "--check", env=index_env(index.url))
    assert plain.code == 0, plain
    assert "up to date" in plain.stdout
    assert "99.0.0rc1 is a pre-release: `hive update --pre`" in plain.stdout
    pre = ws.run("update", "--check", "--pre", env=index_env(index.url))
    assert pre.code == 2, pre
    assert pre.stdout.startswith("hive-agent-host 99.0.0rc1 is available")


def test_a_yanked_release_is_ignored(ws: Workspace, index: FakeIndex) -> None:
    index.files["hive-agent-host"] = [wheel(INSTALLED), "!" + wheel("99.0.0")]
    result = ws.run("update", "--check", env=index_env(index.url))
    assert result.code == 0, result
    assert "up to date" in result.stdout


def test_an_html_only_index_is_understood(ws: Workspace, index: FakeIndex) -> None:
    index.html = True
    index.files["hive-agent-host"] = [wheel("0.0.1"), wheel("99.2.0"), "!" + wheel("100.0.0")]
    result = ws.run("update", "--check", env=index_env(index.url))
    assert result.code == 2, result
    assert result.stdout.startswith("hive-agent-host 99.2.0 is available")


def test_an_unreachable_index_is_exit_1_and_says_why(ws: Workspace) -> None:
    result = ws.run("update", "--check", env=index_env(f"http://127.0.0.1:{closed_port()}/simple"))
    assert result.code == 1, result
    assert result.stdout == ""
    assert result.stderr.startswith(
        f"hive {INSTALLED}: could not check for updates: the index http://127.0.0.1:"
    )
    assert "cannot be reached" in result.stderr


def test_a_project_missing_from_the_index_is_exit_1(ws: Workspace, index: FakeIndex) -> None:
    index.files["hive-cli"] = [wheel("0.2.2", "hive_cli")]  # someone else's project: never asked about
    result = ws.run("update", "--check", env=index_env(index.url))
    assert result.code == 1, result
    assert "hive-agent-host is not on the index" in result.stderr
    assert [path for path, _ in index.requests] == ["/simple/hive-agent-host/"]


def test_a_source_checkout_is_not_upgraded(ws: Workspace, index: FakeIndex) -> None:
    index.files["hive-agent-host"] = [wheel("99.0.0")]
    result = ws.run("update", env=index_env(index.url))
    assert result.code == 1, result
    assert "hive runs from a source checkout" in result.stdout


# -- extra indexes --------------------------------------------------------------------------------------------


@pytest.fixture
def extra() -> Iterator[FakeIndex]:
    with fake_index() as fake:
        yield fake


def asked(fake: FakeIndex) -> list[str]:
    return [path for path, _ in fake.requests]


def test_a_newer_version_on_an_extra_index_wins(ws: Workspace, index: FakeIndex, extra: FakeIndex) -> None:
    index.files["hive-agent-host"] = [wheel(INSTALLED)]
    extra.files["hive-agent-host"] = [wheel("0.0.1"), wheel("99.3.0")]
    result = ws.run("update", "--check", env=index_env(index.url, PIP_EXTRA_INDEX_URL=f"  {extra.url}  "))
    assert result.code == 2, result
    assert result.stdout.startswith(f"hive-agent-host 99.3.0 is available (you have {INSTALLED}).\n")
    assert result.stderr == ""
    assert asked(index) == asked(extra) == ["/simple/hive-agent-host/"]


def test_the_default_index_newest_wins_over_an_older_extra_one(
    ws: Workspace, index: FakeIndex, extra: FakeIndex
) -> None:
    index.files["hive-agent-host"] = [wheel("99.4.0")]
    extra.files["hive-agent-host"] = [wheel("99.0.0"), wheel(INSTALLED)]
    result = ws.run("update", "--check", env=index_env(index.url, UV_EXTRA_INDEX_URL=extra.url))
    assert result.code == 2, result
    assert result.stdout.startswith("hive-agent-host 99.4.0 is available")
    assert asked(extra) == ["/simple/hive-agent-host/"]


def test_uv_index_entries_may_be_named_and_an_index_without_hive_is_no_failure(
    ws: Workspace, index: FakeIndex, extra: FakeIndex
) -> None:
    index.files["hive-agent-host"] = [wheel(INSTALLED)]
    extra.files["other"] = [wheel("1.0", "other")]  # hive is not on it: 404, said nowhere
    with fake_index() as third:
        third.files["hive-agent-host"] = [wheel("99.5.0")]
        result = ws.run(
            "update", "--check", env=index_env(index.url, UV_INDEX=f"mine={extra.url} {third.url}")
        )
    assert result.code == 2, result
    assert result.stdout.startswith("hive-agent-host 99.5.0 is available")
    assert result.stderr == ""
    assert asked(extra) == asked(third) == ["/simple/hive-agent-host/"]


def test_an_unreachable_extra_index_is_a_warning_when_another_answered(
    ws: Workspace, index: FakeIndex
) -> None:
    index.files["hive-agent-host"] = [wheel(INSTALLED)]
    gone = f"http://127.0.0.1:{closed_port()}/simple"
    result = ws.run("update", "--check", env=index_env(index.url, PIP_EXTRA_INDEX_URL=gone))
    assert result.code == 0, result
    assert result.stdout.startswith(f"hive {INSTALLED} is up to date")
    assert result.stderr.startswith(f"hive: warning: the index {gone} cannot be reached (")
    assert result.stderr.count("\n") == 1, result.stderr


def test_an_unreachable_default_index_is_a_warning_when_an_extra_one_answered(
    ws: Workspace, extra: FakeIndex
) -> None:
    extra.files["hive-agent-host"] = [wheel("99.6.0")]
    gone = f"http://127.0.0.1:{closed_port()}/simple"
    result = ws.run("update", "--check", env=index_env(gone, UV_EXTRA_INDEX_URL=extra.url))
    assert result.code == 2, result
    assert result.stdout.startswith("hive-agent-host 99.6.0 is available")
    assert result.stderr.startswith(f"hive: warning: the index {gone} cannot be reached")


def test_when_no_index_answers_the_check_fails_naming_each(ws: Workspace) -> None:
    first = f"http://127.0.0.1:{closed_port()}/simple"
    second = f"http://127.0.0.1:{closed_port()}/extra"
    result = ws.run("update", "--check", env=index_env(first, PIP_EXTRA_INDEX_URL=second))
    assert result.code == 1, result
    assert result.stdout == ""
    assert result.stderr.startswith(
        f"hive {INSTALLED}: could not check for updates: the index {first} cannot"
    )
    assert f"; the index {second} cannot be reached" in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr


def test_when_no_index_holds_hive_the_check_fails_naming_them(
    ws: Workspace, index: FakeIndex, extra: FakeIndex
) -> None:
    result = ws.run("update", "--check", env=index_env(index.url, UV_EXTRA_INDEX_URL=extra.url))
    assert result.code == 1, result
    assert result.stderr == (
        f"hive {INSTALLED}: could not check for updates: hive-agent-host is not on the indexes "
        f"{index.url}, {extra.url}\n"
    )


def test_a_file_index_is_read_from_the_disk(ws: Workspace, index: FakeIndex, tmp_path: Path) -> None:
    index.files["hive-agent-host"] = [wheel(INSTALLED)]
    local = tmp_path / "local index"
    page = local / "hive-agent-host" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(f'<html><body><a href="../../files/{wheel("99.7.0")}#sha256=00">x</a></body></html>')
    result = ws.run("update", "--check", env=index_env(index.url, PIP_EXTRA_INDEX_URL=local.as_uri()))
    assert result.code == 2, result
    assert result.stdout.startswith("hive-agent-host 99.7.0 is available")
    assert result.stderr == ""
    page.unlink()  # the project is not on it: no failure while the default index answers
    again = ws.run("update", "--check", env=index_env(index.url, PIP_EXTRA_INDEX_URL=local.as_uri()))
    assert (again.code, again.stderr) == (0, ""), again


def test_the_extra_indexes_come_from_the_variables_then_pips_configuration(tmp_path: Path) -> None:
    pip = installation("pip", tmp_path)
    config = tmp_path / "pip.conf"
    config.write_text(
        "[global]\nindex-url = http://conf.test/simple\n"
        "extra-index-url =\n    http://one.test/simple\n    http://two.test/simple\n"
    )
    files = {
        "PIP_CONFIG_FILE": str(config),
        "XDG_CONFIG_DIRS": str(tmp_path / "none"),
        "XDG_CONFIG_HOME": str(tmp_path / "none"),
    }
    assert index_urls(pip, files) == [
        "http://conf.test/simple",
        "http://one.test/simple",
        "http://two.test/simple",
    ]
    # The variable replaces pip's option, as in pip; uv's are added; each index is asked once.
    variables = {
        **files,
        "PIP_EXTRA_INDEX_URL": "http://env.test/simple http://conf.test/simple",
        "UV_EXTRA_INDEX_URL": "http://uv-extra.test/simple",
        "UV_INDEX": "named=http://uv-named.test/simple http://uv.test/simple?token=a=b",
    }
    assert index_urls(pip, variables) == [
        "http://conf.test/simple",
        "http://env.test/simple",
        "http://uv-extra.test/simple",
        "http://uv-named.test/simple",
        "http://uv.test/simple?token=a=b",
    ]


# -- which index ------------------------------------------------------------------------------------------------


def installation(method: str, tmp_path: Path, name: str = "hive-agent-host") -> Installation:
    return Installation(method, name, tmp_path, tmp_path / "bin" / "python")  # pyright: ignore[reportArgumentType]


def test_the_index_comes_from_the_variables_then_pips_configuration(tmp_path: Path) -> None:
    pip = installation("pip", tmp_path)
    uv = installation("uv-tool", tmp_path)
    both = {"PIP_INDEX_URL": "http://pip.test/simple", "UV_DEFAULT_INDEX": "http://uv.test/simple"}
    assert index_url(pip, both) == "http://pip.test/simple"
    assert index_url(uv, both) == "http://uv.test/simple"
    config = tmp_path / "pip.conf"
    config.write_text(
        "[global]\nindex-url = http://global.test/simple\n[install]\nindex-url = http://conf.test/simple\n"
    )
    assert (
        index_url(
            pip,
            {
                "PIP_CONFIG_FILE": str(config),
                "XDG_CONFIG_DIRS": str(tmp_path / "none"),
                "XDG_CONFIG_HOME": str(tmp_path / "none"),
            },
        )
        == "http://conf.test/simple"
    )


def test_without_a_configured_index_it_is_pips_default(tmp_path: Path) -> None:
    pip_index = pytest.importorskip("pip._internal.models.index")
    assert (
        index_url(installation("pip", tmp_path), {"PIP_CONFIG_FILE": os.devnull}) == pip_index.PyPI.simple_url
    )


# -- the upgrade, recorded --------------------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    def __call__(self, command: Sequence[str]) -> int:
        self.commands.append(list(command))
        return 0


def fake_environment(prefix: Path, installer: str, *names: str) -> Path:
    """An environment at ``prefix`` holding the metadata of ``names`` (version 0.1.0) installed by ``installer``."""
    from hive_providers.installation import _site_packages  # pyright: ignore[reportPrivateUsage]

    site = _site_packages(prefix)[0]
    for name in names:
        info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
        (info / "INSTALLER").write_text(f"{installer}\n")
    return prefix


@pytest.mark.parametrize(
    ("marker", "installer", "expected"),
    [
        ("pipx_metadata.json", "pip", ["pipx", "upgrade", "hive-agent-host"]),
        ("uv-receipt.toml", "uv", ["uv", "tool", "upgrade", "hive-agent-host"]),
        (None, "uv", ["uv", "pip", "install", "--python", "{python}", "--upgrade", "hive-agent-host"]),
        (None, "pip", ["{python}", "-m", "pip", "install", "--upgrade", "hive-agent-host"]),
    ],
)
def test_the_upgrade_is_run_the_way_hive_was_installed(
    tmp_path: Path,
    index: FakeIndex,
    monkeypatch: pytest.MonkeyPatch,
    marker: str | None,
    installer: str,
    expected: list[str],
) -> None:
    prefix = fake_environment(tmp_path / "env", installer, "hive-agent-cli", "hive-agent-host")
    if marker is not None:
        (prefix / marker).write_text("{}\n")
    python = prefix / "bin" / "python"
    found = detect_installation(prefix, python)
    assert found.distribution == "hive-agent-host"
    for name, value in index_env(index.url).items():
        monkeypatch.setenv(name, value)
    index.files["hive-agent-host"] = [wheel(INSTALLED), wheel("99.0.0")]
    recorder = Recorder()
    assert update_main(check=False, installation=found, runner=recorder) == 0
    assert recorder.commands == [[str(python) if part == "{python}" else part for part in expected]]


def test_force_reinstalls_when_up_to_date_and_pre_allows_pre_releases(
    tmp_path: Path, index: FakeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in index_env(index.url).items():
        monkeypatch.setenv(name, value)
    index.files["hive-agent-host"] = [wheel(INSTALLED)]
    recorder = Recorder()
    assert update_main(check=False, installation=installation("uv-tool", tmp_path), runner=recorder) == 0
    assert recorder.commands == []
    assert (
        update_main(check=False, force=True, installation=installation("uv-tool", tmp_path), runner=recorder)
        == 0
    )
    assert recorder.commands == [["uv", "tool", "upgrade", "--reinstall", "hive-agent-host"]]
    index.files["hive-agent-host"].append(wheel("99.0.0b1"))
    pipx = installation("pipx", tmp_path)
    assert update_main(check=False, pre=True, force=True, installation=pipx, runner=recorder) == 0
    assert recorder.commands[-1] == [
        "pipx",
        "upgrade",
        "--pip-args=--force-reinstall --pre",
        "hive-agent-host",
    ]


def test_dry_run_says_the_command_and_runs_nothing(
    tmp_path: Path, index: FakeIndex, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in index_env(index.url).items():
        monkeypatch.setenv(name, value)
    index.files["hive-agent-host"] = [wheel("99.0.0")]
    recorder = Recorder()
    assert (
        update_main(check=False, dry_run=True, installation=installation("pipx", tmp_path), runner=recorder)
        == 0
    )
    assert recorder.commands == []
    assert capsys.readouterr().out.endswith("would run: pipx upgrade hive-agent-host\n")


def test_the_cli_alone_is_detected_and_told_how_to_get_the_local_model(tmp_path: Path) -> None:
    prefix = fake_environment(tmp_path / "env", "pip", "hive-agent-cli")
    (prefix / "pipx_metadata.json").write_text("{}\n")
    found = detect_installation(prefix, prefix / "bin" / "python")
    assert (found.method, found.distribution) == ("pipx", "hive-agent-cli")
    assert "`pipx uninstall hive-agent-cli && pipx install hive-agent-host`" in local_runtime_advice(found)
    plain = detect_installation(
        fake_environment(tmp_path / "venv", "pip", "hive-agent-cli"), Path("/x/python")
    )
    assert plain.method == "pip"
    assert "`/x/python -m pip install hive-agent-host`" in local_runtime_advice(plain)
