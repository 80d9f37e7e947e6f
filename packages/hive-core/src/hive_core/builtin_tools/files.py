"""File tools: read, write, edit, delete and move single files, and list directories.

Paths are relative to the working directory or absolute; the permission engine decides which are allowed
(``list_directory``, which reaches entries the call does not name, judges each one it lists). Each tool opens its
file once and judges the object it opened again under the same rules (:mod:`._open`), so a directory swapped for a
link after the approval gate judged the name cannot carry the call elsewhere; only regular files are read or
written, and a file with several hard links only in a call a person approved. Text is UTF-8 or UTF-16 (by
byte-order mark); binary files are refused. Writing to an existing file keeps its encoding, its byte-order mark
and its CRLF line endings; it is written in place, through the descriptor that was judged.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from pathlib import PurePath
from typing import Literal

from hive_core.tool_names import DELETE_FILE
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import LIST_DIRECTORY
from hive_core.tool_names import MOVE_FILE
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE
from hive_core.tools import ToolContext
from hive_core.tools import tool

from ._lines import cut_note
from ._lines import read_bounded
from ._lines import text_lines
from ._open import Handle
from ._open import Judge
from ._open import ParentDir
from ._open import judge_of
from ._open import open_destination
from ._open import open_for_write
from ._open import open_judged
from ._open import open_parent
from ._paths import format_size
from ._reach import Reach
from ._text import BINARY_PROBE
from ._text import FORMAT_PROBE
from ._text import NEW_FILE
from ._text import READ_LIMIT
from ._text import TextFormat
from ._text import binary_message
from ._text import decode
from ._text import encode
from ._text import format_of
from ._text import looks_binary
from ._text import normalize_newlines
from ._text import stream_encoding
from .edits import edit_text

__all__ = ["delete_file", "edit_file", "list_directory", "move_file", "read_file", "write_file"]

_LISTING_CAP = 500


@tool(name=READ_FILE, read_only=True)
def read_file(
    ctx: ToolContext, path: str, start_line: int | None = None, line_count: int | None = None
) -> str:
    """Read a text file and return its content.

    Reads UTF-8 (with or without a byte-order mark) and UTF-16 files; every line ending comes back as LF. A
    whole file may be up to 1 MB; read a larger one in parts with start_line and line_count, or search it with
    grep_files. Of a line longer than 65,536 characters only the start is shown, with a note. Binary files,
    pipes and devices are refused.

    Args:
        path: The file to read, relative to the working directory or absolute.
        start_line: The first line to return, counting from 1. Leave out to start at the top.
        line_count: How many lines to return from start_line on. Leave out to read to the end.
    """
    if start_line is not None and start_line < 1:
        raise ValueError(f"start_line is {start_line}, but lines are counted from 1")
    if line_count is not None and line_count < 1:
        raise ValueError(f"line_count is {line_count}; ask for at least one line")
    with _existing(ctx, path, "read", os.O_RDONLY) as handle:
        if start_line is not None or line_count is not None:
            return _read_lines(handle.fd, path, start_line or 1, line_count)
        data = _whole(handle, path, "a whole read returns")
    text, _ = decode(data, name=path, strict=False)
    return normalize_newlines(text) or f"({path} is empty)"


def _whole(handle: Handle, name: str, what: str) -> bytes:
    """The whole file, refused past the per-call limit; read no further than the limit even if it grew."""
    tail = " with start_line and line_count, or search it with grep_files"
    size = handle.info.st_size
    data = read_bounded(handle.fd, READ_LIMIT + 1) if size <= READ_LIMIT else b""
    if size > READ_LIMIT or len(data) > READ_LIMIT:
        shown = format_size(size) if size > READ_LIMIT else "over " + format_size(READ_LIMIT)
        hint = f"; read it in parts{tail}" if what == "a whole read returns" else ""
        raise ValueError(f"{name} is {shown}, more than the {format_size(READ_LIMIT)} {what}{hint}")
    return data


def _read_lines(fd: int, name: str, start: int, count: int | None) -> str:
    head = os.pread(fd, BINARY_PROBE, 0)
    if looks_binary(head):
        raise ValueError(binary_message(name))
    kept: list[str] = []
    kept_size = 0
    seen = 0
    # Streamed in chunks, each line cut at LINE_LIMIT: a part of a file over the whole-read limit can be read, and
    # a line of gigabytes costs no more memory than a cut line.
    for line in text_lines(fd, stream_encoding(head)):
        seen = line.number
        if seen < start:
            continue
        if count is not None and seen >= start + count:
            break
        piece = line.text + "\n" if line.ended else line.text
        if line.cut:
            piece = line.text + "\n" + cut_note(line, name) + "\n"
        kept_size += len(piece)
        if kept_size > READ_LIMIT:
            raise ValueError(
                f"lines {start} to {seen} of {name} already come to more than "
                f"{format_size(READ_LIMIT)}; ask for fewer lines"
            )
        kept.append(piece)
    if kept:
        return "".join(kept)
    if seen == 0:
        return f"({name} is empty)"
    raise ValueError(f"{name} has {seen} lines, so start_line {start} is past its end")


@tool(name=WRITE_FILE)
def write_file(ctx: ToolContext, path: str, content: str, append: bool = False) -> str:
    """Write text to a file, replacing its content, or adding to its end when append is true.

    Creates the file and any missing parent directories. An existing file keeps its encoding, byte-order mark
    and CRLF line endings (content written with LF line endings into a CRLF file gets CRLF). A new file is
    UTF-8 without a byte-order mark. To change part of a file, edit_file is cheaper and safer.

    Args:
        path: The file to write, relative to the working directory or absolute.
        content: The complete text to write (or to add at the end when appending).
        append: Add content at the end of the file instead of replacing what it holds.
    """
    encode(content, NEW_FILE)  # text that cannot be stored fails before any file is made
    handle, existed = _writable(ctx, path)
    with handle:
        fd = handle.fd
        fmt = format_of(os.pread(fd, FORMAT_PROBE, 0)) if existed else NEW_FILE
        if fmt is None:
            if append:
                raise ValueError(binary_message(path))
            fmt = NEW_FILE
        text = content
        if fmt.newline == "\r\n" and "\r\n" not in content:
            text = content.replace("\n", "\r\n")
        if append and existed:
            end = os.fstat(fd).st_size
            data = encode(text, fmt, with_bom=end == 0)
            _write_at(fd, data, end)
            return f"Appended {len(data):,} bytes to {path}{_kept(fmt)}"
        data = encode(text, fmt)
        _replace(fd, data)
    if existed:
        return f"Replaced the content of {path} ({len(data):,} bytes){_kept(fmt)}"
    return f"Created {path} ({len(data):,} bytes)"


def _writable(ctx: ToolContext, path: str) -> tuple[Handle, bool]:
    try:
        return open_for_write(ctx, path, judge=judge_of(ctx, "edit"), shown=path)
    except IsADirectoryError:
        raise IsADirectoryError(f"{path} is a directory; give the path of a file") from None


def _write_at(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def _replace(fd: int, data: bytes) -> None:
    """Put ``data`` in place of the file's content, in place (the file keeps its inode, owner and mode)."""
    _write_at(fd, data, 0)
    os.ftruncate(fd, len(data))


def _kept(fmt: TextFormat) -> str:
    if fmt.encoding == "utf-8" and not fmt.bom and fmt.newline != "\r\n":
        return ""
    return f"; kept its format ({fmt.describe()})"


@tool(name=EDIT_FILE)
def edit_file(ctx: ToolContext, path: str, old_text: str, new_text: str, replace_all: bool = False) -> str:
    """Replace exact text in an existing file: the way to change part of a file.

    old_text must match the file exactly, whitespace and indentation included, and occur exactly once: copy
    it from read_file's output with enough surrounding lines to make it unique, or set replace_all to change
    every occurrence. Line endings may be sent as LF even in a CRLF file; the file keeps its line endings,
    encoding and byte-order mark.

    Args:
        path: The file to edit, relative to the working directory or absolute.
        old_text: The exact text to replace, copied from the file.
        new_text: The text to put in its place (empty to delete old_text).
        replace_all: Replace every occurrence of old_text instead of requiring exactly one.
    """
    hint = "; edit_file changes existing files, write_file creates new ones"
    with _existing(ctx, path, "edit", os.O_RDWR, missing_hint=hint) as handle:
        return _edit(handle, path, old_text, new_text, replace_all)


def _edit(handle: Handle, path: str, old_text: str, new_text: str, replace_all: bool) -> str:
    content, fmt = decode(_whole(handle, path, "edit_file handles"), name=path, strict=True)
    edited, message = edit_text(
        content, path, old_text, new_text, replace_all=replace_all, newline=fmt.newline
    )
    _replace(handle.fd, encode(edited, fmt))
    return message


@tool(name=DELETE_FILE)
def delete_file(ctx: ToolContext, path: str) -> str:
    """Delete one file. Directories are never deleted.

    Delete only the file the request clearly means. When the name is not where it was said to be, or several
    files could be meant, delete nothing and ask which one.

    Args:
        path: The file to delete, relative to the working directory or absolute.
    """
    with _parent(ctx, path) as parent:
        if stat.S_ISDIR(os.stat(parent.name, dir_fd=parent.fd, follow_symlinks=False).st_mode):
            raise IsADirectoryError(f"{path} is a directory; delete_file removes single files only")
        os.unlink(parent.name, dir_fd=parent.fd)
    return f"Deleted {path}"


@tool(name=MOVE_FILE)
def move_file(ctx: ToolContext, source: str, destination: str, overwrite: bool = False) -> str:
    """Move or rename one file. Creates missing parent directories of the destination.

    An existing file at the destination is replaced only when overwrite is true. Move only the file the
    request clearly means; when in doubt, move nothing and ask.

    Args:
        source: The file to move, relative to the working directory or absolute.
        destination: Its new path, file name included, relative to the working directory or absolute.
        overwrite: Replace a file that already exists at the destination.
    """
    judge = judge_of(ctx, "edit")
    with _parent(ctx, source) as origin:
        held = os.stat(origin.name, dir_fd=origin.fd, follow_symlinks=False)
        if stat.S_ISDIR(held.st_mode):
            raise IsADirectoryError(f"{source} is a directory; move_file moves single files only")
        with _destination(ctx, destination, judge) as target:
            try:
                there = os.stat(target.name, dir_fd=target.fd, follow_symlinks=False)
            except FileNotFoundError:
                there = None
            if there is not None and stat.S_ISDIR(there.st_mode):
                suggestion = PurePath(destination, origin.name).as_posix()
                raise IsADirectoryError(
                    f"{destination} is a directory; give the full new path, file name included (such as "
                    f"{suggestion})"
                )
            if origin.real == target.real:
                raise ValueError(f"{source} and {destination} are the same file")
            # A rename that only changes case on a case-insensitive file system finds "itself" at the destination.
            replacing = there is not None and (there.st_dev, there.st_ino) != (held.st_dev, held.st_ino)
            if replacing and not overwrite:
                raise FileExistsError(f"{destination} already exists; set overwrite to true to replace it")
            _rename(origin, target, source)
    return f"Moved {source} to {destination}" + (" (replaced the file that was there)" if replacing else "")


def _rename(origin: ParentDir, target: ParentDir, shown: str) -> None:
    """Move the file between two judged directories: renamed there, or copied and removed across file systems."""
    try:
        os.rename(origin.name, target.name, src_dir_fd=origin.fd, dst_dir_fd=target.fd)
        return
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
    source = os.open(
        origin.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=origin.fd
    )
    try:
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{shown} is not a regular file, so it is not copied to another file system")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        copy = os.open(target.name, flags, stat.S_IMODE(info.st_mode), dir_fd=target.fd)
        try:
            offset = 0
            while chunk := os.pread(source, 1024 * 1024, offset):
                _write_at(copy, chunk, offset)
                offset += len(chunk)
        finally:
            os.close(copy)
    finally:
        os.close(source)
    os.unlink(origin.name, dir_fd=origin.fd)


def _destination(ctx: ToolContext, destination: str, judge: Judge) -> ParentDir:
    """Where ``destination`` goes: the directory of the file it names (through a link, as the policy judged it),
    or for a new file its directory, made if missing."""
    try:
        return open_parent(ctx, destination, judge=judge, shown=destination)
    except FileNotFoundError:
        return open_destination(ctx, destination, judge=judge, shown=destination)


@tool(name=LIST_DIRECTORY, read_only=True)
def list_directory(
    ctx: ToolContext, path: str = ".", recursive: bool = False, include_ignored: bool = False
) -> str:
    """List a directory: a "[DIR]" line per subdirectory, and a "[FILE]" line with its size per file.

    Directories come first, then files, each in name order; at most 500 of each are shown. With recursive, the
    whole tree below is listed, paths relative to the listed directory (linked directories are shown but not
    entered). Hidden entries are listed too; entries the permission rules deny, and links leading outside the
    project, are not. Entries the project ignores (.gitignore, .ignore) are left out and named at the end,
    unless include_ignored is set or path names an ignored directory.

    Args:
        path: The directory to list, relative to the working directory or absolute. Defaults to the working
            directory.
        recursive: List everything below the directory, not just what it holds directly.
        include_ignored: Also list entries the project's .gitignore or .ignore files exclude (such as
            node_modules/ or build output).
    """
    reach = Reach(ctx, include_ignored=include_ignored)
    try:
        handle = open_judged(
            ctx, path, judge=reach.verdict, shown=path, approved=ctx.approved, directory=True
        )
    except FileNotFoundError:
        raise FileNotFoundError(f"there is no directory at {path}") from None
    except NotADirectoryError:
        raise NotADirectoryError(f"{path} is a file, not a directory; read_file reads it") from None
    with handle:  # listed by the path judged on the opened directory, not by the name the call gave
        root = reach.start(Path(handle.real), path)
    if recursive:
        nodes = list(reach.tree(root))
    else:
        nodes = [
            node for node in reach.children(root, root.path, root.real, "") if reach.listable(root, node)
        ]
    notes = reach.notes(read=False)
    if not nodes:
        return f"{path} has nothing that may be listed{notes}" if notes else f"{path} is empty"
    dirs = sorted(node.relative for node in nodes if node.is_dir)
    files = sorted((node.relative, node.real) for node in nodes if not node.is_dir)
    lines = [f"[DIR]  {name}/" for name in dirs[:_LISTING_CAP]]
    lines += [f"[FILE] {name} ({_size_of(Path(real))})" for name, real in files[:_LISTING_CAP]]
    if len(dirs) > _LISTING_CAP or len(files) > _LISTING_CAP:
        lines.append(
            f"... (cut at {_LISTING_CAP} of each; {len(dirs):,} directories and {len(files):,} files in all)"
        )
    return "\n".join(lines) + notes


def _size_of(path: Path) -> str:
    try:
        return format_size(path.stat().st_size)
    except OSError:
        return "unreadable"


def _existing(
    ctx: ToolContext, path: str, category: Literal["read", "edit"], flags: int, *, missing_hint: str = ""
) -> Handle:
    """The existing regular file ``path`` names, opened for ``flags`` and judged under ``category``'s rules."""
    judge = judge_of(ctx, category)
    try:
        return open_judged(ctx, path, judge=judge, shown=path, approved=ctx.approved, flags=flags)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"there is no file at {path}{missing_hint}") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{path} is a directory; list_directory shows what it holds") from None


def _parent(ctx: ToolContext, path: str) -> ParentDir:
    """The judged directory of the existing file ``path`` names, for removing or renaming it."""
    try:
        return open_parent(ctx, path, judge=judge_of(ctx, "edit"), shown=path)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"there is no file at {path}") from None
