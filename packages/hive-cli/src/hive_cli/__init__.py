"""hive-cli: the ``hive`` command."""

__version__ = "0.1.0"

__all__: list[str] = []
