"""hive-conformance: a conformance kit for hive turn-stream runners."""

__version__ = "0.1.0"

__all__: list[str] = []
