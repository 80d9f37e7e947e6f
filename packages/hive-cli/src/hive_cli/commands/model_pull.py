"""``hive models pull``: download a local model (an alias, ``REPO[:FILE_PATTERN]``, ``gguf:auto``, or the
configured ``lmsupply.generatorModel``) into the Hugging Face cache, so that no run has to."""

from __future__ import annotations

import sys
import time
from pathlib import Path

__all__ = ["pull_epilog", "pull_main"]


def pull_epilog() -> str:
    """The help's list of aliases, with each model's repository, size and memory need."""
    from hive_providers.local.model_table import MODEL_TABLE

    width = max(len(model.alias) for model in MODEL_TABLE)
    lines = ["\b", "Aliases (gguf:auto: the largest Qwen 2.5 this machine runs well, see `hive doctor`):"]
    for model in MODEL_TABLE:
        where = f"{model.repo} {model.pattern}" if model.repo else "packaged with hive"
        lines.append(
            f"  {model.alias:<{width}}  {model.size_gb:4.1f} GB, {model.ram_gb:3.1f} GB RAM  {where}"
        )
    lines += [
        "",
        "\b",
        "Examples:",
        "  hive models pull qwen2.5-1.5b",
        "  hive models pull Qwen/Qwen3-4B-GGUF:*Q4_K_M*",
    ]
    return "\n".join(lines)


def _configured() -> str | None:
    """``lmsupply.generatorModel`` as configured here."""
    from hive_core.config import find_project_root
    from hive_core.config import load_config
    from hive_providers import CONFIG_SCHEMA
    from hive_providers.registry import provider_settings

    loaded = load_config(find_project_root(Path.cwd()), schema=CONFIG_SCHEMA)
    return provider_settings(loaded, "local").model


def pull_main(name: str | None) -> int:
    """Download ``name`` (default: the configured local model); exit 1 with one line when it cannot be had."""
    from hive_core.config import ConfigError
    from hive_providers.local.hub import HubError
    from hive_providers.local.hub import cached_model
    from hive_providers.local.hub import download_model
    from hive_providers.local.model_source import UnknownModel
    from hive_providers.local.model_source import model_source

    try:
        source = model_source(name if name is not None else _configured())
    except (UnknownModel, ConfigError) as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    if source.kind == "packaged":
        sys.stdout.write(f"{source.name}: SmolLM2-135M is packaged with hive; nothing to download\n")
        return 0
    if source.kind == "path" or source.repo is None:
        sys.stderr.write(f"hive: {source.name} is a file path; only hub models are pulled\n")
        return 1
    found = cached_model(source.repo, source.pattern)
    if found is not None:
        sys.stdout.write(f"{source.name}: already downloaded: {found}\n")
        return 0
    if source.auto is not None:
        sys.stderr.write(f"hive: {source.auto.describe()}\n")

    def notice(what: str) -> None:
        sys.stderr.write(f"hive: downloading {what} into the Hugging Face cache\n")
        sys.stderr.flush()

    started = time.monotonic()
    try:
        path = download_model(source.repo, source.pattern, progress=sys.stderr.isatty(), notice=notice)
    except HubError as exc:
        sys.stderr.write(f"hive: cannot pull {source.name}: {exc}\n")
        return 1
    sys.stdout.write(f"{source.name}: downloaded in {time.monotonic() - started:.0f} s: {path}\n")
    return 0
