"""A one-line progress indicator on a terminal: shown while hive waits for the model or a tool."""

from __future__ import annotations

import shutil
import threading
from typing import TextIO

from hive_cli.cells import clip

__all__ = ["Spinner"]

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_INTERVAL = 0.1


class Spinner:
    """Draws ``⠋ label`` on ``stream`` until hidden. Thread-safe; the drawing thread starts on first use.

    Whoever writes to the same terminal calls :meth:`hide` first, so the line is cleared before real output.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._label: str | None = None
        self._drawn = False
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None

    def show(self, label: str) -> None:
        """Start (or relabel) the indicator; a label wider than the terminal is cut to fit (by cells, so CJK
        text cannot wrap the line and leave a copy of it behind)."""
        label = clip(label, shutil.get_terminal_size().columns - 3)
        with self._lock:
            self._label = label
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="hive-spinner", daemon=True)
                self._thread.start()
            self._changed.notify()

    def hide(self) -> None:
        """Clear the indicator's line, if it is drawn."""
        with self._lock:
            self._label = None
            if self._drawn:
                self._stream.write("\r\x1b[2K")
                self._stream.flush()
                self._drawn = False

    def _run(self) -> None:
        frame = 0
        with self._lock:
            while True:
                if self._label is None:
                    self._changed.wait()
                    continue
                self._stream.write(f"\r\x1b[2K{_FRAMES[frame % len(_FRAMES)]} {self._label}")
                self._stream.flush()
                self._drawn = True
                frame += 1
                self._changed.wait(_INTERVAL)
