"""Which API the ``openai`` provider speaks: Responses for the OpenAI service, Chat Completions elsewhere.

``openai.api`` chooses (``responses`` or ``chat``); unset, the endpoint does: the OpenAI service (no endpoint,
or one on ``api.openai.com``) speaks Responses, and any other base URL (llama.cpp, vLLM, LiteLLM, a router)
is taken for an OpenAI-compatible server, which speaks Chat Completions. Such a server may need no key.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from ._openai_base import OPENAI_EFFORTS
from .compatible import COMPATIBLE_EFFORTS
from .openai_chat import OpenAIChatClient
from .openai_responses import OpenAIResponsesChatClient
from .openai_responses import from_settings as responses_client
from .registry import required_setting
from .settings import ProviderSettings

__all__ = ["OPENAI_SERVICE_HOST", "from_settings", "is_openai_service", "speaks_responses"]

OPENAI_SERVICE_HOST: Final = "api.openai.com"
"""The host of the OpenAI service."""

# Sent to a server that needs no key, so that the SDK does not refuse to build its client.
_NO_KEY: Final = "no-key"


def is_openai_service(endpoint: str | None) -> bool:
    """Whether ``endpoint`` (``None``: the default) is the OpenAI service rather than a compatible server."""
    if endpoint is None or not endpoint.strip():
        return True
    return (urlsplit(endpoint.strip()).hostname or "").lower() == OPENAI_SERVICE_HOST


def speaks_responses(settings: ProviderSettings) -> bool:
    """Whether the ``openai`` provider's client for ``settings`` speaks Responses (else Chat Completions)."""
    if settings.api is not None:
        return settings.api == "responses"
    return is_openai_service(settings.endpoint)


def from_settings(settings: ProviderSettings) -> OpenAIChatClient | OpenAIResponsesChatClient:
    """The ``openai`` provider's client: Responses or Chat Completions as :func:`speaks_responses` says.

    Raises :class:`~hive_providers.registry.MissingSettingError` without a model, or without a key for the
    OpenAI service.
    """
    if speaks_responses(settings):
        return responses_client(settings)
    service = is_openai_service(settings.endpoint)
    api_key = required_setting(settings, "api_key") if service else (settings.api_key or _NO_KEY)
    return OpenAIChatClient(
        model=required_setting(settings, "model"),
        api_key=api_key,
        base_url=settings.endpoint.strip().rstrip("/") if settings.endpoint else None,
        context_window=settings.context_length,
        idle_timeout=settings.idle_timeout,
        provider="openai",
        thinking=not service,
        efforts=OPENAI_EFFORTS if service else COMPATIBLE_EFFORTS,
        max_tokens_field="max_completion_tokens" if service else "max_tokens",
    )
