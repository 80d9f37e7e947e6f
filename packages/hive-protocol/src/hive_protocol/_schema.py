"""The JSON Schema of every protocol type, generated from the structs.

The committed ``schema.json`` is what non-Python clients read; a test fails when it drifts from the code.
Regenerate it with ``python -m hive_protocol._schema --write``.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from . import codec
from . import events
from . import requests
from .events import Event
from .requests import Request
from .version import PROTOCOL_VERSION

SCHEMA_PATH = Path(__file__).with_name("schema.json")


def field_docstrings(cls: type) -> dict[str, str]:
    """The attribute docstrings of ``cls`` (the string literal under each annotated field), by field name."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _struct_classes() -> dict[str, type[msgspec.Struct]]:
    found: dict[str, type[msgspec.Struct]] = {}
    for module in (requests, events, codec):
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and issubclass(obj, msgspec.Struct)
                and obj.__module__ == module.__name__
            ):
                found[name] = obj
    return found


def build_schema() -> dict[str, Any]:
    """The whole schema: ``Request`` and ``Event`` unions plus every struct under ``$defs``."""
    (request_schema, event_schema), components = msgspec.json.schema_components(
        [Request, Event], ref_template="#/$defs/{name}"
    )
    classes = _struct_classes()
    for name, component in components.items():
        cls = classes.get(name)
        if cls is None:
            continue
        for field, doc in field_docstrings(cls).items():
            prop = component.get("properties", {}).get(field)
            if prop is not None:
                prop["description"] = doc
    components["Request"] = {"description": "Any request a client may send.", **request_schema}
    components["Event"] = {"description": "Any event an agent may write.", **event_schema}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "hive turn-stream protocol",
        "description": "One JSON object per line: requests from a client, events from an agent.",
        "x-protocol-version": PROTOCOL_VERSION,
        "anyOf": [{"$ref": "#/$defs/Request"}, {"$ref": "#/$defs/Event"}],
        "$defs": dict(sorted(components.items())),
    }


def render() -> str:
    """The schema as the committed file's text."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """``--write`` regenerates ``schema.json``; ``--check`` (the default) exits 1 when it is stale."""
    text = render()
    if "--write" in argv:
        SCHEMA_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {SCHEMA_PATH}")
        return 0
    if not SCHEMA_PATH.exists() or SCHEMA_PATH.read_text(encoding="utf-8") != text:
        print(f"{SCHEMA_PATH} is stale: run python -m hive_protocol._schema --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
