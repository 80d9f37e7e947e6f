from __future__ import annotations

import hive_protocol


def test_all_is_sorted_and_complete() -> None:
    names = hive_protocol.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    assert len(set(names)) == len(names)
    for name in names:
        assert hasattr(hive_protocol, name), name
    public = {n for n in vars(hive_protocol) if not n.startswith("_")}
    submodules = {
        "codec",
        "events",
        "limits",
        "lines",
        "options",
        "requests",
        "values",
        "sequence",
        "version",
    }
    assert public - submodules == set(names)


def test_protocol_version_is_an_integer() -> None:
    assert isinstance(hive_protocol.PROTOCOL_VERSION, int)
    assert hive_protocol.PROTOCOL_VERSION >= 1
