"""The wire protocol's version, separate from any package version."""

__all__ = ["PROTOCOL_VERSION"]

PROTOCOL_VERSION = 1
"""Raised when a change could break a client; new optional fields and new types do not raise it."""
