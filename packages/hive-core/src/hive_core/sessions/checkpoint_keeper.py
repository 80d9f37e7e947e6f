"""The pipeline step that keeps a file's state before hive's file tools change it (see
:mod:`hive_core.sessions.checkpoints`).

It sits innermost in the tool pipeline, after the approval gate: only a call that is about to run is looked at,
and it reads the files the call names by the tool's declared path arguments (``path``; ``source`` and
``destination`` for ``move_file``), resolved as the tools resolve them. It knows nothing of how the tools open
files. A call to any other tool passes straight through: a turn that changes no file costs a dictionary lookup per
call.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import Final
from typing import TypeVar

import anyio
import anyio.to_thread

from hive_core.permissions import resolve_path
from hive_core.pipeline import Invocation
from hive_core.pipeline import Next
from hive_core.tools import ToolOutcome

from .checkpoints import FILE_CHANGING_TOOLS
from .checkpoints import MAX_KEPT_BYTES
from .checkpoints import CheckpointStore
from .checkpoints import current_digest
from .checkpoints import read_state

__all__ = ["CheckpointKeeper"]

T = TypeVar("T")


class CheckpointKeeper:
    """A pipeline middleware keeping, in a session's store, each file's state before a turn changes it.

    Unbound (no session yet, or an embedder that keeps none) it passes every call through. :meth:`bind` names the
    store and the session the next turns are recorded in.
    """

    def __init__(
        self,
        tools: Mapping[str, tuple[str, ...]] = FILE_CHANGING_TOOLS,
        *,
        max_bytes: int = MAX_KEPT_BYTES,
    ) -> None:
        self.tools = dict(tools)
        """The tools that change files, with the arguments naming the files."""
        self.max_bytes = max_bytes
        """Files larger than this are not kept (only their size and digest)."""
        self.store: CheckpointStore | None = None
        """Where the states are kept; ``None`` until bound."""
        self.session_id: str | None = None
        """The session they belong to."""

    def bind(self, store: CheckpointStore, session_id: str) -> None:
        """Keep the file states of the next turns in ``store`` under ``session_id``."""
        self.store, self.session_id = store, session_id

    async def __call__(self, invocation: Invocation, call_next: Next) -> ToolOutcome:
        """Keep the named files' states, run the call, then record what it left."""
        names = self.tools.get(invocation.call.name)
        store, session_id = self.store, self.session_id
        if names is None or store is None or session_id is None:
            return await call_next(invocation)
        paths = self._paths(invocation, names)
        if not paths:
            return await call_next(invocation)

        def keep() -> list[tuple[int, Path]]:
            return [
                (store.keep_file(session_id, str(p), partial(read_state, p, max_bytes=self.max_bytes)), p)
                for p in paths
            ]

        # A file that cannot be read here cannot be kept: the call is refused rather than run without a way back.
        try:
            kept = await _run(keep, paths)
        except OSError as exc:
            return ToolOutcome.refused(
                "denied",
                f"'{invocation.call.name}' was not run: hive could not keep the file's current content to undo "
                f"it later ({exc.strerror or exc})",
            )
        try:
            return await call_next(invocation)
        finally:

            def left() -> None:
                for turn, path in kept:
                    try:
                        digest: str | None = current_digest(path, max_bytes=self.max_bytes)
                    except OSError:  # unreadable now: not known, so undo asks before overwriting it
                        digest = None
                    store.file_left(session_id, turn, str(path), digest)

            # Shielded: a cancelled call's changes must still be recorded, or undo would call them foreign.
            with anyio.CancelScope(shield=True):
                await _run(left, paths)

    @staticmethod
    def _paths(invocation: Invocation, names: tuple[str, ...]) -> list[Path]:
        found: list[Path] = []
        for name in names:
            value = invocation.arguments.get(name)
            if not isinstance(value, str) or not value.strip():
                continue
            try:
                path = resolve_path(invocation.context.working_dir, value)
            except ValueError:
                continue  # the tool refuses such a path itself
            if path not in found:
                found.append(path)
        return found


_INLINE_BYTES: Final = 256 * 1024
"""Files up to this size together are read on the event loop (tens of microseconds); larger ones in a worker
thread, whose hop costs more than reading a small file."""


async def _run(work: Callable[[], T], paths: list[Path]) -> T:
    total = 0
    for path in paths:
        with suppress(OSError):  # missing (a new file): nothing to read
            total += path.stat().st_size
    if total <= _INLINE_BYTES:
        return work()
    return await anyio.to_thread.run_sync(work)
