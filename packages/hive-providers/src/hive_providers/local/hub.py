"""Local models from the Hugging Face hub, through ``huggingface_hub`` (imported only here, when a model is named
by repository or alias): its cache (``HF_HOME``, ``HF_HUB_CACHE``), its endpoint (``HF_ENDPOINT``), resumable
downloads and progress bars.

A model is looked for in the cache first, without any request (:func:`cached_model`); the hub is asked only to
download one (:func:`download_model`), which ``hive models pull`` does, or the first run of a configured model.

The file of a repository: the ``.gguf`` files (projector files ``mmproj*`` aside) matching the pattern, if any;
among several, the first quantization of :data:`PREFERRED_QUANTIZATIONS` in their names, else the smallest. A
model split in parts (``-00001-of-00003.gguf``) is all its parts, and llama.cpp loads it from the first.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from pathlib import PurePosixPath
from typing import Any
from typing import Final

__all__ = [
    "PREFERRED_QUANTIZATIONS",
    "HubError",
    "HubUnreachable",
    "ModelFiles",
    "cached_model",
    "download_model",
    "pick_files",
]

PREFERRED_QUANTIZATIONS: Final = ("q4_k_m", "q4_k_s", "q4_0", "q5_k_m", "q5_0", "q6_k", "q8_0")
"""The quantizations chosen when no pattern says which, best first: Q4_K_M keeps most of the model's quality at
about 4.8 bits a weight, the usual default of GGUF builds."""

_SPLIT: Final = re.compile(r"(?P<stem>.+)-(?P<part>\d{5})-of-(?P<count>\d{5})\.gguf", re.IGNORECASE)
_REVISION: Final = "main"


class HubError(Exception):
    """A model that cannot be had from the hub: the message says why, in a line."""


class HubUnreachable(HubError):
    """The hub could not be reached (no network, ``HF_HUB_OFFLINE``, a timeout)."""


@dataclass(frozen=True, slots=True)
class ModelFiles:
    """The file(s) of one model in a repository."""

    names: tuple[str, ...]
    """Their paths in the repository, the first part first."""
    size: int | None
    """Their total size in bytes, when known."""


def _units(files: Mapping[str, int | None], pattern: str | None) -> dict[str, list[str]]:
    """The candidate models among ``files``: a name (a split model's stem) → its files."""
    units: dict[str, list[str]] = {}
    wanted = pattern.lower() if pattern else None
    for name in sorted(files):
        base = PurePosixPath(name).name.lower()
        if not base.endswith(".gguf") or base.startswith("mmproj"):
            continue
        if wanted is not None and not (
            fnmatch.fnmatchcase(base, wanted) or fnmatch.fnmatchcase(name.lower(), wanted)
        ):
            continue
        split = _SPLIT.fullmatch(name)
        units.setdefault(split.group("stem") if split else name, []).append(name)
    return units


def _complete(names: list[str]) -> bool:
    split = _SPLIT.fullmatch(names[0])
    return split is None or len(names) == int(split.group("count"))


def pick_files(files: Mapping[str, int | None], pattern: str | None) -> ModelFiles | None:
    """The model among ``files`` (repository path → size, ``None`` when unknown) that ``pattern`` picks (see the
    module's documentation); ``None`` when none matches or a split model misses a part."""
    units = {key: names for key, names in _units(files, pattern).items() if _complete(names)}
    if not units:
        return None

    def rank(key: str) -> tuple[int, int, str]:
        lowered = key.lower()
        preferred = next(
            (i for i, quant in enumerate(PREFERRED_QUANTIZATIONS) if quant in lowered),
            len(PREFERRED_QUANTIZATIONS),
        )
        size = sum(files[name] or 0 for name in units[key])
        return preferred, size, key

    chosen = sorted(units[min(units, key=rank)])
    sizes = [files[name] for name in chosen]
    total = sum(size for size in sizes if size is not None) if None not in sizes else None
    return ModelFiles(tuple(chosen), total)


def _hub() -> Any:
    """``huggingface_hub``, whose download functions are partly untyped."""
    import huggingface_hub

    return huggingface_hub


def cached_model(repo: str, pattern: str | None) -> Path | None:
    """The model's first file in the hub's cache (of the repository's ``main`` as last downloaded), found
    without any request; ``None`` when it is not there whole."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        folder = Path(_hub().snapshot_download(repo, revision=_REVISION, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        return None
    present = {
        path.relative_to(folder).as_posix(): None
        for path in folder.rglob("*")
        if path.suffix.lower() == ".gguf" and path.is_file()
    }
    picked = pick_files(present, pattern)
    return folder / picked.names[0] if picked is not None else None


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _hub_error(exc: BaseException, repo: str) -> HubError:
    import httpx2
    from huggingface_hub.errors import GatedRepoError
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.errors import OfflineModeIsEnabled
    from huggingface_hub.errors import RepositoryNotFoundError

    if isinstance(exc, OfflineModeIsEnabled | httpx2.TransportError):
        return HubUnreachable(f"the Hugging Face hub cannot be reached ({_describe(exc)})")
    if isinstance(exc, GatedRepoError):
        return HubError(f"{repo} is gated on the hub: accept its terms there and set HF_TOKEN")
    if isinstance(exc, RepositoryNotFoundError):
        return HubError(f"no repository {repo} on the hub (a private one needs HF_TOKEN)")
    if isinstance(exc, HfHubHTTPError):
        return HubError(f"the hub answered HTTP {exc.response.status_code} for {repo}")
    return HubError(f"downloading {repo} failed: {_describe(exc)}")


def _size(size: int | None) -> str:
    return f"{size / 1e9:.1f} GB" if size and size >= 1e8 else f"{(size or 0) / 1e6:.0f} MB"


def download_model(
    repo: str, pattern: str | None, *, progress: bool, notice: Callable[[str], None] | None = None
) -> Path:
    """Download the model's file(s) into the hub's cache (resuming a partial download) and return its first file.

    ``notice`` is told what is about to be downloaded and its size; ``progress`` shows the hub's progress bars
    (on a terminal). :class:`HubUnreachable` when the hub cannot be reached, :class:`HubError` for any other
    reason (no such repository, no matching file, a cache that cannot be written)."""
    from huggingface_hub import HfApi
    from huggingface_hub.utils import disable_progress_bars
    from huggingface_hub.utils import enable_progress_bars

    try:
        info: Any = HfApi().model_info(repo, files_metadata=True)
    except Exception as exc:
        raise _hub_error(exc, repo) from exc
    files: dict[str, int | None] = {sibling.rfilename: sibling.size for sibling in info.siblings or ()}
    picked = pick_files(files, pattern)
    if picked is None:
        wanted = f"matching {pattern!r}" if pattern else ""
        raise HubError(f"{repo} has no GGUF file {wanted}".rstrip())
    if notice is not None:
        shown = (
            picked.names[0]
            if len(picked.names) == 1
            else f"{picked.names[0]} and {len(picked.names) - 1} more"
        )
        notice(f"{repo}/{shown} ({_size(picked.size)})")
    if progress:
        enable_progress_bars()
    else:
        disable_progress_bars()
    paths: list[Path] = []
    try:
        for name in picked.names:
            paths.append(Path(_hub().hf_hub_download(repo, name, revision=_REVISION)))
    except Exception as exc:
        raise _hub_error(exc, repo) from exc
    return paths[0]
