"""The names of hive's built-in tools (:mod:`hive_core.builtin_tools`) and of the ask-user tool, in one place.

The permission rules judge calls by these names, the context settings protect their outputs, and every coding-agent
backend maps its CLI's tools onto them: renaming a tool here renames it everywhere it is judged. A kernel module
with no imports, so the kernel (tool retrieval, context settings) may name the host's tools too.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ASK_USER_QUESTION",
    "BUILTIN_TOOL_NAMES",
    "DELETE_FILE",
    "EDIT_FILE",
    "EXECUTE_COMMAND",
    "GLOB_FILES",
    "GREP_FILES",
    "LIST_DIRECTORY",
    "MANAGE_TODO",
    "MOVE_FILE",
    "READ_FILE",
    "WRITE_FILE",
]

READ_FILE: Final = "read_file"
"""Reads a file (read-only)."""
WRITE_FILE: Final = "write_file"
"""Creates or replaces a file."""
EDIT_FILE: Final = "edit_file"
"""Replaces text in a file."""
DELETE_FILE: Final = "delete_file"
"""Deletes a file."""
MOVE_FILE: Final = "move_file"
"""Moves or renames a file (``source`` to ``destination``)."""
LIST_DIRECTORY: Final = "list_directory"
"""Lists a directory (read-only)."""
GLOB_FILES: Final = "glob_files"
"""Finds files by a glob pattern (read-only)."""
GREP_FILES: Final = "grep_files"
"""Searches files' text (read-only)."""
EXECUTE_COMMAND: Final = "execute_command"
"""Runs a shell command in the sandbox."""
MANAGE_TODO: Final = "manage_todo"
"""Keeps the session's todo list (the plan)."""
ASK_USER_QUESTION: Final = "ask_user_question"
"""The ask-user tool: the question tool hive gives a coding-agent CLI that has none of its own (Pi)."""

BUILTIN_TOOL_NAMES: Final = (
    READ_FILE,
    WRITE_FILE,
    EDIT_FILE,
    DELETE_FILE,
    MOVE_FILE,
    LIST_DIRECTORY,
    GLOB_FILES,
    GREP_FILES,
    EXECUTE_COMMAND,
    MANAGE_TODO,
)
"""Every built-in tool's name, in the order the tools are offered to the model."""
