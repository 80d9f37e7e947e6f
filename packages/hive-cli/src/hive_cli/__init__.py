"""hive-agent-cli: the ``hive`` command."""

__all__: list[str] = []


def __getattr__(name: str) -> str:
    # ``__version__`` is read from the installed metadata when asked for (:mod:`hive_cli.version`): only
    # ``--version``, the interactive banner, ``agents`` and ``doctor`` need it.
    if name == "__version__":
        from .version import installed_version

        return installed_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
