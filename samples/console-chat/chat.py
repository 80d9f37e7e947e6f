"""A terminal chat on hive's SDK: one agent, one conversation, replies streamed as they come.

Run: uv run python samples/console-chat/chat.py [--provider NAME] [-m MODEL]

The model is chosen as the ``hive`` command chooses it (its configuration files and environment variables:
``OPENAI_API_KEY`` and ``OPENAI_MODEL``, ``ANTHROPIC_API_KEY``...), and with nothing configured it is the local
model, run in process. Type a message and press Enter; Ctrl+D (end of input) leaves.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

import anyio
import anyio.to_thread

from hive_core import Agent
from hive_core import AgentSession
from hive_core import open_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.config import ConfigError
from hive_core.config import find_project_root
from hive_core.config import load_config
from hive_core.tool_retrieval import ToolRetrieval
from hive_protocol import ErrorEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_providers import CONFIG_SCHEMA
from hive_providers.registry import ProviderSelectionError
from hive_providers.registry import choose_provider
from hive_providers.registry import create_client

INSTRUCTIONS = "You are a friendly assistant in a terminal chat. Answer briefly and plainly."


@tool(read_only=True)
def current_time() -> str:
    """The current local date and time."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


def build_session(provider: str | None, model: str | None) -> tuple[AgentSession, str]:
    """The conversation, on the model the configuration (or ``provider`` / ``model``) names, and its name."""
    config = load_config(find_project_root(Path.cwd()), schema=CONFIG_SCHEMA)
    choice = choose_provider(config, provider, model)
    for notice in choice.notices:
        print(f"chat: {notice}", file=sys.stderr)
    settings = choice.settings
    small = settings.provider == "local"
    agent = Agent(
        create_client(settings),
        tools=[current_time],
        instructions=INSTRUCTIONS,
        # A small local model reads every tool offered: offer one only when the message asks for it.
        tool_selector=ToolRetrieval() if small else None,
        policy=ALLOW_ALL,
    )
    return agent.session(), f"{settings.provider}: {settings.model or 'the default model'}"


async def reply(session: AgentSession, text: str) -> None:
    """Send ``text`` and print the reply as it streams."""
    async with open_turn(session, text) as events:
        async for event in events:
            if isinstance(event, TextDeltaEvent):
                sys.stdout.write(event.content)
                sys.stdout.flush()
            elif isinstance(event, ToolStartEvent):
                print(f"[{event.tool}]", file=sys.stderr)
            elif isinstance(event, ErrorEvent):
                print(f"chat: error: {event.message}", file=sys.stderr)
            elif isinstance(event, TurnEndEvent):
                sys.stdout.write("\n")
                sys.stdout.flush()


def read_line(prompt: str) -> str | None:
    """The next line typed (``None`` at the end of input); the prompt only at a terminal."""
    if sys.stdin.isatty():
        try:
            return input(prompt)
        except EOFError:
            return None
    line = sys.stdin.readline()
    return line.rstrip("\n") if line else None


async def chat(session: AgentSession) -> None:
    """Read a line, answer it, until the input ends."""
    while (line := await anyio.to_thread.run_sync(read_line, "you> ")) is not None:
        if line.strip():
            await reply(session, line)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--provider", help="the provider to use (as hive's --provider)")
    parser.add_argument("-m", "--model", help="the model to use (as hive's -m)")
    args = parser.parse_args()
    try:
        session, name = build_session(args.provider, args.model)
    except (ConfigError, ProviderSelectionError) as exc:
        print(f"chat: {exc}", file=sys.stderr)
        return 2
    if sys.stdin.isatty():
        print(f"Chatting with {name}. Ctrl+D leaves.", file=sys.stderr)
    try:
        anyio.run(chat, session)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
