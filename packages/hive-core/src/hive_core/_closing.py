"""A base for objects that a ``with`` block closes."""

from __future__ import annotations

from typing import Self

__all__ = ["Closing"]


class Closing:
    """Used as a context manager, the object is itself, and :meth:`close` is called when the block ends."""

    def close(self) -> None:
        """Release what the object holds."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
