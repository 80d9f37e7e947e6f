"""``hive sessions``: list, show and delete the sessions of this project."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from hive_cli.session_documents import CommandError
from hive_cli.session_documents import ListedStatus
from hive_cli.session_documents import SessionDeleted
from hive_cli.session_documents import encode_document
from hive_cli.session_documents import session_summaries
from hive_cli.session_documents import session_transcript
from hive_cli.session_listing import listed_sessions
from hive_cli.session_listing import resolve_session_id
from hive_cli.session_store import open_session_store
from hive_cli.transcript_text import transcript_lines
from hive_core.config import find_project_root
from hive_core.errors import UserError
from hive_core.sessions import cut_title

__all__ = ["command_error", "delete_main", "list_main", "show_main"]


def list_main(*, limit: int, output: str, everything: bool = False) -> int:
    """List this project's sessions, newest first: a table, one JSON array (``json``) or a line each (``jsonl``);
    sessions that failed at start hidden unless ``everything``."""
    as_json = output != "text"
    root = find_project_root(Path.cwd())
    try:
        with open_session_store() as store:
            listed, hidden = listed_sessions(store, str(root), limit=limit, everything=everything)
    except UserError as exc:  # a damaged or newer database: one line, in the format asked for
        return command_error(str(exc), as_json)
    infos = [session.info for session in listed]
    statuses: dict[str, ListedStatus] = {session.info.id: session.status for session in listed}
    if output == "jsonl":
        sys.stdout.writelines(encode_document(entry) + "\n" for entry in session_summaries(infos, statuses))
        return 0
    if as_json:
        sys.stdout.write(encode_document(session_summaries(infos, statuses)) + "\n")
        return 0
    note = f"({hidden} empty or failed-at-start session(s) hidden; --all shows them)\n" if hidden else ""
    if not listed:
        sys.stdout.write("No sessions in this project yet.\n" + note)
        return 0
    for session in listed:
        info = session.info
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created))
        title = cut_title((info.first_message or "").replace("\n", " "))
        sys.stdout.write(f"{info.id}  {when}  {session.status:<7}  {info.message_count:>3} msgs  {title}\n")
    sys.stdout.write(note)
    return 0


def show_main(session_id: str, *, output: str = "text") -> int:
    """Print a session's transcript (``session_id``: its id or a unique prefix of it): text, one JSON document
    (``json``), or a line for each step of it (``jsonl``)."""
    as_json = output != "text"
    try:
        with open_session_store() as store:
            found = resolve_session_id(store, session_id)
            info = store.get(found)
            assert info is not None
            messages = store.restore(found)
            dead = info.status == "active" and found not in store.served()
    except UserError as exc:
        return command_error(str(exc), as_json)
    document = session_transcript(info, messages, "dead" if dead else None)
    if output == "jsonl":
        sys.stdout.writelines(encode_document(item) + "\n" for item in document.items)
        return 0
    if as_json:
        sys.stdout.write(encode_document(document) + "\n")
        return 0
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created))
    model = f"{info.provider}/{info.model}" if info.provider and info.model else info.provider or info.model
    header = f"session {info.id} · {when} · {document.status}" + (f" · {model}" if model else "")
    lines = transcript_lines(document.items) or ["(no messages)"]
    sys.stdout.write("\n".join([header, "", *lines]) + "\n")
    return 0


def delete_main(session_id: str | None, *, as_json: bool, yes: bool) -> int:
    """Delete a session (text mode asks first unless ``yes``)."""
    if not session_id:
        return command_error("give the id of the session to delete (see `hive sessions list`)", as_json)
    try:
        return _delete(session_id, as_json=as_json, yes=yes)
    except UserError as exc:
        return command_error(str(exc), as_json)


def _delete(session_id: str, *, as_json: bool, yes: bool) -> int:
    with open_session_store() as store:
        if store.get(session_id) is None:
            return command_error(f"no session {session_id!r}", as_json)
        if not as_json and not yes:
            if not sys.stdin.isatty():
                return command_error(
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


def command_error(message: str, as_json: bool) -> int:
    """Report a command's failure: a ``CommandError`` document on stdout with ``as_json``, else a line on stderr;
    return the exit code (1)."""
    if as_json:
        sys.stdout.write(encode_document(CommandError(error=message)) + "\n")
    else:
        sys.stderr.write(f"hive: {message}\n")
    return 1
