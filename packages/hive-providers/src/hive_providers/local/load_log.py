"""What llama.cpp says while a model loads, kept from the terminal without silencing the rest of the process.

llama-cpp-python writes its load log to ``sys.stderr`` (its log callback and its own prints alike). The model
may load in a worker thread while the main thread goes on (see :meth:`~.client.LocalChatClient.preload`), so
``contextlib.redirect_stderr`` would swallow the main thread's messages too: :func:`load_log` sends only the
loading thread's writes to a buffer and passes every other thread's to the stream that was there.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Generator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["load_log"]


class _ThreadSplitStream(io.TextIOBase):
    """``sys.stderr`` during a load: one thread's writes are captured, the others' reach ``target``."""

    def __init__(self, target: TextIO, loading: threading.Thread, captured: io.StringIO) -> None:
        self.target = target  # first: ``__getattr__`` reads it
        self.loading: threading.Thread | None = loading
        self.captured = captured
        super().__init__()

    def write(self, s: str) -> int:  # pyright: ignore[reportImplicitOverride]
        """Capture ``s`` from the loading thread; pass it on from any other (and from all once the load is
        over: a stream that took this one as ``sys.stderr`` meanwhile keeps working)."""
        if threading.current_thread() is self.loading:
            return self.captured.write(s)
        return self.target.write(s)

    def flush(self) -> None:  # pyright: ignore[reportImplicitOverride]
        """Flush the stream passed on to."""
        self.target.flush()

    def isatty(self) -> bool:  # pyright: ignore[reportImplicitOverride]
        """Whether the stream passed on to is a terminal."""
        return self.target.isatty()

    def fileno(self) -> int:  # pyright: ignore[reportImplicitOverride]
        """The descriptor of the stream passed on to."""
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # pyright: ignore[reportImplicitOverride, reportIncompatibleVariableOverride]
        """The encoding of the stream passed on to."""
        return self.target.encoding

    @property
    def errors(self) -> str | None:  # pyright: ignore[reportImplicitOverride, reportIncompatibleVariableOverride]
        """The error handling of the stream passed on to."""
        return self.target.errors

    def __getattr__(self, name: str) -> object:
        """Anything else (``buffer``, ``name``, ...) is the stream's passed on to."""
        return getattr(self.target, name)


@contextmanager
def load_log(captured: io.StringIO) -> Generator[None]:
    """Capture what this thread writes to ``sys.stderr`` until the block ends, in ``captured``.

    At the end ``sys.stderr`` is put back only if it is still the capturing stream (another thread may have
    replaced it meanwhile, as a test's capture does).
    """
    split = _ThreadSplitStream(sys.stderr, threading.current_thread(), captured)
    sys.stderr = split
    try:
        yield
    finally:
        split.loading = None
        if sys.stderr is split:
            sys.stderr = split.target
