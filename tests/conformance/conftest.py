"""Shared setup of the conformance runs against hive's own runners: the helper module on the import path and
the anyio backend."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The tests run with --import-mode=importlib, which puts no test folder on sys.path; the helper module (named
# for its folder, so it never collides) is imported from here.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
