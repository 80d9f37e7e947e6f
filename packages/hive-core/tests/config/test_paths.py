"""The hive home and the project root."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import find_project_root
from hive_core.config import global_config_path
from hive_core.config import hive_home
from hive_core.config import home_project_problem
from hive_core.config import load_config
from hive_core.config import project_config_path
from hive_core.config import project_env_path
from hive_core.config import user_home


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
        (tmp_path / name / "config.yaml").write_text(f"defaultProvider: {model}\n")
    project = tmp_path / "project"
    project.mkdir()
    assert load_config(project, {"HIVE_HOME": str(tmp_path / "one")}).get("defaultProvider") == "m-one"
    loaded = load_config(project, {"HIVE_HOME": str(tmp_path / "two")})
    assert loaded.get("defaultProvider") == "m-two"
    assert loaded.home == tmp_path / "two"


def test_project_root_is_the_repository_root(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
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


def test_a_nested_hive_directory_never_marks_a_root(tmp_path: Path) -> None:
    (tmp_path / "mono" / ".git").mkdir(parents=True)
    (tmp_path / "mono" / "pkg" / ".hive").mkdir(parents=True)
    (tmp_path / "mono" / "pkg" / "src" / ".hive").mkdir(parents=True)
    start = tmp_path / "mono" / "pkg" / "src"
    assert find_project_root(start, home=tmp_path / "h") == (tmp_path / "mono").resolve()


def test_outside_a_repository_the_start_is_the_root_whatever_hive_directory_is_above(tmp_path: Path) -> None:
    (tmp_path / "plain" / ".hive").mkdir(parents=True)
    start = tmp_path / "plain" / "dir"
    start.mkdir(parents=True)
    assert find_project_root(start, home=tmp_path / "h") == start.resolve()


def test_a_repository_at_the_home_folder_or_above_is_not_the_project(tmp_path: Path) -> None:
    user = tmp_path / "user"
    (user / ".git").mkdir(parents=True)
    start = user / "code" / "app"
    start.mkdir(parents=True)
    assert find_project_root(start, home=user) == start.resolve()
    assert find_project_root(user, home=user) == user.resolve()
    # The same layout is a repository when that folder is not the home.
    assert find_project_root(start, home=tmp_path / "other") == user.resolve()


def test_the_home_folder_above_it_and_the_root_are_never_a_project(tmp_path: Path) -> None:
    user = tmp_path / "user"
    (user / "code").mkdir(parents=True)
    assert home_project_problem(user, home=user) == f"{user.resolve()} is your home folder"
    assert home_project_problem(tmp_path, home=user) == f"{tmp_path.resolve()} holds your home folder"
    assert home_project_problem(Path("/"), home=user) == "/ is the root of the file system"
    assert home_project_problem(user / "code", home=user) is None


def test_the_user_home_comes_from_home(tmp_path: Path) -> None:
    assert user_home({"HOME": str(tmp_path)}) == tmp_path.resolve()
