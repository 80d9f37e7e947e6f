"""ACP's file requests, served under hive's rules: ``fs/read_text_file`` by the read rules, ``fs/write_text_file``
judged exactly as hive's own ``write_file``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
from acp import RequestError

from hive_core.approvals import PathJudge
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE
from hive_providers.backends.kit.tool_calls import text_of

from .permissions import AcpPermissions

__all__ = ["AcpFiles", "positive"]


def positive(value: object) -> int | None:
    """``value`` when it is a positive integer, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value


class AcpFiles:
    """Reads and writes the files one turn's agent asks for, once :class:`AcpPermissions` authorised it."""

    def __init__(self, permissions: AcpPermissions) -> None:
        self._permissions = permissions

    async def read_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        """``fs/read_text_file``: the file's text from ``line`` (1-based) for ``limit`` lines, after the read
        rules (and the human, when they ask) allowed it."""
        path = self._path(params)
        line = positive(params.get("line"))
        limit = positive(params.get("limit"))
        arguments: dict[str, Any] = {"path": str(path)}
        policy = self._permissions.policy
        if isinstance(policy, PathJudge):
            verdict = policy.judge_path("read", str(path))
        else:
            verdict = self._permissions.verdict(READ_FILE, arguments)
        await self._permissions.authorise(READ_FILE, arguments, verdict, f"reading {path}")
        try:
            text = await anyio.Path(path).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise RequestError(-32002, f"no file at {path}", {"path": str(path)}) from None
        except OSError as error:
            raise RequestError(
                -32603, f"cannot read {path}: {error.strerror or error}", {"path": str(path)}
            ) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = (line or 1) - 1
            text = "".join(lines[start : start + limit if limit is not None else None])
        return {"content": text}

    async def write_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        """``fs/write_text_file``: judged exactly as hive's own ``write_file``; creates parent directories."""
        path = self._path(params)
        content = params.get("content")
        if not isinstance(content, str):
            raise RequestError.invalid_params({"content": "must be text"})
        arguments: dict[str, Any] = {"path": str(path), "content": content}
        verdict = self._permissions.verdict(WRITE_FILE, arguments)
        await self._permissions.authorise(WRITE_FILE, arguments, verdict, f"writing {path}")
        try:
            await anyio.Path(path).parent.mkdir(parents=True, exist_ok=True)
            await anyio.Path(path).write_text(content, encoding="utf-8")
        except OSError as error:
            raise RequestError(
                -32603, f"cannot write {path}: {error.strerror or error}", {"path": str(path)}
            ) from None
        return {}

    def _path(self, params: Mapping[str, Any]) -> Path:
        path = text_of(params.get("path"))
        if path is None:
            raise RequestError.invalid_params({"path": "must be a file path"})
        return self._permissions.resolve(path)
