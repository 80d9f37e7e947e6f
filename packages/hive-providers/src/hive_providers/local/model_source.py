"""What ``lmsupply.generatorModel`` names, read without touching the network.

- unset (or ``default``, ``gguf:default``): the model packaged with hive (SmolLM2-135M), never downloaded;
- a GGUF path: an existing file, or a value ending in ``.gguf`` (but ``org/name:PATTERN``), or starting with
  ``/``, ``~`` or ``.``;
- a short alias of :data:`~.model_table.MODEL_TABLE` (``qwen2.5-1.5b``, ``gguf:llama3.2-3b``...);
- ``gguf:auto`` (or ``auto``): the table's model this machine runs well (:func:`~.model_table.auto_choice`);
- a Hugging Face repository ``org/name``, with ``:FILE_PATTERN`` (a glob, case-insensitive) to pick its file;
  without one, the first quantization of :data:`~.hub.PREFERRED_QUANTIZATIONS` the repository has.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from typing import Literal

from .memory import total_memory
from .model_table import MODEL_TABLE
from .model_table import AutoChoice
from .model_table import auto_choice
from .model_table import table_model

__all__ = ["PACKAGED_NAMES", "ModelSource", "UnknownModel", "model_source"]

PACKAGED_NAMES: Final = frozenset({"", "default", "gguf:default"})
"""Names of the packaged model besides its alias."""
_AUTO_NAMES: Final = frozenset({"auto", "gguf:auto"})
_REPO: Final = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
"""A Hugging Face repository id: ``owner/name``."""


class UnknownModel(ValueError):
    """A value of ``lmsupply.generatorModel`` that names nothing hive can run."""


@dataclass(frozen=True, slots=True)
class ModelSource:
    """Where the local model comes from."""

    kind: Literal["packaged", "path", "hub"]
    """The packaged model, a file, or a Hugging Face repository."""
    name: str
    """The name as given (what ``hive models pull`` is told; ``default`` for the packaged model)."""
    why: str
    """How the name was read, for ``hive doctor``."""
    path: Path | None = None
    """The file of a ``path`` source."""
    repo: str | None = None
    """The repository of a ``hub`` source."""
    pattern: str | None = None
    """The file pattern of a ``hub`` source (``None``: the preferred quantization)."""
    auto: AutoChoice | None = None
    """What ``gguf:auto`` judged by, when the name was that."""

    @property
    def spec(self) -> str:
        """The repository and pattern of a ``hub`` source (``org/name:PATTERN``), else :attr:`name`."""
        if self.repo is None:
            return self.name
        return f"{self.repo}:{self.pattern}" if self.pattern else self.repo


def model_source(
    name: str | None, *, memory_bytes: int | None = None, cores: int | None = None
) -> ModelSource:
    """Read ``name`` (see the module's documentation); :class:`UnknownModel` when it names nothing.

    ``memory_bytes`` and ``cores`` are the machine's for ``gguf:auto`` (by default, this machine's)."""
    text = (name or "").strip()
    lowered = text.lower()
    if lowered in PACKAGED_NAMES:
        return ModelSource(
            "packaged", "default", "SmolLM2-135M, the packaged model (lmsupply.generatorModel unset)"
        )
    if lowered in _AUTO_NAMES:
        choice = auto_choice(
            memory_bytes if memory_bytes is not None else total_memory(),
            cores if cores is not None else os.cpu_count(),
        )
        picked = _from_table(choice.model.alias, text, choice.describe())
        return ModelSource(
            picked.kind, text, picked.why, picked.path, picked.repo, picked.pattern, auto=choice
        )
    repo, colon, pattern = text.partition(":")
    hub_form = (
        _REPO.fullmatch(repo) is not None
        and not repo.endswith((".", "-"))
        and ".." not in repo
        and bool(colon or not lowered.endswith(".gguf"))
    )
    if Path(text).expanduser().is_file() or (
        not hub_form
        and (
            lowered.endswith(".gguf")
            or text.startswith(("/", "~", ".", "\\"))
            or re.match(r"[A-Za-z]:[\\/]", text)
        )
    ):
        return ModelSource("path", text, f"the GGUF file {text}", path=Path(text).expanduser())
    if table_model(text) is not None:
        return _from_table(text, text, "")
    if lowered.startswith("gguf:"):
        known = ", ".join(model.alias for model in MODEL_TABLE)
        raise UnknownModel(f"unknown local model alias {text!r}; the aliases are: auto, {known}")
    if not hub_form:
        raise UnknownModel(
            f"lmsupply.generatorModel {text!r} is neither a GGUF path, a Hugging Face repository "
            "(org/name[:FILE_PATTERN]) nor an alias (`hive models pull --help` lists them)"
        )
    chosen = pattern.strip() or None
    return ModelSource(
        "hub",
        text,
        f"{repo}, file {chosen or 'of the preferred quantization'}",
        repo=repo,
        pattern=chosen,
    )


def _from_table(alias: str, name: str, why: str) -> ModelSource:
    model = table_model(alias)
    assert model is not None
    if model.repo is None:
        return ModelSource("packaged", name, why or f"{model.alias}: the packaged model")
    described = f"{why or model.alias} → {model.repo}, file {model.pattern}"
    return ModelSource("hub", name, described, repo=model.repo, pattern=model.pattern)
