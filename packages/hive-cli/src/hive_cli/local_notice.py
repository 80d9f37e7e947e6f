"""The one-time notice of a session answered by the built-in local model: which model answers, and how to use a
real one. A user with no key gets answers from a 135M-parameter demo model and should know it."""

from __future__ import annotations

from typing import Final
from typing import TextIO

from .opening import OpenSession

__all__ = ["LOCAL_MODEL_NOTICE", "local_model_notice", "say_local_model_notice"]

LOCAL_MODEL_NOTICE: Final = (
    "hive: answering with the built-in local model SmolLM2-135M, a small offline demo model (expect simple "
    "answers).\n"
    "hive: for a real model: `hive set openai.apiKey` (or set OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY), "
    "`--agent NAME` for a coding-agent CLI (`hive agents`), or a larger local model (`hive models pull --help`).\n"
)
"""What is said, once per process."""

_said: list[bool] = []


def local_model_notice(session: OpenSession) -> str | None:
    """The notice when hive's own loop runs ``session`` on the built-in local model; ``None`` otherwise (a model
    file the user configured is theirs, and a coding-agent CLI has its own model)."""
    if session.conversation.backend is not None:
        return None
    settings = session.host.settings
    if settings.provider != "local":
        return None
    from hive_providers.local.model_source import UnknownModel
    from hive_providers.local.model_source import model_source
    from hive_providers.local.models import default_model_path

    try:
        source = model_source(settings.model)
    except UnknownModel:
        return None
    packaged = default_model_path()
    # Without the model installed the run fails with what to install; a notice of who answers would be false.
    if packaged is None:
        return None
    # Unset, its alias, gguf:auto's pick on a small machine, or its file named by path.
    if source.kind == "packaged" or (source.kind == "path" and source.path == packaged):
        return LOCAL_MODEL_NOTICE
    return None


def say_local_model_notice(session: OpenSession, stream: TextIO) -> None:
    """Write the notice on ``stream`` the first time a session of this process needs it."""
    notice = local_model_notice(session)
    if notice is None or _said:
        return
    _said.append(True)
    stream.write(notice)
    stream.flush()
