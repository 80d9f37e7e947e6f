"""``/model`` on a session a coding-agent CLI serves: the model it runs on, and switching to another.

Switching restarts the CLI on the new model and resumes its own session, the way ``hive -r ID`` does, so the
conversation goes on. A CLI that takes no model from hive, or whose session a new process could not continue, is
told so and left as it is. The name reaches the CLI verbatim: hive's model aliases (``sonnet``) name models of
hive's own providers, and each CLI has aliases of its own (Claude Code's ``sonnet``, Gemini CLI's ``flash``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import cast

from .live_session import LiveSession

if TYPE_CHECKING:
    from hive_core.backends import AgentBackend
    from hive_providers.backends.kit.specs import LaunchSpec

__all__ = ["agent_model", "describe_agent_model", "switch_agent_model"]


def agent_model(live: LiveSession) -> str | None:
    """The model the session's CLI runs on, when hive knows it: ``-m`` (or ``/model``), the endpoint's model, or
    the one the session was recorded with; ``None`` for the CLI's own default."""
    options = live.options
    if options.model:
        return options.model
    if options.model_endpoint is not None:
        from hive_providers.backends.kit.specs import ENDPOINT_MODEL

        return ENDPOINT_MODEL
    return live.session.conversation.info.model


def describe_agent_model(live: LiveSession) -> str:
    """What ``/model`` says on a CLI session: the agent, its model and how to switch it."""
    spec = _spec(live)
    model = agent_model(live)
    using = f"model {model}" if model else "its own default model (hive is not told which)"
    refused = _refusal(live, spec)
    how = refused or "/model NAME restarts it on NAME in the same conversation"
    return f"agent {spec.name} ({spec.title}) runs on {using}; {how}"


def switch_agent_model(live: LiveSession, name: str) -> str:
    """Restart the session's CLI on the model ``name``, continuing its session; say what happened."""
    spec = _spec(live)
    refused = _refusal(live, spec)
    if refused is not None:
        return f"model unchanged: {refused}"
    if name == agent_model(live):
        return f"already on model {name} ({spec.title})"
    error = live.reopen(live.with_options(model=name))
    if error is not None:
        return f"model unchanged ({live.session.label}): {error}"
    session = live.session
    resumed = session.conversation.backend_session
    starting = (
        f"restarts on {name} in its session {resumed.session_id}"
        if resumed is not None
        else f"starts on {name} at the next message"
    )
    return (
        f"model: {session.label} for the next turns ({spec.title} {starting}; "
        f"session {session.session_id} goes on)"
    )


def _spec(live: LiveSession) -> LaunchSpec:
    from hive_providers.backends.registry import resolve_backend

    backend = live.session.conversation.backend
    assert backend is not None, "a session of hive's own loop has no agent CLI"
    return resolve_backend(backend)


def _refusal(live: LiveSession, spec: LaunchSpec) -> str | None:
    """Why ``/model NAME`` cannot switch this CLI; ``None`` when it can."""
    endpoint = live.options.model_endpoint is not None
    has_session = live.session.backend.session_id is not None
    if spec.model_passing == "none":
        return (
            f"{spec.title} takes no model from hive (it runs the one its own configuration names); "
            "change it there, or /agent hive for hive's own loop"
        )
    if spec.model_passing == "offline_config" and not endpoint:
        return (
            f"{spec.title} takes a model from hive only with --model-endpoint (the configuration hive writes)"
        )
    if spec.model_passing == "new_session_settings" and not endpoint and has_session:
        return (
            f"{spec.title} takes a model only when its session starts, and this one has started: /clear, then "
            "/model NAME, starts a new session on it"
        )
    if has_session and not _can_resume(live.session.backend):
        return (
            f"{spec.title} cannot resume its session in a new process (it offers neither session/resume nor "
            "session/load), so a restart on another model would lose the conversation: /clear, then "
            "/model NAME, starts a new session on it"
        )
    return None


def _can_resume(backend: AgentBackend) -> bool:
    """Whether a new process of the CLI could continue its session, as far as hive knows: an ACP CLI says so in
    its capabilities (known once a turn ran); the CLIs on protocols of their own all resume."""
    from hive_providers.backends.acp.backend import AcpBackend

    if not isinstance(backend, AcpBackend) or backend.last_connection is None:
        return True
    capabilities = backend.last_connection.capabilities
    sessions = capabilities.get("sessionCapabilities")
    offers_resume = (
        isinstance(sessions, dict) and cast("dict[str, object]", sessions).get("resume") is not None
    )
    return offers_resume or bool(capabilities.get("loadSession"))
