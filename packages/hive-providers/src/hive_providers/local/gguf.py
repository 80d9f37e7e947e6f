"""Reading a GGUF model file's header: the context length it was trained with, without loading it."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any
from typing import Final

__all__ = ["gguf_context_length"]

_GGUF_SCALARS: Final[dict[int, str]] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_GGUF_STRING: Final = 8
_GGUF_ARRAY: Final = 9


def gguf_context_length(path: Path) -> int | None:
    """The context length a GGUF model was trained with (``<architecture>.context_length``), read from the
    file's header without loading it; ``None`` when the header does not say.

    Raises ``ValueError`` when the file is not GGUF and ``OSError`` when it cannot be read.
    """
    with path.open("rb") as file:

        def read(fmt: str) -> Any:
            size = struct.calcsize(fmt)
            data = file.read(size)
            if len(data) != size:
                raise ValueError(f"{path} ends inside its GGUF header")
            return struct.unpack(fmt, data)[0]

        def string() -> str:
            return file.read(read("<Q")).decode("utf-8", "replace")

        def skip(kind: int) -> None:
            if kind == _GGUF_STRING:
                file.seek(read("<Q"), os.SEEK_CUR)
            elif kind == _GGUF_ARRAY:
                item, count = read("<I"), read("<Q")
                if item in _GGUF_SCALARS:
                    file.seek(struct.calcsize(_GGUF_SCALARS[item]) * count, os.SEEK_CUR)
                else:
                    for _ in range(count):
                        skip(item)
            elif kind in _GGUF_SCALARS:
                file.seek(struct.calcsize(_GGUF_SCALARS[kind]), os.SEEK_CUR)
            else:
                raise ValueError(f"{path}: unknown GGUF value type {kind}")

        if file.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        version = read("<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF version {version} is too old")
        read("<Q")  # tensor count
        architecture: str | None = None
        lengths: dict[str, int] = {}
        for _ in range(read("<Q")):
            key, kind = string(), read("<I")
            if key == "general.architecture" and kind == _GGUF_STRING:
                architecture = string()
            elif key.endswith(".context_length") and kind in _GGUF_SCALARS and kind not in (6, 7, 12):
                lengths[key] = int(read(_GGUF_SCALARS[kind]))
            else:
                skip(kind)
            if architecture is not None and f"{architecture}.context_length" in lengths:
                return lengths[f"{architecture}.context_length"]
        return None
