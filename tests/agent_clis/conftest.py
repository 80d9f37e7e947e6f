"""Shared setup of the end-to-end tests of the real coding-agent CLIs: the helper modules on the import path, the
anyio backend of the in-process tests, and the scripted model servers of each test module (shared by its tests),
answering every CLI from what its requests contain."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The tests run with --import-mode=importlib, which puts no test folder on sys.path; the helper modules (named
# for their folder, so they never collide) are imported from here.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from agent_clis_harness import ModelServers  # noqa: E402  (needs the path above)


@pytest.fixture
def anyio_backend() -> str:
    """The in-process tests run on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="module")
def model_servers() -> Iterator[ModelServers]:
    """The module's scripted models, by CLI (see :class:`ModelServers`)."""
    with contextlib.ExitStack() as stack:
        yield ModelServers(stack)
