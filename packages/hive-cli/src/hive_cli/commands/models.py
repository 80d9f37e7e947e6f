"""``hive models``: the models each configured provider offers, with the context window hive uses for each and
where that figure came from."""

from __future__ import annotations

import sys
from pathlib import Path
from pathlib import PurePath
from typing import Any
from typing import Final

import anyio

from hive_cli.output import print_document
from hive_cli.output import print_records
from hive_core import Capabilities
from hive_core.config import ConfigError
from hive_core.config import find_project_root
from hive_core.config import load_config
from hive_core.context import CompactionSettings
from hive_core.context import ContextWindow
from hive_core.context import resolve_window
from hive_providers import CONFIG_SCHEMA
from hive_providers import ProviderSettings

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


_SOURCES: Final[dict[str, str]] = {"server": "from the server", "model_file": "from the model file"}


def _shown(settings: ProviderSettings, name: str, window: ContextWindow) -> tuple[str, str | None, str, str]:
    """The model's name, its file (a local model), where its window came from and that window described.

    A local model is named by its file, not its full path, and its window is read from that file.
    """
    if settings.provider == "local" and ("/" in name or "\\" in name):
        source = "model_file" if window.source == "server" else window.source
        described = window.describe().replace("(from the server)", f"({_SOURCES[source]})")
        return PurePath(name).name, name, source, described
    return name, None, window.source, window.describe()


def models_main(*, provider: str | None, output: str) -> int:
    """List models (a table, one JSON array with ``-o json``, a line each with ``-o jsonl``); exit 1 when no
    provider could be asked."""
    from hive_providers.registry import ProviderSelectionError
    from hive_providers.registry import configured_providers
    from hive_providers.registry import list_models
    from hive_providers.registry import select_provider

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
            shown, path, source, description = _shown(settings, name, window)
            row: dict[str, Any] = {
                "model_id": shown,
                "provider": settings.provider,
                "display_name": shown,
                "is_default": settings.provider == default and name == used,
                "context_window": window.tokens,
                "context_window_source": source,
            }
            if path is not None:
                row["path"] = path
            rows.append(row)
            described.append(description)
    if output == "json":
        print_document(rows)
    elif output == "jsonl":
        print_records(rows)
    else:
        width = max((len(row["model_id"]) for row in rows), default=0)
        for row, window in zip(rows, described, strict=True):
            mark = "*" if row["is_default"] else " "
            sys.stdout.write(f"{mark} {row['provider']:<10} {row['model_id']:<{width}}  {window}\n")
    return 1 if failures and not rows else 0
