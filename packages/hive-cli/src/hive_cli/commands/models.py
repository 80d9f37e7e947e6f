"""``hive models``: the models each configured provider offers, with the context window hive uses for each and
where that figure came from."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from hive_core import Capabilities
from hive_core.config import ConfigError, find_project_root, load_config
from hive_core.context import CompactionSettings, ContextWindow, resolve_window
from hive_providers import CONFIG_SCHEMA, ProviderSettings

__all__ = ["models_main"]


async def _windows(
    settings: ProviderSettings, names: list[str], configured: int | None
) -> list[ContextWindow]:
    """Each model's window as a session with it would resolve it (its server asked where it can say)."""
    from hive_providers.registry import model_capabilities

    windows: list[ContextWindow] = []
    for name in names:
        try:
            capabilities = await model_capabilities(settings, name)
        except Exception:  # a model the adapter cannot be built for gets what a session would assume
            capabilities = Capabilities()
        windows.append(resolve_window(capabilities, configured))
    return windows


def models_main(*, provider: str | None, as_json: bool) -> int:
    """List models; exit 1 when no provider could be asked."""
    from hive_providers.registry import (
        ProviderSelectionError,
        configured_providers,
        list_models,
        select_provider,
    )

    try:
        loaded = load_config(find_project_root(Path.cwd()), schema=CONFIG_SCHEMA)
        chosen = [select_provider(loaded, provider)] if provider else configured_providers(loaded)
    except (ConfigError, ProviderSelectionError) as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    default = chosen[0].provider if chosen else None
    configured = CompactionSettings.from_config(loaded).max_context_tokens
    rows: list[dict[str, Any]] = []
    described: list[str] = []
    failures = 0
    for settings in chosen:
        try:
            names = anyio.run(list_models, settings)
        except Exception as exc:  # one unreachable provider must not hide the others
            failures += 1
            sys.stderr.write(f"hive: {settings.provider}: could not list models: {exc}\n")
            continue
        # A provider without a configured model (local inference) uses the first model it lists.
        used = settings.model or (names[0] if names else None)
        windows = anyio.run(_windows, settings, names, configured)
        for name, window in zip(names, windows, strict=True):
            rows.append(
                {
                    "modelId": name,
                    "provider": settings.provider,
                    "displayName": name,
                    "isDefault": settings.provider == default and name == used,
                    "contextWindow": window.tokens,
                    "contextWindowSource": window.source,
                }
            )
            described.append(window.describe())
    if as_json:
        sys.stdout.write(json.dumps(rows, ensure_ascii=False) + "\n")
    else:
        width = max((len(row["modelId"]) for row in rows), default=0)
        for row, window in zip(rows, described, strict=True):
            mark = "*" if row["isDefault"] else " "
            sys.stdout.write(f"{mark} {row['provider']:<10} {row['modelId']:<{width}}  {window}\n")
    return 1 if failures and not rows else 0
