"""``hive logs``: a session's execution log (turns, model requests, tool calls, fallbacks, compactions).

``--follow`` keeps printing records as they are written, by this process's sibling or any other ``hive`` serving the
session, until Ctrl+C: it waits for the session's new entries (:meth:`wait_for_entries`: SQLite's ``data_version``
checked a few times a second, PostgreSQL's ``LISTEN``) and reads only the entries past the last one printed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from hive_cli.commands.sessions import command_error
from hive_cli.log_records import log_json
from hive_cli.log_records import log_text
from hive_cli.session_listing import resolve_session_id
from hive_cli.session_store import open_session_store
from hive_core.config import find_project_root
from hive_core.errors import UserError
from hive_core.execution_log import LogRecord
from hive_core.sessions import Entry
from hive_core.sessions import LogReader
from hive_core.sessions import SharedSessionStore

__all__ = ["FOLLOW_WAIT", "logs_main"]

FOLLOW_WAIT: Final = 1.0
"""Seconds one wait for new entries lasts at most while following (then it waits again)."""


def logs_main(session_id: str | None, *, output: str, follow: bool) -> int:
    """Print the execution log of a session (its id or a unique start of it; the project's most recent session
    when ``None``): a line of text a record, or JSON Lines with ``output`` ``json`` or ``jsonl``."""
    as_json = output != "text"
    show = log_json if as_json else log_text
    try:
        with open_session_store() as store:
            found = _session(store, session_id)
            reader = LogReader()
            last = _print(reader, store.entries(found), show)
            if follow:
                _follow(store, found, reader, last, show)
    except UserError as exc:
        return command_error(str(exc), as_json)
    except KeyboardInterrupt:  # Ctrl+C ends --follow, the one way it ends
        return 0
    return 0


def _session(store: SharedSessionStore, given: str | None) -> str:
    if given is not None:
        return resolve_session_id(store, given)
    latest = store.latest(find_project_root(Path.cwd()))
    if latest is None:
        raise UserError("no session in this project yet; `hive sessions list --all` shows them")
    return latest.id


def _print(reader: LogReader, entries: Sequence[Entry], show: Callable[[LogRecord], str]) -> int:
    """Print the records among ``entries``; the sequence number of the last entry (0 for none)."""
    lines = [show(record) + "\n" for record in reader.read(entries)]
    if lines:
        sys.stdout.writelines(lines)
        sys.stdout.flush()
    return entries[-1].seq if entries else 0


def _follow(
    store: SharedSessionStore, session_id: str, reader: LogReader, last: int, show: Callable[[LogRecord], str]
) -> None:
    while True:
        if store.wait_for_entries(session_id, after=last, timeout=FOLLOW_WAIT):
            last = _print(reader, store.entries(session_id, after=last), show) or last
