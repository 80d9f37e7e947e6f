"""OMP (oh-my-pi) on its own JSON and rpc-ui streams, with its ``ask`` dialog (see :mod:`.backend`)."""

from .backend import OmpBackend

__all__ = ["OmpBackend"]
