"""Saved llama.cpp states of prompt prefixes, so that a new process (or a conversation whose system message
changed back) does not evaluate the same instructions and tools again.

A state is llama.cpp's own session file (``llama_state_save_file``: the KV cache of the prefix and its tokens),
named by a hash of the prefix's tokens, in a directory of its model file: the file's resolved path, size and
modification time and the llama-cpp-python version name the directory, so a state is never loaded into
another model (nor into a model file replaced in place, nor by another llama.cpp). The cache is bounded: after
each write the least recently used states are deleted until the whole cache fits. Everything in it may be
deleted at any time: a missing, partial or foreign file is a miss, and the prefix is evaluated as usual.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import hashlib
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import Final

from hive_core.config.paths import hive_home

__all__ = ["DEFAULT_PREFIX_CACHE_BYTES", "MIN_PREFIX_TOKENS", "PrefixCache", "default_prefix_cache_dir"]

DEFAULT_PREFIX_CACHE_BYTES: Final = 256 * 1024**2
"""The default bound of the whole cache (every model's states together)."""

MIN_PREFIX_TOKENS: Final = 8
"""Shorter prefixes are evaluated rather than saved: reading the file would cost about as much."""

_SUFFIX: Final = ".state"
_ABANDONED_AFTER: Final = 3600.0  # seconds: a temporary file this old belongs to no write in progress


def default_prefix_cache_dir() -> Path:
    """Where the states are kept by default: ``cache/local-prefix`` in the hive home."""
    return hive_home() / "cache" / "local-prefix"


class PrefixCache:
    """The saved prefix states under ``root``, at most ``max_bytes`` of them in all.

    :meth:`restore` and :meth:`save` are called from a model's generation thread with the model's lock held;
    several processes may share the directory (a state is written to a temporary file and renamed into place).
    """

    def __init__(self, root: Path, max_bytes: int = DEFAULT_PREFIX_CACHE_BYTES) -> None:
        self.root = root
        self.max_bytes = max_bytes

    def state_path(self, model_path: Path, tokens: Sequence[int]) -> Path:
        """The file that holds (or would hold) the state of ``tokens`` evaluated by the model of ``model_path``."""
        return self.root / _model_key(model_path) / f"{_tokens_key(tokens)}{_SUFFIX}"

    def restore(self, llama: Any, model_path: Path, tokens: Sequence[int]) -> bool:
        """Load the saved state of ``tokens`` into ``llama``; whether it was there and loaded.

        On success ``llama`` holds exactly ``tokens`` (its KV cache and its record of the evaluated tokens); on
        a failed load its record is emptied, so that the next evaluation starts from the beginning.
        """
        import llama_cpp

        try:
            path = self.state_path(model_path, tokens)
        except OSError:  # the model file is gone (it stays loaded): no key to look under
            return False
        if not path.is_file():
            return False
        count = len(tokens)
        out = (llama_cpp.llama_token * count)()
        loaded = ctypes.c_size_t(0)
        ok = bool(
            llama_cpp.llama_state_load_file(llama.ctx, os.fsencode(path), out, count, ctypes.pointer(loaded))
        )
        if not ok or loaded.value != count or list(out) != list(tokens):
            # Half-read or foreign: llama.cpp may have replaced part of the KV cache, so nothing of it counts.
            llama.n_tokens = 0
            with contextlib.suppress(OSError):
                path.unlink()
            return False
        llama.input_ids[:count] = tokens
        llama.n_tokens = count
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: the last to be evicted
        return True

    def save(self, llama: Any, model_path: Path, tokens: Sequence[int]) -> Path | None:
        """Save the state of ``llama``, which holds exactly ``tokens``, then trim the cache; the file written,
        or ``None`` when it could not be (a full disk, an unwritable home: the cache is an optimisation)."""
        import llama_cpp

        try:
            path = self.state_path(model_path, tokens)
        except OSError:
            return None
        temporary = path.with_name(f".{path.stem}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            array = (llama_cpp.llama_token * len(tokens))(*tokens)
            if not llama_cpp.llama_state_save_file(llama.ctx, os.fsencode(temporary), array, len(tokens)):
                raise OSError(f"llama.cpp could not write {temporary}")
            if temporary.stat().st_size > self.max_bytes:
                raise OSError("the state is larger than the whole cache")
            temporary.replace(path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()
            return None
        self.trim()
        return path

    def size(self) -> int:
        """The bytes the saved states take."""
        return sum(size for _, size, _ in self._states())

    def trim(self) -> None:
        """Delete the least recently used states until the cache is within its bound, and the temporary files
        of writes that never finished (a process killed while writing)."""
        abandoned = time.time() - _ABANDONED_AFTER
        with contextlib.suppress(OSError):
            for leftover in self.root.glob("*/.*.tmp"):
                with contextlib.suppress(OSError):
                    if leftover.stat().st_mtime < abandoned:
                        leftover.unlink()
        states = sorted(self._states(), key=lambda state: state[2])
        total = sum(size for _, size, _ in states)
        for path, size, _ in states:
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
            total -= size

    def _states(self) -> list[tuple[Path, int, float]]:
        found: list[tuple[Path, int, float]] = []
        with contextlib.suppress(OSError):
            for path in self.root.glob(f"*/*{_SUFFIX}"):
                with contextlib.suppress(OSError):
                    info = path.stat()
                    found.append((path, info.st_size, info.st_mtime))
        return found


def _model_key(model_path: Path) -> str:
    import llama_cpp

    resolved = model_path.resolve()
    info = resolved.stat()
    identity = f"{resolved}\0{info.st_size}\0{info.st_mtime_ns}\0{llama_cpp.__version__}"
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", resolved.stem)[:48]
    return f"{stem}-{hashlib.sha256(identity.encode()).hexdigest()[:16]}"


def _tokens_key(tokens: Sequence[int]) -> str:
    return hashlib.sha256(array.array("i", tokens).tobytes()).hexdigest()[:32]
