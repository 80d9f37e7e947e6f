"""The file of a hub model for a run: from the hub's cache without a request, else downloaded once with a notice
on stderr (the first run of a configured model); offline and not cached, an error naming ``hive models pull``."""

from __future__ import annotations

import sys
from pathlib import Path

from hive_core import ChatError

from .hub import HubError
from .hub import HubUnreachable
from .hub import cached_model
from .hub import download_model
from .model_source import ModelSource

__all__ = ["ensure_model", "find_model", "pull_command"]


def pull_command(source: ModelSource) -> str:
    """The command that downloads ``source`` ahead of a run."""
    return f"hive models pull {source.name}"


def find_model(source: ModelSource) -> Path:
    """The first file of the hub model ``source`` in the hub's cache; :class:`ChatError` when it is not there
    (nothing is downloaded)."""
    assert source.repo is not None
    path = cached_model(source.repo, source.pattern)
    if path is None:
        raise ChatError(
            f"local model {source.name} is not downloaded yet: run `{pull_command(source)}`",
            code="file_system",
        )
    return path


def ensure_model(source: ModelSource) -> Path:
    """The first file of the hub model ``source``: from the cache, else downloaded into it after a notice on
    stderr (progress bars when stderr is a terminal). :class:`ChatError` with one line when it cannot be had."""
    assert source.repo is not None
    found = cached_model(source.repo, source.pattern)
    if found is not None:
        return found

    def notice(what: str) -> None:
        sys.stderr.write(
            f"hive: downloading the local model {source.name}: {what} into the Hugging Face cache "
            f"(once; `{pull_command(source)}` does it ahead)\n"
        )
        sys.stderr.flush()

    try:
        return download_model(source.repo, source.pattern, progress=sys.stderr.isatty(), notice=notice)
    except HubUnreachable as exc:
        raise ChatError(
            f"local model {source.name} is not downloaded and {exc}: run `{pull_command(source)}` where the hub "
            "can be reached",
            code="file_system",
        ) from exc
    except HubError as exc:
        raise ChatError(f"local model {source.name}: {exc}", code="file_system") from exc
