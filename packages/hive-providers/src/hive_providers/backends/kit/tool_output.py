"""A tool's output as text, from the content blocks a CLI reports it in."""

from __future__ import annotations

import json

from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.tool_calls import text_of

__all__ = ["output_text"]


def output_text(content: object) -> str:
    """Text content as is; of a list of blocks, each block's text, the others as JSON (output is free-form)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in map(as_mapping, as_list(content)):
        text = text_of(block.get("text"))
        if text is not None:
            parts.append(text)
        elif block:
            parts.append(json.dumps(block, ensure_ascii=False, default=str))
    return "\n".join(parts)
