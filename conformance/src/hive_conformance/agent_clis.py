"""Where ``.ci/agent-clis`` installs the real coding-agent CLIs that tests and benchmarks drive."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["agent_clis_bin"]


def agent_clis_bin() -> Path:
    """The folder of the CLIs' commands: ``$HIVE_AGENT_CLIS_BIN``, else ``.ci/agent-clis``' default prefix (under
    ``$XDG_CACHE_HOME``, else ``~/.cache``)."""
    configured = os.environ.get("HIVE_AGENT_CLIS_BIN")
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hive" / "agent-clis" / "bin"
