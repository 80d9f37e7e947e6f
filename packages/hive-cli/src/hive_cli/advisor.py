"""The ``advisor`` section made into the advisor tool: off until ``advisor.model`` is set; the model of
``advisor.provider`` (unset: the session's provider), reached through the provider registry as the session's own
model is, or a coding-agent CLI when ``advisor.provider`` names one rather than a model provider
(``claude-code``, ``codex``, ``gemini-cli``...: ``claude`` and ``gemini`` name the model APIs)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import cast

from hive_core import ChatClient
from hive_core import Tool
from hive_core.chat import Capabilities
from hive_core.chat import ChatOptions
from hive_core.chat import ChatUpdate
from hive_core.chat import FinishUpdate
from hive_core.chat import TextUpdate
from hive_core.chat import UsageUpdate
from hive_core.config import LoadedConfig
from hive_core.messages import Message
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_providers import ProviderSettings

if TYPE_CHECKING:
    from hive_providers.backends.kit.specs import BackendOptions
    from hive_providers.backends.kit.specs import LaunchSpec

__all__ = ["AdvisorCliError", "CliAdvisorClient", "advisor_tools"]


class AdvisorCliError(RuntimeError):
    """The coding-agent CLI consulted as the advisor reported an error instead of advice."""


class CliAdvisorClient:
    """A coding-agent CLI as a model that answers one prompt with text: each request is one turn of the CLI,
    started for it and stopped after it. The CLI is given no approvals: what its rules would ask about is refused,
    so it can read but not act."""

    def __init__(self, spec: LaunchSpec, options: BackendOptions) -> None:
        self.spec = spec
        """The CLI."""
        self.options = options
        """How it is started (directory, model, rules, sandbox)."""

    @property
    def capabilities(self) -> Capabilities:
        """Text in, text out: no tools offered through it."""
        return Capabilities(tools=False, streamed_tool_calls=False)

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Run one turn of the CLI with the instructions and the messages' text as its prompt; its reply text,
        then its usage. Raises :class:`AdvisorCliError` when the turn reports an error."""
        from hive_providers.backends.registry import create_backend

        prompt = "\n\n".join(text for text in (options.instructions, *(m.text for m in messages)) if text)
        events: list[Event] = []
        backend = create_backend(self.spec, self.options)
        try:
            await backend(UserMessageRequest(content=prompt), events.append)
        finally:
            await backend.aclose()
        errors = [event.message for event in events if isinstance(event, ErrorEvent)]
        if errors:
            raise AdvisorCliError(f"{self.spec.name}: {'; '.join(errors)}")
        yield TextUpdate("".join(event.content for event in events if isinstance(event, TextDeltaEvent)))
        for event in events:
            if isinstance(event, TurnEndEvent) and (event.input_tokens or event.output_tokens):
                yield UsageUpdate(
                    event.input_tokens or 0, event.output_tokens or 0, event.cached_input_tokens or 0
                )
        yield FinishUpdate("stop")


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _is_model_provider(name: str) -> bool:
    from hive_providers.registry import UnknownProviderError
    from hive_providers.registry import provider_spec

    try:
        provider_spec(name)
    except UnknownProviderError:
        return False
    return True


def advisor_tools(
    loaded: LoadedConfig, working: ProviderSettings, *, max_output_tokens: int | None
) -> tuple[Tool, ...]:
    """The advisor tool when ``advisor.model`` is set (empty otherwise), consulting that model on
    ``advisor.provider`` or, unset, on ``working``'s provider, at most ``advisor.maxCalls`` times a session.

    The provider or CLI is checked now, so a setting that cannot work stops the start with a message naming what
    to set (``ProviderSelectionError``, or ``UnknownBackend`` for a name that is neither); the model's client is
    created for each consultation.
    """
    section = loaded.section("advisor")
    model = _text(section.get("model"))
    if model is None:
        return ()
    from hive_core.builtin_tools.advisor import advisor_tool

    provider = _text(section.get("provider")) or working.provider
    max_calls = cast("int", section["maxCalls"])
    if not _is_model_provider(provider):
        from hive_core.sandbox import SandboxSettings
        from hive_providers.backends.kit.specs import BackendOptions
        from hive_providers.backends.registry import resolve_backend

        spec = resolve_backend(provider)
        options = BackendOptions(
            cwd=loaded.project_root, model=model, sandbox=SandboxSettings.from_config(loaded)
        )
        return (advisor_tool(lambda: CliAdvisorClient(spec, options), max_calls=max_calls),)
    from hive_providers.registry import choose_provider
    from hive_providers.registry import create_client

    settings = choose_provider(loaded, provider, model).settings

    def connect() -> ChatClient:
        from .telemetry import traced_client

        return traced_client(create_client(settings), settings)

    return (advisor_tool(connect, max_calls=max_calls, max_output_tokens=max_output_tokens),)
