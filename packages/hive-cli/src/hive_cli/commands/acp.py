"""``hive acp``: hive as an Agent Client Protocol agent on stdin/stdout, for editors (see :mod:`hive_cli.acp_agent`)."""

from __future__ import annotations

import anyio

from hive_cli.assemble import HostOptions

__all__ = ["acp_main"]


def acp_main(options: HostOptions) -> int:
    """Serve ACP on stdio until the client closes stdin; return the exit code."""
    anyio.run(_serve, options)
    return 0


async def _serve(options: HostOptions) -> None:
    import acp

    from hive_cli.acp_agent import HiveAcpAgent

    async with anyio.create_task_group() as group:
        agent = HiveAcpAgent(options, group)
        try:
            # session/resume, session/fork and session/close are "unstable" in ACP 0.12: served only when asked for.
            await acp.run_agent(agent, use_unstable_protocol=True)
        finally:
            # The client is gone: every session's running turn is cancelled (it still ends) and its runner stops.
            agent.close()
