"""hive's built-in tools: files, search, shell commands and the todo list (the plan).

Each tool is a :class:`~hive_core.tools.Tool` marked read-only or not; planning mode runs only the read-only
ones (the readers, and ``manage_todo``: planning is what the plan is for). Tools do not enforce policy: the
permission engine judges each call before it runs.
"""

from __future__ import annotations

from hive_core.tools import Tool

from .files import delete_file, edit_file, list_directory, move_file, read_file, write_file
from .search import glob_files, grep_files
from .shell import execute_command
from .todo import manage_todo

__all__ = [
    "BUILTIN_TOOLS",
    "delete_file",
    "edit_file",
    "execute_command",
    "glob_files",
    "grep_files",
    "list_directory",
    "manage_todo",
    "move_file",
    "read_file",
    "write_file",
]

BUILTIN_TOOLS: tuple[Tool, ...] = (
    read_file,
    write_file,
    edit_file,
    delete_file,
    move_file,
    list_directory,
    glob_files,
    grep_files,
    execute_command,
    manage_todo,
)
"""Every built-in tool, in the order they are offered to the model."""
