"""Whether local inference can run here: the runtime (llama-cpp-python) and the model file, for ``hive doctor``
and for error messages, with what to install when either is missing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .model_source import ModelSource
from .model_source import UnknownModel
from .model_source import model_source
from .models import INSTALL_HINT
from .models import default_model_path

__all__ = ["LocalStatus", "local_status"]


@dataclass(frozen=True)
class LocalStatus:
    """What local inference has to work with."""

    runtime_version: str | None
    """llama-cpp-python's version when it imports (its native library loaded), else ``None``."""
    runtime_problem: str | None
    """Why it does not import, when it does not."""
    model: Path | None
    """The GGUF file that would be used: the configured one, else the default model's (``None`` when the
    default model's distribution is not installed)."""
    configured: bool
    """Whether the file is configured (``lmsupply.generatorModel``) rather than the default model."""
    source: ModelSource | None = None
    """How ``lmsupply.generatorModel`` was read (``None`` when it names nothing)."""
    source_problem: str | None = None
    """Why it names nothing, when it does not."""

    def choice(self) -> str:
        """The chosen model and why, in a line (for ``hive doctor``)."""
        if self.source is None:
            return f"lmsupply.generatorModel: {self.source_problem}"
        return f"local model choice: {self.source.why}"

    @property
    def model_found(self) -> bool:
        """Whether that file exists."""
        return self.model is not None and self.model.is_file()

    @property
    def ready(self) -> bool:
        """Whether both are there."""
        return self.runtime_version is not None and self.model_found

    def runtime_advice(self) -> str:
        """What to do about a missing runtime: the command for the way this hive was installed."""
        return _install_advice()

    def model_advice(self) -> str:
        """What to do about a missing model."""
        if self.source is not None and self.source.kind == "hub":
            return (
                f"run `hive models pull {self.source.name}` (or let the first run download it), or unset "
                "lmsupply.generatorModel to use the packaged model"
            )
        if self.configured:
            return (
                "set lmsupply.generatorModel in config.yaml to an existing GGUF file, or unset it to use the "
                "default model"
            )
        return _install_advice()


def _install_advice() -> str:
    from hive_providers.installation import local_runtime_advice

    try:
        return local_runtime_advice()
    except Exception:  # an environment whose metadata cannot be read: the general advice still holds
        return INSTALL_HINT


def local_status(model: str | None = None) -> LocalStatus:
    """The runtime and the model local inference would use (``model``: ``lmsupply.generatorModel``, if set; a
    hub model is looked for in the hub's cache only).

    The runtime is imported to know: a wheel whose native library does not load is no runtime.
    """
    version: str | None = None
    problem: str | None = None
    try:
        import llama_cpp

        version = str(getattr(llama_cpp, "__version__", "unknown version"))
    except Exception as exc:  # ImportError, or the native library's OSError/RuntimeError
        problem = f"{type(exc).__name__}: {exc}"
    try:
        source: ModelSource | None = model_source(model)
    except UnknownModel as exc:
        return LocalStatus(version, problem, None, True, None, str(exc))
    if source.kind == "path":
        path: Path | None = source.path
    elif source.kind == "hub":
        from .hub import cached_model

        assert source.repo is not None
        path = cached_model(source.repo, source.pattern)
    else:
        path = default_model_path()
    return LocalStatus(version, problem, path, source.kind != "packaged", source)
