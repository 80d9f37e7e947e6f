"""``hive models``: the models each configured provider offers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from hive_core.config import ConfigError, find_project_root, load_config
from hive_providers import CONFIG_SCHEMA

__all__ = ["models_main"]


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
    rows: list[dict[str, Any]] = []
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
        for name in names:
            rows.append(
                {
                    "modelId": name,
                    "provider": settings.provider,
                    "displayName": name,
                    "isDefault": settings.provider == default and name == used,
                }
            )
    if as_json:
        sys.stdout.write(json.dumps(rows, ensure_ascii=False) + "\n")
    else:
        for row in rows:
            mark = "*" if row["isDefault"] else " "
            sys.stdout.write(f"{mark} {row['provider']:<10} {row['modelId']}\n")
    return 1 if failures and not rows else 0
