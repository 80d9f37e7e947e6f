"""Keeping the start and the end of a stream whose length is not known in advance."""

from __future__ import annotations

from collections import deque

__all__ = ["HeadTailBuffer"]

_SNAP = 1000


class HeadTailBuffer:
    """Text collected up to a budget: everything while it fits, else its head, a marker and its tail.

    Command output carries its most useful part at the end (the error, the summary, the failing test), so the
    middle is what gets dropped. When text is dropped, the cut moves to the nearest line break if one is
    within 1,000 characters, and the marker says how many characters are missing.
    """

    def __init__(self, limit: int = 50_000, head: int = 20_000) -> None:
        if not 0 < head < limit:
            raise ValueError("the head must be shorter than the limit, and not empty")
        self._head_limit = head
        self._tail_limit = limit - head
        self._head: list[str] = []
        self._head_size = 0
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self._total = 0
        self._after_head: str | None = None

    @property
    def total(self) -> int:
        """How many characters were written."""
        return self._total

    def write(self, text: str) -> None:
        """Add text at the end."""
        self._total += len(text)
        room = self._head_limit - self._head_size
        if room > 0:
            self._head.append(text[:room])
            self._head_size += min(room, len(text))
            text = text[room:]
        if not text:
            return
        if self._after_head is None:
            self._after_head = text[0]
        self._tail.append(text)
        self._tail_size += len(text)
        # One character more than the tail is kept, to tell whether the tail starts a line.
        while self._tail_size - len(self._tail[0]) > self._tail_limit:
            self._tail_size -= len(self._tail.popleft())

    def getvalue(self) -> str:
        """What was kept, with a marker where the middle was dropped."""
        head = "".join(self._head)
        joined = "".join(self._tail)
        tail = joined[-self._tail_limit :]
        omitted = self._total - len(head) - len(tail)
        if not omitted:
            return head + tail
        cut = head.rfind("\n")
        if self._after_head != "\n" and cut >= 0 and len(head) - cut - 1 <= _SNAP:
            omitted += len(head) - cut - 1
            head = head[: cut + 1]
        start = tail.find("\n")
        if joined[-self._tail_limit - 1] != "\n" and 0 <= start < min(_SNAP, len(tail) - 1):
            omitted += start + 1
            tail = tail[start + 1 :]
        if not head.endswith("\n"):
            head += "\n"
        return f"{head}[... {omitted:,} characters omitted ...]\n{tail}"
