"""The one wire decoder of the CLI backends (:mod:`hive_providers.backends.kit.wire`): a tagged union read into
frozen structs, an unknown kind kept whole as :class:`Unknown`, and the two policies for a known kind whose fields
are not the wire's types (an :class:`Unknown`, or field-by-field salvage)."""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from typing import Final
from typing import TypeAlias

import msgspec
import pytest

from hive_providers.backends.kit.wire import Unknown
from hive_providers.backends.kit.wire import WireStruct
from hive_providers.backends.kit.wire import WireUnion
from hive_providers.backends.kit.wire import decode


class Part(WireStruct, frozen=True):
    text: str | None = None
    size: int | None = None


class Inner(msgspec.Struct, frozen=True, tag="inner", tag_field="type"):
    text: str | None = None


class Said(WireStruct, frozen=True, tag="said", tag_field="kind"):
    text: str | None = None
    count: int = 0
    parts: list[Part] = msgspec.field(default_factory=list[Part])


class Wrapped(WireStruct, frozen=True, tag="wrapped", tag_field="kind"):
    session: str | None = None
    inner: Inner | None = None


Message: TypeAlias = Said | Wrapped

STRICT: Final = WireUnion[Message].of("kind", Message, optional={"wrapped": "inner"})
SALVAGING: Final = WireUnion[Message].of("kind", Message, salvage=True)
POLICIES: Final = {"strict": STRICT, "salvaging": SALVAGING}


@pytest.fixture(params=list(POLICIES))
def union(request: pytest.FixtureRequest) -> WireUnion[Message]:
    return POLICIES[request.param]


def test_a_message_that_fits_decodes_to_its_struct(union: WireUnion[Message]) -> None:
    raw = {"kind": "said", "text": "hi", "count": 2, "parts": [{"text": "a", "size": 1}], "new": [1]}
    assert union.decode(raw) == Said(text="hi", count=2, parts=[Part(text="a", size=1)])
    assert union.kinds == {"said", "wrapped"}


def test_an_unknown_kind_is_unknown_keeping_the_raw_object(union: WireUnion[Message]) -> None:
    raw = {"kind": "from_v9", "text": "hi", "extra": {"x": 1}}
    decoded = union.decode(raw)
    assert decoded == Unknown("from_v9", raw)
    assert isinstance(decoded, Unknown)
    assert decoded.raw is raw
    assert decoded.problem is None


def test_a_kind_that_is_no_string_or_missing_is_unknown_without_a_kind(union: WireUnion[Message]) -> None:
    assert union.decode({"kind": 3, "text": "hi"}) == Unknown(None, {"kind": 3, "text": "hi"})
    assert union.decode({"kind": ["said"]}) == Unknown(None, {"kind": ["said"]})
    assert union.decode({"text": "hi"}) == Unknown(None, {"text": "hi"})


@pytest.mark.parametrize("value", [None, "said", 7, [{"kind": "said"}], 1.5])
def test_a_value_that_is_no_object_is_unknown_and_empty(union: WireUnion[Message], value: object) -> None:
    assert union.decode(value) == Unknown(None, {})


def test_a_missing_or_null_field_takes_its_default(union: WireUnion[Message]) -> None:
    assert union.decode({"kind": "said"}) == Said()
    assert union.decode({"kind": "said", "text": None, "parts": [], "count": 0}) == Said()
    assert union.decode({"kind": "wrapped", "inner": None}) == Wrapped()


def test_a_mapping_that_is_no_dict_decodes_too(union: WireUnion[Message]) -> None:
    class Frozen(Mapping[str, object]):
        def __init__(self, **fields: object) -> None:
            self._fields = fields

        def __getitem__(self, key: str) -> object:
            return self._fields[key]

        def __iter__(self) -> Iterator[str]:
            return iter(self._fields)

        def __len__(self) -> int:
            return len(self._fields)

    assert union.decode(Frozen(kind="said", text="hi")) == Said(text="hi")


def test_a_wrong_typed_known_kind_is_unknown_with_its_problem_by_default() -> None:
    raw = {"kind": "said", "text": 7, "count": 2}
    decoded = STRICT.decode(raw)
    assert isinstance(decoded, Unknown)
    assert decoded.kind == "said"
    assert decoded.raw is raw
    assert decoded.problem is not None
    assert "$.text" in decoded.problem


def test_a_wrong_typed_known_kind_is_salvaged_field_by_field_when_the_union_salvages() -> None:
    raw = {"kind": "said", "text": 7, "count": 2, "parts": [{"text": "a", "size": "big"}, 3, {"text": "b"}]}
    assert SALVAGING.decode(raw) == Said(count=2, parts=[Part(text="a"), Part(text="b")])
    assert SALVAGING.decode({"kind": "said", "count": "many"}) == Said()


def test_the_optional_field_reads_as_absent_when_it_alone_does_not_fit() -> None:
    unread = {"kind": "wrapped", "session": "s1", "inner": {"type": "other_inner", "text": "x"}}
    assert STRICT.decode(unread) == Wrapped(session="s1")
    wrong = {"kind": "wrapped", "session": "s1", "inner": {"type": "inner", "text": 5}}
    assert STRICT.decode(wrong) == Wrapped(session="s1")
    assert STRICT.decode({"kind": "wrapped", "inner": {"type": "inner", "text": "x"}}) == Wrapped(
        inner=Inner(text="x")
    )


def test_the_optional_fallback_does_not_hide_another_wrong_field() -> None:
    raw = {"kind": "wrapped", "session": 9, "inner": {"type": "other_inner"}}
    decoded = STRICT.decode(raw)
    assert isinstance(decoded, Unknown)
    assert decoded.kind == "wrapped"
    assert decoded.problem is not None
    # Without an optional field a nested value that does not fit makes the message unknown.
    plain = WireUnion[Message].of("kind", Message)
    assert isinstance(plain.decode({"kind": "wrapped", "inner": {"type": "other_inner"}}), Unknown)


def test_a_struct_tagged_by_another_field_is_refused() -> None:
    with pytest.raises(ValueError, match="not tagged by 'type'"):
        WireUnion("type", Said)
    with pytest.raises(ValueError, match="not tagged"):
        WireUnion("kind", Part)


def test_decode_salvages_a_plain_struct() -> None:
    assert decode({"text": "a", "size": 2}, Part) == Part(text="a", size=2)
    assert decode({"text": ["a"], "size": 2}, Part) == Part(size=2)
    assert decode("not an object", Part) == Part()
    assert decode({"text": None}, Part) == Part()
