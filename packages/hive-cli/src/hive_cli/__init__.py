"""hive-agent-cli: the ``hive`` command."""

__all__: list[str] = []


def __getattr__(name: str) -> str:
    # ``__version__`` is read from the installed metadata when asked for: importing importlib.metadata costs
    # ~25 ms, more than the rest of ``hive --help``, and only ``--version`` and ``doctor`` need it.
    if name == "__version__":
        from importlib.metadata import version

        return version("hive-agent-cli")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
