"""What a CLI's permission request is judged as: the hive tool and arguments of an ACP-shaped tool call.

ACP's ``session/request_permission`` carries a ``toolCall`` (``kind``, ``title``, ``rawInput``, ``locations``);
a CLI without ACP (Pi) describes its tools by the same ACP kinds. :func:`permission_arguments` reads the hive tool
from the kind and its arguments from the input, under whatever keys the CLI spells them.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any
from typing import Final

from hive_core.tool_names import DELETE_FILE
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import MOVE_FILE
from hive_core.tool_names import READ_FILE

from .json_values import as_list
from .json_values import as_mapping
from .json_values import as_texts
from .tool_calls import TOOL_NAMES
from .tool_calls import TrackedCall
from .tool_calls import text_of

__all__ = ["permission_arguments", "raw_input"]

_PATH_KEYS: Final = ("path", "file_path", "filePath", "absolute_path", "filename", "file", "target_file")
_CONTENT_KEYS: Final = ("content", "new_string", "newText", "new_text", "text")
_SOURCE_KEYS: Final = ("source", "from", "old_path", "oldPath", "source_path")
_DESTINATION_KEYS: Final = ("destination", "to", "new_path", "newPath", "destination_path", "target")
_COMMAND_KEYS: Final = ("command", "cmd", "commandLine", "command_line")


def permission_arguments(call: TrackedCall, tool_call: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The hive tool and arguments a permission request is judged as, from its call and its ``toolCall``.

    The tool follows the latest ``kind`` (the request's, else the call's), so a call announced as ``other`` and
    re-announced as ``execute`` is judged as a command; a call of no known kind whose input has a command is
    judged as one too. The input is the request's ``rawInput``, else the call's, else what it streamed as text.
    """
    raw = raw_input(call, tool_call)
    title = text_of(tool_call.get("title")) or call.title
    kind = text_of(tool_call.get("kind")) or call.kind
    tool = TOOL_NAMES.get(kind or "") or (EXECUTE_COMMAND if _command(raw) else call.tool)
    if tool == EXECUTE_COMMAND:
        return tool, {"command": _command(raw) or title or ""}
    if tool in (EDIT_FILE, READ_FILE, DELETE_FILE):
        arguments: dict[str, Any] = {}
        path = _first_text(raw, _PATH_KEYS) or _location(tool_call) or _location_of(call)
        if path is not None:
            arguments["path"] = path
        content = _first_text(raw, _CONTENT_KEYS)
        if tool == EDIT_FILE and content is not None:
            arguments["content"] = content
        return tool, arguments
    if tool == MOVE_FILE:
        moved: dict[str, Any] = {}
        source = _first_text(raw, _SOURCE_KEYS) or _first_text(raw, _PATH_KEYS)
        destination = _first_text(raw, _DESTINATION_KEYS)
        if source is not None:
            moved["source"] = source
        if destination is not None:
            moved["destination"] = destination
        return tool, moved
    return tool, raw


def raw_input(call: TrackedCall, tool_call: Mapping[str, Any]) -> dict[str, Any]:
    """The input a permission request is judged by: its ``rawInput``, else the call's, else what it streamed."""
    return (
        as_mapping(tool_call.get("rawInput"))
        or as_mapping(call.raw_input)
        or (dict(call.content_input) if call.content_input else {})
    )


def _command(raw: Mapping[str, Any]) -> str | None:
    for key in _COMMAND_KEYS:
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            return value
        parts = as_texts(value)
        if parts is not None:
            # ["bash", "-lc", "<line>"] (Codex-style): the line is what runs.
            if len(parts) == 3 and parts[1] in ("-c", "-lc"):
                return parts[2]
            return shlex.join(parts)
    return None


def _location(tool_call: Mapping[str, Any]) -> str | None:
    for entry in as_list(tool_call.get("locations")):
        path = text_of(as_mapping(entry).get("path"))
        if path is not None:
            return path
    return None


def _location_of(call: TrackedCall) -> str | None:
    for entry in call.locations:
        path = text_of(as_mapping(entry).get("path"))
        if path is not None:
            return path
    return None


def _first_text(fields: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        text = text_of(fields.get(key))
        if text is not None:
            return text
    return None
