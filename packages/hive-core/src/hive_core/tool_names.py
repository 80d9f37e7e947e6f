"""The names of hive's built-in tools (:mod:`hive_core.builtin_tools`) and of the ask-user tool, in one place.

The permission rules judge calls by these names, the context settings protect their outputs, and every coding-agent
backend maps its CLI's tools onto them: renaming a tool here renames it everywhere it is judged. A kernel module
with no imports, so the kernel (tool retrieval, context settings) may name the host's tools too.
"""

from __future__ import annotations

from typing import Final

ASK_USER_QUESTION: Final = "ask_user_question"
"""The ask-user tool: the question tool hive gives a coding-agent CLI that has none of its own (Pi)."""

# The built-in tools (the readers, listers, searchers and manage_todo are read-only).
READ_FILE: Final = "read_file"
WRITE_FILE: Final = "write_file"
EDIT_FILE: Final = "edit_file"
DELETE_FILE: Final = "delete_file"
MOVE_FILE: Final = "move_file"  # source -> destination
LIST_DIRECTORY: Final = "list_directory"
GLOB_FILES: Final = "glob_files"
GREP_FILES: Final = "grep_files"
EXECUTE_COMMAND: Final = "execute_command"  # in the command sandbox
MANAGE_TODO: Final = "manage_todo"  # the session's plan

# The web tools (hive_core.web), offered when the configuration turns them on.
WEB_SEARCH: Final = "web_search"
FETCH_PAGE: Final = "fetch_page"  # url
EXPLORE_SITE: Final = "explore_site"  # base_url
DEEP_RESEARCH: Final = "deep_research"

# Subagents (hive_core.builtin_tools.delegate), offered when delegation is on: each of their calls is judged on its
# own, so handing a task over is allowed by default.
DELEGATE: Final = "delegate"

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
