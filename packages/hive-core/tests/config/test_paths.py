"""The hive home and the project root."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import (
    find_project_root,
    global_config_path,
    hive_home,
    load_config,
    project_config_path,
    project_env_path,
)
from hive_providers import CONFIG_SCHEMA


def test_hive_home_defaults_to_dot_hive_in_the_user_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert hive_home({}) == tmp_path / "user" / ".hive"
    assert hive_home({"HIVE_HOME": ""}) == tmp_path / "user" / ".hive"


def test_hive_home_is_moved_by_the_variable(tmp_path: Path) -> None:
    assert hive_home({"HIVE_HOME": str(tmp_path / "elsewhere")}) == tmp_path / "elsewhere"


def test_hive_home_expands_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hive_home({"HIVE_HOME": "~/hh"}) == tmp_path / "hh"


def test_hive_home_reads_the_process_environment_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIVE_HOME", str(tmp_path / "from-env"))
    assert hive_home() == tmp_path / "from-env"
    assert global_config_path() == tmp_path / "from-env" / "config.yaml"


def test_file_paths(tmp_path: Path) -> None:
    assert global_config_path(tmp_path / "h") == tmp_path / "h" / "config.yaml"
    assert project_config_path(tmp_path / "p") == tmp_path / "p" / ".hive" / "config.yaml"
    assert project_env_path(tmp_path / "p") == tmp_path / "p" / ".env"


def test_moving_the_home_moves_the_global_file_that_is_read(tmp_path: Path) -> None:
    for name, model in (("one", "m-one"), ("two", "m-two")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(f"openai:\n  model: {model}\n")
    project = tmp_path / "project"
    project.mkdir()
    assert (
        load_config(project, {"HIVE_HOME": str(tmp_path / "one")}, schema=CONFIG_SCHEMA).get("openai.model")
        == "m-one"
    )
    loaded = load_config(project, {"HIVE_HOME": str(tmp_path / "two")}, schema=CONFIG_SCHEMA)
    assert loaded.get("openai.model") == "m-two"
    assert loaded.home == tmp_path / "two"


@pytest.mark.parametrize("marker", [".hive", ".git"])
def test_project_root_is_the_nearest_marked_ancestor(tmp_path: Path, marker: str) -> None:
    root = tmp_path / "repo"
    (root / marker).mkdir(parents=True)
    deep = root / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project_root(deep, home=tmp_path / "home") == root.resolve()
    assert find_project_root(root, home=tmp_path / "home") == root.resolve()


def test_project_root_accepts_a_git_file_and_a_file_start(tmp_path: Path) -> None:
    root = tmp_path / "worktree"
    root.mkdir()
    (root / ".git").write_text("gitdir: /elsewhere\n")
    (root / "main.py").write_text("")
    assert find_project_root(root / "main.py", home=tmp_path / "home") == root.resolve()


def test_the_nearest_marker_wins(tmp_path: Path) -> None:
    (tmp_path / "mono" / ".git").mkdir(parents=True)
    (tmp_path / "mono" / "pkg" / ".hive").mkdir(parents=True)
    (tmp_path / "mono" / "pkg" / "src").mkdir()
    assert find_project_root(tmp_path / "mono" / "pkg" / "src", home=tmp_path / "h") == (
        tmp_path / "mono" / "pkg"
    )


def test_without_a_marker_the_start_is_the_root(tmp_path: Path) -> None:
    start = tmp_path / "plain" / "dir"
    start.mkdir(parents=True)
    assert find_project_root(start, home=tmp_path / "h") == start.resolve()


def test_the_hive_home_does_not_mark_a_project(tmp_path: Path) -> None:
    user = tmp_path / "user"
    (user / ".hive").mkdir(parents=True)
    start = user / "scratch"
    start.mkdir()
    assert find_project_root(start, home=user / ".hive") == start.resolve()
    # The same directory layout is a project when that .hive is not the home.
    assert find_project_root(start, home=tmp_path / "other") == user.resolve()
