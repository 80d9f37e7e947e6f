from __future__ import annotations

import pytest

import hive_protocol
from hive_protocol.package_version import version_attribute


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
        "package_version",
        "requests",
        "values",
        "sequence",
        "sse",
        "version",
    }
    assert public - submodules == set(names)


def test_protocol_version_is_an_integer() -> None:
    assert isinstance(hive_protocol.PROTOCOL_VERSION, int)
    assert hive_protocol.PROTOCOL_VERSION >= 1


def test_version_is_read_from_the_installed_metadata_when_asked_for() -> None:
    from importlib.metadata import version

    assert hive_protocol.__version__ == version("hive-protocol")
    assert version_attribute("hive_core", "hive-core", "__version__") == version("hive-core")
    with pytest.raises(AttributeError, match="module 'hive_protocol' has no attribute 'nope'"):
        version_attribute("hive_protocol", "hive-protocol", "nope")
