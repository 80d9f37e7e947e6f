"""A hive package's ``__version__``, read from its installed metadata only when asked for.

Importing :mod:`importlib.metadata` costs ~25 ms, more than the rest of ``hive --help``, and only ``--version`` and
``doctor`` need it: each package's module ``__getattr__`` (PEP 562) answers ``__version__`` through
:func:`version_attribute` instead of importing the metadata at start.
"""

from __future__ import annotations

__all__ = ["version_attribute"]


def version_attribute(module: str, distribution: str, name: str) -> str:
    """The attribute ``name`` that module ``module`` lacks: ``__version__`` is ``distribution``'s installed version;
    any other name raises :class:`AttributeError`, as a missing module attribute does."""
    if name == "__version__":
        from importlib.metadata import version

        return version(distribution)
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
