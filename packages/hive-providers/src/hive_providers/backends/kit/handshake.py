"""A CLI's first exchange (``initialize``), bounded in time and said as a start error when it fails.

The JSON-RPC backends (ACP, Codex's app-server) start their CLI and send it one request before anything else;
how that request fails says how the start failed, the same way for each: no answer in time, the CLI ended (its
process error), or it answered an error.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio

from hive_core.failures import ChatError
from hive_providers.backends.kit.cli_process import CliProcess
from hive_providers.backends.kit.errors import BackendStartError

__all__ = ["handshake"]


@asynccontextmanager
async def handshake(
    cli: CliProcess,
    timeout: float,
    *,
    ended: type[ChatError],
    rejected: type[Exception],
    failure: type[BackendStartError] = BackendStartError,
    what: str = "initialize",
) -> AsyncGenerator[None]:
    """Run the block (the CLI's ``what`` request) within ``timeout`` seconds.

    Raises :class:`BackendStartError` (code ``timeout``) when it takes longer; ``failure`` with the error's text
    and code when the block raises ``ended`` (the CLI died or closed its output); ``failure`` saying the CLI
    "failed ``what``" when it raises ``rejected`` (an error answer). Each message quotes the CLI's stderr tail.
    """
    try:
        with anyio.fail_after(timeout):
            yield
    except TimeoutError:
        await cli.settle_stderr()
        raise BackendStartError(
            cli.describe(f"{cli.name} did not answer {what} within {timeout:g} s"), code="timeout"
        ) from None
    except ended as exc:
        raise failure(str(exc), code=exc.code) from exc
    except rejected as exc:
        raise failure(cli.describe(f"{cli.name} failed {what}: {exc}")) from exc
