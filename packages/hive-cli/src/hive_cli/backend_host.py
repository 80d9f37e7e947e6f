"""Putting a coding-agent backend together for a session: ``--agent NAME`` with its mode, model and endpoint.

The backend is judged by the very rules hive's own tools are (the project's permission policy, then the approval
service of the command: the terminal, or the wire), answers its questions through the command's question service,
runs commands in hive's sandbox, and is keyed in the pool by hive's session id. ``--agent hive`` (or no
``--agent``) is hive's own loop, which this module never builds.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from hive_core.approvals import ApprovalService
from hive_core.backends import HIVE_BACKEND
from hive_core.backends import AgentBackend
from hive_core.errors import UserError
from hive_core.questions import QuestionService
from hive_core.sandbox import SandboxSettings

from .assemble import Host
from .assemble import HostOptions

__all__ = ["AgentOptionError", "build_backend", "canonical_agent", "close_backend"]


class AgentOptionError(UserError, ValueError):
    """An ``--agent`` option that cannot be used as given (exit code 1)."""


def canonical_agent(name: str | None) -> str | None:
    """The canonical name of ``--agent NAME`` (``hive`` for the built-in loop); ``None`` when it was not given.

    Raises :class:`~hive_providers.backends.kit.errors.UnknownBackend` (its message lists the names and aliases).
    """
    if name is None:
        return None
    if name.strip().casefold() == HIVE_BACKEND:
        return HIVE_BACKEND
    from hive_providers.backends.registry import resolve_backend

    return resolve_backend(name.strip()).name


def _endpoint_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise AgentOptionError(
            f"--model-endpoint {url!r} is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)"
        )
    return url


def build_backend(
    host: Host,
    options: HostOptions,
    name: str,
    *,
    approvals: ApprovalService | None,
    questions: QuestionService | None,
    session_key: str,
    resume: str | None,
    fork: bool = False,
) -> AgentBackend:
    """The backend ``name`` (canonical, not ``hive``) for the session ``session_key``, resuming the CLI's session
    ``resume`` (with ``fork``: in a copy of it).

    Raises a :class:`~hive_core.errors.UserError` fit for one line: the backend speaks a protocol hive does not
    drive yet, cannot run against a model endpoint, or is not installed (with the command that installs it).
    """
    from hive_providers.backends.kit.errors import BackendUnavailable
    from hive_providers.backends.kit.specs import ENDPOINT_MODEL
    from hive_providers.backends.kit.specs import BackendOptions
    from hive_providers.backends.kit.specs import ModelEndpoint
    from hive_providers.backends.pool import default_pool
    from hive_providers.backends.registry import create_backend
    from hive_providers.backends.registry import resolve_backend

    spec = resolve_backend(name)
    endpoint = None
    if options.model_endpoint is not None:
        if not spec.offline:
            reason = spec.needs_login or "hive has no offline configuration for it"
            raise BackendUnavailable(
                f"agent backend {spec.name!r} cannot run against --model-endpoint: {reason}"
            )
        endpoint = ModelEndpoint(
            base_url=_endpoint_url(options.model_endpoint), model=options.model or ENDPOINT_MODEL
        )
    backend_options = BackendOptions(
        cwd=host.project_root,
        model=None if endpoint is not None else options.model,
        mode=options.agent_mode,
        endpoint=endpoint,
        resume=resume,
        fork=fork and resume is not None,
        session_key=session_key,
        policy=host.policy,
        approvals=approvals,
        questions=questions,
        sandbox=SandboxSettings.from_config(host.config),
    )
    return create_backend(spec, backend_options, pool=default_pool())


async def close_backend(backend: AgentBackend) -> None:
    """Stop ``backend`` and every warm CLI the process's pool keeps: nothing hive started outlives the command."""
    from hive_providers.backends.pool import default_pool

    try:
        await backend.aclose()
    finally:
        await default_pool().aclose()
