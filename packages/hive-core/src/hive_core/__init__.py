"""hive-core: the hive SDK (the agent loop, the tool pipeline, approvals and the runners)."""

__version__ = "0.1.0"

__all__: list[str] = []
