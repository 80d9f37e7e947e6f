"""A child process for the session tests: writes to a session database, then is killed or finishes.

Usage: ``sessions_child.py <scenario> <database> <session id> [count]`` (the database: a SQLite file's path or a
PostgreSQL URL). Events and markers go to stdout, one
line each, flushed at once, so the parent can wait for a point of the turn and kill the process there.

- ``append``: create the shared session unless it exists and a session of its own, print ``ready``, wait for
  ``go`` on stdin, then append ``count`` messages to the shared session and to its own; print ``done <own id>``.
- ``tool``: run a turn whose first round calls ``quick`` (finishes) and ``stuck`` (prints ``STUCK`` and never
  returns); the events are printed as protocol lines.
- ``stream``: run a turn whose first round calls ``quick`` and whose second round streams ``partial`` and then
  stalls forever.
- ``approval``: serve the session over stdio like ``hive run --server --session-id``; the model calls
  ``deploy``, which the rules send for approval.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this folder is on the path; the shared helpers of the folder above are put there too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
from sessions_harness import Deploys
from sessions_harness import ask_about_deploys
from sessions_harness import open_store
from sessions_harness import thinking_round

from hive_core import Agent
from hive_core import SessionRunner
from hive_core import StdioRunner
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.chat import TextUpdate
from hive_core.chat import ToolCallUpdate
from hive_core.messages import user
from hive_core.sessions import DurableHitlBridge
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import TranscriptRecorder
from hive_core.testing import Block
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_protocol import Event
from hive_protocol import UserMessageRequest
from hive_protocol import encode


def out(line: bytes) -> None:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()


def print_event(event: Event) -> None:
    out(encode(event))


@tool
async def quick(note: str) -> str:
    """Answer at once."""
    return f"quick saw {note}"


@tool
async def stuck(note: str) -> str:
    """Never answer."""
    out(b"STUCK\n")
    await anyio.sleep_forever()
    return note


def first_round() -> ScriptedRound:
    """Thinking with a signature, text, and two calls: one finishes, one hangs."""
    return thinking_round(
        ("let me look", ""),
        ("Checking ", "both."),
        ToolCallUpdate(0, "q1", "quick", '{"note": "a"}'),
        ToolCallUpdate(1, "s1", "stuck", '{"note": "b"}'),
        signature="sig-1",
        provider="scripted",
    )


async def run_turn(store: SharedSessionStore, session_id: str, rounds: list[ScriptedRound]) -> None:
    store.create(project_path=Path.cwd(), session_id=session_id, model="scripted")
    agent = Agent(ScriptedChatClient(rounds), tools=[quick, stuck], policy=ALLOW_ALL)
    recorder = TranscriptRecorder(agent.session(), store, session_id)
    await SessionRunner(recorder).run_turn(UserMessageRequest(content="check both"), print_event)


def append(store: SharedSessionStore, shared: str, count: int) -> None:
    store.create(project_path=Path.cwd(), session_id=shared, exist_ok=True)
    own = store.create(project_path=Path.cwd())
    out(b"ready\n")
    if sys.stdin.readline().strip() != "go":
        sys.exit(3)
    for index in range(count):
        store.append(shared, user(f"{own.id} {index}"))
        store.append(own.id, user(f"own {index}"))
    out(f"done {own.id}\n".encode())


def main() -> None:
    scenario, database, session_id = sys.argv[1:4]
    with open_store(database) as store:
        if scenario == "append":
            append(store, session_id, int(sys.argv[4]))
        elif scenario == "tool":
            anyio.run(run_turn, store, session_id, [first_round()])
        elif scenario == "stream":
            rounds = [
                call(("quick", {"note": "a"}, "q1")),
                ScriptedRound([TextUpdate("partial"), Block()]),
            ]
            anyio.run(run_turn, store, session_id, rounds)
        elif scenario == "approval":
            store.create(project_path=Path.cwd(), session_id=session_id, exist_ok=True)
            bridge = DurableHitlBridge(store, session_id, timeout=60)
            client = ScriptedChatClient([call(("deploy", {"target": "prod"}, "d1"), text="Deploying.")])
            agent = Agent(client, tools=[Deploys().tool], policy=ask_about_deploys(), approvals=bridge)
            recorder = TranscriptRecorder(agent.session(store.restore(session_id)), store, session_id)
            runner = StdioRunner(SessionRunner(recorder, session_id=session_id, bridge=bridge))
            sys.exit(anyio.run(runner.run))
        else:
            sys.exit(f"unknown scenario {scenario!r}")


if __name__ == "__main__":
    main()
