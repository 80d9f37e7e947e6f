"""Where the engine is: ``temporal://HOST:PORT[/NAMESPACE]``, as ``--engine`` and ``serve.engine`` give it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

__all__ = ["DEFAULT_NAMESPACE", "TASK_QUEUE", "EngineAddress", "EngineAddressError"]

DEFAULT_NAMESPACE: Final = "default"
"""The Temporal namespace when the address names none."""

TASK_QUEUE: Final = "hive"
"""The task queue every front end schedules sessions on and every worker polls."""


class EngineAddressError(ValueError):
    """An engine address hive cannot use; the message says what a good one looks like."""


@dataclass(frozen=True)
class EngineAddress:
    """A Temporal frontend service and the namespace hive's workflows live in."""

    host: str
    port: int
    namespace: str = DEFAULT_NAMESPACE

    @classmethod
    def parse(cls, text: str) -> EngineAddress:
        """Read ``temporal://HOST:PORT[/NAMESPACE]``; raises :class:`EngineAddressError` naming what is wrong."""
        shape = "give temporal://HOST:PORT or temporal://HOST:PORT/NAMESPACE"
        parts = urlsplit(text.strip())
        if parts.scheme != "temporal":
            raise EngineAddressError(f"engine {text!r} is not one hive knows: {shape}")
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or port is None:
            raise EngineAddressError(f"engine {text!r} names no host and port: {shape}")
        namespace = parts.path.strip("/") or DEFAULT_NAMESPACE
        if "/" in namespace or parts.query or parts.fragment:
            raise EngineAddressError(f"engine {text!r} has more than a namespace after the port: {shape}")
        return cls(parts.hostname, port, namespace)

    @property
    def target(self) -> str:
        """``HOST:PORT``, as the Temporal client connects to it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return f"temporal://{self.target}/{self.namespace}"
