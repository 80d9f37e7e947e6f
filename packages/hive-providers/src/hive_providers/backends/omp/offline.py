"""OMP against a local model endpoint: its private configuration (``models.yml``) and environment.

OMP reads its providers from ``$PI_CODING_AGENT_DIR/models.yml`` (default ``~/.omp/agent``); hive writes one
``openai-completions`` provider, :data:`OMP_PROVIDER`, with no authentication, and passes ``--provider local
--model M``. Unverified against a real OMP here (its npm install fails): the shape follows OMP's documentation.
"""

from __future__ import annotations

import json
from typing import Final

from hive_providers.backends.offline import OfflineContext
from hive_providers.backends.offline import home_environment

__all__ = ["OMP_PROVIDER", "omp_recipe"]

OMP_PROVIDER: Final = "local"
"""The provider name the recipe writes and the backend passes with ``--provider``."""


def omp_recipe(ctx: OfflineContext) -> dict[str, str]:
    """OMP: an ``openai-completions`` provider ``local`` at the endpoint in ``~/.omp/agent/models.yml``."""
    agent_dir = ctx.home / ".omp" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    # JSON strings are valid YAML scalars: no YAML writer needed, and no quoting mistakes.
    lines = [
        "providers:",
        f"  {OMP_PROVIDER}:",
        f"    baseUrl: {json.dumps(ctx.endpoint.base_url)}",
        "    api: openai-completions",
        f"    apiKey: {json.dumps(ctx.endpoint.api_key)}",
        "    models:",
        f"      - id: {json.dumps(ctx.endpoint.model)}",
        f"        contextWindow: {ctx.endpoint.context_window}",
    ]
    (agent_dir / "models.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        **home_environment(ctx.home),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_NO_TITLE": "1",
    }
