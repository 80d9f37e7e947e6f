"""The grammar that makes a local model write a well-formed call to one of the offered tools."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from hive_core import ToolSpec

__all__ = ["call_grammar"]


def call_grammar(tools: Sequence[ToolSpec], choice: str) -> str:
    """A GBNF grammar, built from the tools' JSON Schemas, for the body of one ``<tool_call>``: the tool named
    ``choice`` (any offered tool when no tool has that name) with arguments that fit its schema."""
    from llama_cpp import llama_grammar
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    chosen = [t for t in tools if t.name == choice] or list(tools)
    options = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": t.parameters or {"type": "object"}},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in chosen
    ]
    schema = options[0] if len(options) == 1 else {"anyOf": options}
    try:
        return json_schema_to_gbnf(msgspec.json.encode(schema).decode())
    except Exception:
        # A schema the converter cannot express: any JSON object, checked by the parser and the pipeline.
        return llama_grammar.JSON_GBNF
