"""hive's built-in tools: files, search, shell commands and the todo list (the plan).

Each tool is a :class:`~hive_core.tools.Tool` marked read-only or not; planning mode runs only the read-only
ones (the readers, and ``manage_todo``: planning is what the plan is for). The permission engine judges each call
before it runs; the search and listing tools, which reach files the call does not name, also judge each file they
read or list (:attr:`~hive_core.tools.ToolContext.path_judge`).
"""

from __future__ import annotations

from hive_core.sandbox import SandboxSettings
from hive_core.tools import Tool

from .edits import edit_text
from .files import delete_file
from .files import edit_file
from .files import list_directory
from .files import move_file
from .files import read_file
from .files import write_file
from .search import glob_files
from .search import grep_files
from .shell import execute_command
from .shell import execute_command_tool
from .todo import manage_todo

__all__ = [
    "BUILTIN_TOOLS",
    "builtin_tools",
    "delete_file",
    "edit_file",
    "edit_text",
    "execute_command",
    "execute_command_tool",
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


def builtin_tools(*, sandbox: SandboxSettings | None = None) -> tuple[Tool, ...]:
    """Every built-in tool, in :data:`BUILTIN_TOOLS` order, with ``execute_command`` confining commands as
    ``sandbox`` says (by default as :data:`BUILTIN_TOOLS`' does: ``auto``)."""
    if sandbox is None:
        return BUILTIN_TOOLS
    command = execute_command_tool(sandbox)
    return tuple(command if each is execute_command else each for each in BUILTIN_TOOLS)
