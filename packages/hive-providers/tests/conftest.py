"""Shared setup of the hive-providers tests (their helpers are in ``providers_harness``)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Every async test runs on asyncio."""
    return "asyncio"
