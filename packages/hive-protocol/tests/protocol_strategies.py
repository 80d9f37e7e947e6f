"""Hypothesis strategies that build any protocol struct from its type hints, and :func:`depth_of`, the reference
for how deeply a JSON value nests."""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Any
from typing import Literal
from typing import Union
from typing import cast
from typing import get_args
from typing import get_origin
from typing import get_type_hints

import msgspec
from hypothesis import strategies as st

_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def for_type(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy for values of ``tp`` as the protocol uses it."""
    if tp is Any:
        return json_values
    if tp is type(None):
        return st.none()
    if tp is str:
        return st.text(max_size=30)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(min_value=-(2**63), max_value=2**63 - 1)
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    origin = get_origin(tp)
    if origin is Literal:
        return st.sampled_from(get_args(tp))
    if origin in (Union, types.UnionType):
        return st.one_of([for_type(arg) for arg in get_args(tp)])
    if origin is list:
        return st.lists(for_type(get_args(tp)[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), for_type(get_args(tp)[1]), max_size=3)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return for_struct(tp)
    raise TypeError(f"no strategy for {tp!r}")


def for_struct(cls: type[msgspec.Struct]) -> st.SearchStrategy[Any]:
    """A strategy for instances of ``cls`` with every field drawn from its type."""
    hints = get_type_hints(cls)
    fields = {field.name: for_type(hints[field.name]) for field in msgspec.structs.fields(cls)}
    return st.builds(cls, **fields)


def depth_of(value: object) -> int:
    """The reference: how deeply arrays and objects nest in a decoded JSON value (a scalar is 0 deep)."""
    if isinstance(value, dict):
        children: Iterable[object] = cast("dict[object, object]", value).values()
    elif isinstance(value, list):
        children = cast("list[object]", value)
    else:
        return 0
    return 1 + max((depth_of(child) for child in children), default=0)
