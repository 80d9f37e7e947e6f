"""``hive sessions``: list and delete the sessions of this project."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from hive_cli.session_documents import CommandError, SessionDeleted, encode_document, session_summaries
from hive_cli.session_store import open_session_store
from hive_core.config import find_project_root
from hive_core.errors import UserError
from hive_core.sessions import cut_title

__all__ = ["delete_main", "list_main"]


def list_main(*, limit: int, output: str) -> int:
    """List this project's sessions, newest first: a table, one JSON array (``json``) or a line each (``jsonl``)."""
    as_json = output != "text"
    root = find_project_root(Path.cwd())
    try:
        with open_session_store() as store:
            infos = store.list_sessions(project_path=str(root), limit=limit)
    except UserError as exc:  # a damaged or newer database: one line, in the format asked for
        return _error(str(exc), as_json)
    if output == "jsonl":
        sys.stdout.writelines(encode_document(entry) + "\n" for entry in session_summaries(infos))
        return 0
    if as_json:
        sys.stdout.write(encode_document(session_summaries(infos)) + "\n")
        return 0
    if not infos:
        sys.stdout.write("No sessions in this project yet.\n")
        return 0
    for info in infos:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created))
        title = cut_title((info.first_message or "").replace("\n", " "))
        sys.stdout.write(f"{info.id}  {when}  {info.status:<7}  {info.message_count:>3} msgs  {title}\n")
    return 0


def delete_main(session_id: str | None, *, as_json: bool, yes: bool) -> int:
    """Delete a session (text mode asks first unless ``yes``)."""
    if not session_id:
        return _error("give the id of the session to delete (see `hive sessions list`)", as_json)
    try:
        return _delete(session_id, as_json=as_json, yes=yes)
    except UserError as exc:
        return _error(str(exc), as_json)


def _delete(session_id: str, *, as_json: bool, yes: bool) -> int:
    with open_session_store() as store:
        if store.get(session_id) is None:
            return _error(f"no session {session_id!r}", as_json)
        if not as_json and not yes:
            if not sys.stdin.isatty():
                return _error(
                    "not deleting without confirmation: pass --yes when stdin is not a terminal", as_json
                )
            answer = input(f"Delete session {session_id}? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                sys.stdout.write("Kept.\n")
                return 1
        with store.lease(session_id):  # never delete a session another process is serving
            store.delete(session_id)
    if as_json:
        sys.stdout.write(encode_document(SessionDeleted(deleted=session_id)) + "\n")
    else:
        sys.stdout.write(f"Deleted {session_id}.\n")
    return 0


def _error(message: str, as_json: bool) -> int:
    if as_json:
        sys.stdout.write(encode_document(CommandError(error=message)) + "\n")
    else:
        sys.stderr.write(f"hive: {message}\n")
    return 1
