"""Shared setup of the hive-cli tests: the helper module on the import path, the workspace fixtures, and the
local-model run started early.

The local-model test spends most of a minute in the model. Its ``hive`` is started in the background as soon as
the first test of this folder runs, and the test itself is moved to the end of the run, so the other tests use that
minute instead of waiting for it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The tests run with --import-mode=importlib, which puts no test folder on sys.path; the helper module
# (named for its package, so it never collides) is imported from here.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from cli_harness import LOCAL_PROMPT  # noqa: E402
from cli_harness import Background  # noqa: E402
from cli_harness import Workspace  # noqa: E402
from cli_harness import scripted_server  # noqa: E402
from core_postgres import PostgresServer  # noqa: E402
from core_postgres import postgres  # noqa: E402, F401 - the PostgreSQL server fixture, for the store tests
from engine_harness import TemporalServer  # noqa: E402
from engine_harness import temporal_server  # noqa: E402

from hive_conformance.model_server import ScriptedModelServer  # noqa: E402

_LOCAL_FILE = "test_local_default.py"
_LOCAL_SELECTED = pytest.StashKey[bool]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Move the local-model test to the end, and note whether it is to run at all."""
    local = [item for item in items if item.path.name == _LOCAL_FILE]
    if local:
        items[:] = [item for item in items if item.path.name != _LOCAL_FILE] + local
    config.stash[_LOCAL_SELECTED] = bool(local)


@pytest.fixture(scope="session", autouse=True)
def local_default_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Workspace, Background] | None]:
    """The local-model ``hive -p`` of ``test_local_default``, started now in an empty home (``None`` when that
    test is not selected)."""
    if not request.config.stash.get(_LOCAL_SELECTED, False):
        yield None
        return
    workspace = Workspace.create(tmp_path_factory.mktemp("local-default"))
    del workspace.env["LMSUPPLY_ENABLED"]
    running = workspace.spawn("-p", LOCAL_PROMPT, "-o", "json")
    try:
        yield workspace, running
    finally:
        running.stop()


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """An empty hive home and project, with no provider configured and local inference off."""
    return Workspace.create(tmp_path)


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    """A scripted model server with no rounds yet (tests add them)."""
    with scripted_server() as running:
        yield running


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """``<tmp>/home``: a hive home, not created (``set`` must create it) and not named by the environment."""
    return tmp_path / "home"


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """``run_cli`` in this process takes over the root logger, as the ``hive`` command does: undo it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def temporal(tmp_path: Path) -> Iterator[TemporalServer]:
    """A Temporal dev server of the test's own (its history in the test's folder)."""
    with temporal_server(tmp_path) as server:
        yield server


@pytest.fixture
def store_url(postgres: PostgresServer) -> str:  # noqa: F811 - the fixture imported above, as a parameter
    """An empty database of the shared PostgreSQL server."""
    return postgres.new_database()
