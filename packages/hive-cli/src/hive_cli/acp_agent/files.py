"""The client's ``fs/read_text_file`` and ``fs/write_text_file`` serving hive's ``read_file``, ``write_file`` and
``edit_file`` when the client offers them: the editor reads its unsaved buffers and owns the write.

``read_file`` goes through the client when it reads, ``write_file`` when it writes (an append reads the file from
the client too when the client reads, else from disk), ``edit_file`` when it does both: the edit is made on the
editor's buffer, unsaved changes included, and written back through the editor. ``delete_file`` and ``move_file``
stay on disk, as ACP has no method for either.

The tools keep their names, parameters and descriptions, so the model sees no difference; the approval gate judges
each call as it judges hive's own. The file the editor is asked about is the path with every link resolved, judged
again under the same rules (``read`` or ``edit``): a link that leads where the rules deny, or ask without this call
having been approved, is refused, never followed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from acp import Client

from hive_core.builtin_tools import edit_file as builtin_edit
from hive_core.builtin_tools import edit_text
from hive_core.builtin_tools import read_file as builtin_read
from hive_core.builtin_tools import write_file as builtin_write
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE
from hive_core.tools import Tool
from hive_core.tools import ToolContext

if TYPE_CHECKING:
    from hive_core.permissions import PermissionPolicy

__all__ = ["client_file_tools"]


def client_file_tools(
    client: Client, session_id: str, policy: PermissionPolicy, *, read: bool, write: bool
) -> list[Tool]:
    """``read_file`` (when ``read``), ``write_file`` (when ``write``) and ``edit_file`` (when both) through the
    client's ``fs/*``."""

    def judged(ctx: ToolContext, path: str, category: str) -> str:
        target = Path(path).expanduser()
        real = os.path.realpath(target if target.is_absolute() else ctx.working_dir / target)
        verdict = policy.judge_path("read" if category == "read" else "edit", real)
        if verdict.action == "deny" or (verdict.action == "ask" and not ctx.approved):
            raise PermissionError(f"{path} leads to {real}, which the rules do not let this call {category}")
        return real

    async def read_file(
        ctx: ToolContext, path: str, start_line: int | None = None, line_count: int | None = None
    ) -> str:
        if start_line is not None and start_line < 1:
            raise ValueError(f"start_line is {start_line}, but lines are counted from 1")
        if line_count is not None and line_count < 1:
            raise ValueError(f"line_count is {line_count}; ask for at least one line")
        real = judged(ctx, path, "read")
        found = await client.read_text_file(
            session_id=session_id, path=real, line=start_line, limit=line_count
        )
        return found.content or f"({path} is empty)"

    async def write_file(ctx: ToolContext, path: str, content: str, append: bool = False) -> str:
        real = judged(ctx, path, "edit")
        if append:
            content = await current(real) + content
        await client.write_text_file(session_id=session_id, path=real, content=content)
        return f"Wrote {path} ({len(content):,} characters) through the editor"

    async def current(real: str) -> str:
        """The file's text as the editor has it when the client reads, else as it is on disk ("" if absent)."""
        if read:
            return (await client.read_text_file(session_id=session_id, path=real)).content
        on_disk = anyio.Path(real)
        return await on_disk.read_text(encoding="utf-8") if await on_disk.exists() else ""

    async def edit_file(
        ctx: ToolContext, path: str, old_text: str, new_text: str, replace_all: bool = False
    ) -> str:
        real = judged(ctx, path, "edit")
        content = (await client.read_text_file(session_id=session_id, path=real)).content
        newline = "\r\n" if "\r\n" in content else None
        edited, done = edit_text(content, path, old_text, new_text, replace_all=replace_all, newline=newline)
        await client.write_text_file(session_id=session_id, path=real, content=edited)
        return f"{done} through the editor"

    tools: list[Tool] = []
    if read:
        read_file.__doc__ = builtin_read.function.__doc__
        tools.append(Tool(read_file, name=READ_FILE, read_only=True))
    if write:
        write_file.__doc__ = builtin_write.function.__doc__
        tools.append(Tool(write_file, name=WRITE_FILE))
    if read and write:
        edit_file.__doc__ = builtin_edit.function.__doc__
        tools.append(Tool(edit_file, name=EDIT_FILE))
    return tools
