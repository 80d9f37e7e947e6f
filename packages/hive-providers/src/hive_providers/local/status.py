"""Whether local inference can run here: the runtime (llama-cpp-python) and the model file, for ``hive doctor``
and for error messages, with what to install when either is missing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
    """The runtime and the model local inference would use (``model``: the configured GGUF path, if any).

    The runtime is imported to know: a wheel whose native library does not load is no runtime.
    """
    version: str | None = None
    problem: str | None = None
    try:
        import llama_cpp

        version = str(getattr(llama_cpp, "__version__", "unknown version"))
    except Exception as exc:  # ImportError, or the native library's OSError/RuntimeError
        problem = f"{type(exc).__name__}: {exc}"
    if model is not None:
        path: Path | None = Path(model).expanduser()
    else:
        path = default_model_path()
    return LocalStatus(version, problem, path, model is not None)
