"""hive-providers: model adapters and coding-agent backends for hive."""

__version__ = "0.1.0"

__all__: list[str] = []
