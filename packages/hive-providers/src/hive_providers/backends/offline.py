"""Private configurations that point a coding-agent CLI at a local model endpoint, with no vendor login.

Each recipe writes the files one CLI reads at start into a private ``HOME`` (never the user's) and returns the
environment that makes the CLI find them there: ``HOME`` and the XDG directories under it, the CLI's own
``*_HOME`` variable, a dummy key, the endpoint's URL and telemetry and update checks off. Every recipe also makes
the CLI ask before it runs a command or edits a file, so hive's rules and approvals see every tool call. The
recipes were verified against the pinned CLIs of ``.ci/agent-clis`` and hive's scripted model server.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import msgspec

from hive_core.config.paths import hive_home

from .kit.specs import BackendOptions
from .kit.specs import LaunchSpec
from .kit.specs import ModelEndpoint

__all__ = [
    "OFFLINE_RECIPES",
    "PI_PROVIDER",
    "OfflineContext",
    "OfflineRecipe",
    "cli_environment",
    "home_environment",
    "prepare_offline",
    "private_home",
]


@dataclass(kw_only=True)
class OfflineContext:
    """Where a recipe writes and what it points the CLI at."""

    home: Path
    """The private ``HOME`` the CLI runs with: every file a recipe writes goes under it."""
    cwd: Path
    """The project directory the CLI works in (recipes avoid writing there)."""
    endpoint: ModelEndpoint
    """The local model server."""


OfflineRecipe = Callable[[OfflineContext], dict[str, str]]
"""Writes one CLI's private configuration under :attr:`OfflineContext.home`; returns the variables to set."""


def home_environment(home: Path) -> dict[str, str]:
    """``HOME`` and the XDG directories under it, with ``DO_NOT_TRACK`` and ``NO_UPDATE_NOTIFIER``."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "DO_NOT_TRACK": "1",
        "NO_UPDATE_NOTIFIER": "1",
    }


def _base_environment(home: Path) -> dict[str, str]:
    """:func:`home_environment` and ``DISABLE_AUTOUPDATER``, the opt-outs every Node CLI honours."""
    return {**home_environment(home), "DISABLE_AUTOUPDATER": "1"}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _write_json(path: Path, value: object) -> None:
    _write(path, json.dumps(value, indent=2) + "\n")


def _toml_value(value: object) -> str:
    # JSON's string and list syntax is valid TOML for the plain values written here.
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _toml(tables: Mapping[str, Mapping[str, object]]) -> str:
    """A TOML document from ``{table: {key: value}}``; the table ``""`` holds the top-level keys."""
    lines: list[str] = []
    for table, values in tables.items():
        if table:
            lines.append(f"\n[{table}]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in values.items())
    return "\n".join(lines).lstrip("\n") + "\n"


def gemini_recipe(ctx: OfflineContext) -> dict[str, str]:
    """Gemini CLI: the Gemini API at the endpoint's root with a dummy key; its default approval mode asks."""
    _write_json(
        ctx.home / ".gemini" / "settings.json",
        {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "model": {"name": ctx.endpoint.model},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        },
    )
    return {
        **_base_environment(ctx.home),
        "GEMINI_API_KEY": ctx.endpoint.api_key,
        "GOOGLE_GEMINI_BASE_URL": ctx.endpoint.root_url,
        "GEMINI_MODEL": ctx.endpoint.model,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "GEMINI_TELEMETRY_ENABLED": "false",
    }


def copilot_recipe(ctx: OfflineContext) -> dict[str, str]:
    """GitHub Copilot CLI: offline mode with a bring-your-own-key chat-completions provider."""
    (ctx.home / ".copilot").mkdir(parents=True, exist_ok=True)
    return {
        **_base_environment(ctx.home),
        "COPILOT_HOME": str(ctx.home / ".copilot"),
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_PROVIDER_BASE_URL": ctx.endpoint.base_url,
        "COPILOT_PROVIDER_API_KEY": ctx.endpoint.api_key,
        "COPILOT_MODEL": ctx.endpoint.model,
    }


def opencode_recipe(ctx: OfflineContext) -> dict[str, str]:
    """OpenCode: an ``@ai-sdk/openai-compatible`` provider; commands and edits set to ask (its default runs
    them)."""
    config = ctx.home / ".config" / "opencode" / "opencode.json"
    _write_json(
        config,
        {
            "$schema": "https://opencode.ai/config.json",
            "provider": {
                "local": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Local",
                    "options": {"baseURL": ctx.endpoint.base_url, "apiKey": ctx.endpoint.api_key},
                    "models": {
                        ctx.endpoint.model: {
                            "name": ctx.endpoint.model,
                            "tool_call": True,
                            "limit": {"context": ctx.endpoint.context_window, "output": 4096},
                        }
                    },
                }
            },
            "model": f"local/{ctx.endpoint.model}",
            "small_model": f"local/{ctx.endpoint.model}",
            "autoupdate": False,
            "share": "disabled",
            "permission": {"bash": "ask", "edit": "ask", "webfetch": "ask"},
        },
    )
    return {
        **_base_environment(ctx.home),
        "OPENCODE_CONFIG": str(config),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    }


def kimi_recipe(ctx: OfflineContext) -> dict[str, str]:
    """Kimi Code: an OpenAI chat provider in ``$KIMI_CODE_HOME/config.toml``, in manual permission mode."""
    kimi_home = ctx.home / ".kimi-code"
    model = f"local/{ctx.endpoint.model}"
    _write(
        kimi_home / "config.toml",
        _toml(
            {
                "": {"default_model": model, "default_permission_mode": "manual", "telemetry": False},
                "providers.local": {
                    "type": "openai",
                    "base_url": ctx.endpoint.base_url,
                    "api_key": ctx.endpoint.api_key,
                },
                f'models."{model}"': {
                    "provider": "local",
                    "model": ctx.endpoint.model,
                    "max_context_size": ctx.endpoint.context_window,
                    "capabilities": ["tool_use"],
                },
            }
        ),
    )
    return {**_base_environment(ctx.home), "KIMI_CODE_HOME": str(kimi_home)}


def reasonix_recipe(ctx: OfflineContext) -> dict[str, str]:
    """Reasonix: an ``openai`` provider in ``~/.reasonix/config.toml``, its key only in ``~/.reasonix/.env``.

    No file makes its ACP sessions ask before running a command: the client sets the session's ``tool_approval``
    option to ``read-only`` (``session/set_config_option``).
    """
    reasonix_home = ctx.home / ".reasonix"
    _write(
        reasonix_home / "config.toml",
        _toml({"": {"default_model": "local"}})
        + "\n[[providers]]\n"
        + _toml(
            {
                "": {
                    "name": "local",
                    "kind": "openai",
                    "base_url": ctx.endpoint.base_url,
                    "model": ctx.endpoint.model,
                    "api_key_env": "HIVE_LOCAL_KEY",
                }
            }
        )
        + "\n"
        + _toml(
            {
                "environment": {"offline": True},
                # Its desktop app's default; over ACP a session asks only once its ``tool_approval`` option is
                # ``read-only`` (the default, ``workspace-write``, runs commands in the project without asking).
                "desktop": {
                    "default_tool_approval_mode": "read-only",
                    "check_updates": False,
                    "telemetry": False,
                },
                "permissions": {"mode": "ask"},
            }
        ),
    )
    _write(reasonix_home / ".env", f"HIVE_LOCAL_KEY={ctx.endpoint.api_key}\n")
    return {**_base_environment(ctx.home), "REASONIX_TELEMETRY": "0"}


def hermes_recipe(ctx: OfflineContext) -> dict[str, str]:
    """Hermes Agent: a ``custom`` provider in ``$HERMES_HOME/config.yaml``.

    Its approvals stay ``manual``, but Hermes asks only before commands it deems dangerous (and file edits in
    its default mode); no setting makes it ask before every command.
    """
    hermes_home = ctx.home / ".hermes"
    config = {
        "model": {
            "provider": "custom",
            "base_url": ctx.endpoint.base_url,
            "default": ctx.endpoint.model,
            "api_key": ctx.endpoint.api_key,
            # Hermes refuses a context below 64K tokens.
            "context_length": max(ctx.endpoint.context_window, 65536),
        },
    }
    _write(hermes_home / "config.yaml", msgspec.yaml.encode(config).decode())
    return {**_base_environment(ctx.home), "HERMES_HOME": str(hermes_home)}


def dcode_recipe(ctx: OfflineContext) -> dict[str, str]:
    """Deep Agents Code: the ``openai`` provider at the endpoint in ``~/.deepagents/config.toml``."""
    _write(
        ctx.home / ".deepagents" / "config.toml",
        _toml(
            {
                "models": {"default": f"openai:{ctx.endpoint.model}"},
                "models.providers.openai": {
                    "base_url": ctx.endpoint.base_url,
                    "api_key_env": "HIVE_LOCAL_KEY",
                },
            }
        ),
    )
    return {**_base_environment(ctx.home), "HIVE_LOCAL_KEY": ctx.endpoint.api_key}


def codebuddy_recipe(ctx: OfflineContext) -> dict[str, str]:
    """CodeBuddy Code: a chat-completions model in ``~/.codebuddy/models.json`` (its ACP server also wants a
    key in the environment)."""
    _write_json(
        ctx.home / ".codebuddy" / "models.json",
        {
            "models": [
                {
                    "id": ctx.endpoint.model,
                    "name": ctx.endpoint.model,
                    "vendor": "local",
                    "url": ctx.endpoint.base_url.rstrip("/") + "/chat/completions",
                    "apiKey": ctx.endpoint.api_key,
                    "maxInputTokens": ctx.endpoint.context_window,
                    "maxOutputTokens": 4096,
                    "supportsToolCall": True,
                    "supportsImages": False,
                }
            ],
            "availableModels": [ctx.endpoint.model],
        },
    )
    return {
        **_base_environment(ctx.home),
        "CODEBUDDY_API_KEY": ctx.endpoint.api_key,
        "CODEBUDDY_MODEL": ctx.endpoint.model,
        "CODEBUDDY_CODE_ENABLE_TELEMETRY": "0",
    }


# Claude Code speaks the Anthropic Messages API: the endpoint's root (it adds /v1/messages itself), a dummy key, the
# model for its main and background ("haiku") work. Its default permission mode asks about every command and edit
# through the control channel (acceptEdits would run `touch` unasked; the bypass mode is refused as root).
def claude_code_recipe(ctx: OfflineContext) -> dict[str, str]:
    """Claude Code: the Anthropic API at the endpoint's root with a dummy key; onboarding marked done."""
    config = ctx.home / ".claude"
    config.mkdir(parents=True, exist_ok=True)
    # Without it an interactive start shows the first-run screens; print mode does not need it, but is quieter.
    (ctx.home / ".claude.json").write_text(
        json.dumps({"hasCompletedOnboarding": True, "bypassPermissionsModeAccepted": False}) + "\n",
        encoding="utf-8",
    )
    model = ctx.endpoint.model
    return {
        **_base_environment(ctx.home),
        "CLAUDE_CONFIG_DIR": str(config),
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "ANTHROPIC_BASE_URL": ctx.endpoint.root_url,
        "ANTHROPIC_API_KEY": ctx.endpoint.api_key,
        "ANTHROPIC_MODEL": model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
        "ANTHROPIC_SMALL_FAST_MODEL": model,
    }


# Codex asks before running commands because hive starts every thread with approvalPolicy "untrusted", not through
# this file; `wire_api = "chat"` is a hard error in 0.171.
CODEX_KEY_VARIABLE: Final = "HIVE_LOCAL_KEY"
"""The variable holding the endpoint's key, named by the provider's ``env_key``."""


def codex_recipe(ctx: OfflineContext) -> dict[str, str]:
    """Codex CLI: a Responses-API provider at the endpoint in ``$CODEX_HOME/config.toml``."""
    codex_home = ctx.home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    text = "\n".join(
        [
            f"model = {json.dumps(ctx.endpoint.model)}",
            'model_provider = "local"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.local]",
            'name = "local"',
            f"base_url = {json.dumps(ctx.endpoint.base_url)}",
            f"env_key = {json.dumps(CODEX_KEY_VARIABLE)}",
            'wire_api = "responses"',
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
        ]
    )
    (codex_home / "config.toml").write_text(text, encoding="utf-8")
    return {
        **home_environment(ctx.home),
        "CODEX_HOME": str(codex_home),
        CODEX_KEY_VARIABLE: ctx.endpoint.api_key,
    }


# Pi reads its providers from $PI_CODING_AGENT_DIR/models.json; it has no permission prompts of its own.
PI_PROVIDER: Final = "local"
"""The provider name the recipe writes and the backend passes with ``--provider``."""


def pi_recipe(ctx: OfflineContext) -> dict[str, str]:
    """Pi: an ``openai-completions`` provider ``local`` at the endpoint in ``~/.pi/agent/models.json``."""
    agent_dir = ctx.home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            PI_PROVIDER: {
                "baseUrl": ctx.endpoint.base_url,
                "api": "openai-completions",
                "apiKey": ctx.endpoint.api_key,
                # The scripted server and most local servers know neither role nor effort.
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [{"id": ctx.endpoint.model, "contextWindow": ctx.endpoint.context_window}],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2) + "\n", encoding="utf-8")
    (agent_dir / "settings.json").write_text(json.dumps({"quietStartup": True}) + "\n", encoding="utf-8")
    return {
        **home_environment(ctx.home),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        # No version check, package update or install telemetry at start.
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
    }


OFFLINE_RECIPES: dict[str, OfflineRecipe] = {
    "gemini": gemini_recipe,
    "copilot": copilot_recipe,
    "copilot-acp": copilot_recipe,
    "opencode": opencode_recipe,
    "opencode-acp": opencode_recipe,
    "kimi": kimi_recipe,
    "reasonix": reasonix_recipe,
    "hermes": hermes_recipe,
    "deepagents": dcode_recipe,
    "codebuddy": codebuddy_recipe,
    "claude-code": claude_code_recipe,
    "codex": codex_recipe,
    "pi": pi_recipe,
}
"""The recipe of each backend that runs against a local endpoint, by canonical name."""


def prepare_offline(spec: LaunchSpec, options: BackendOptions) -> dict[str, str]:
    """Write ``spec``'s private configuration for ``options.endpoint`` and return the environment to run it with.

    The private home is ``options.home``, by default ``<hive home>/agents/<name>/home``; it is created.
    Raises :class:`~hive_providers.backends.kit.errors.BackendUnavailable` when hive has no recipe for the CLI or no
    endpoint was given.
    """
    from .kit.errors import BackendUnavailable

    recipe = OFFLINE_RECIPES.get(spec.name)
    if recipe is None:
        raise BackendUnavailable(f"hive cannot point {spec.title} at a local model endpoint")
    if options.endpoint is None:
        raise BackendUnavailable(f"{spec.title} needs a model endpoint to run offline (--model-endpoint)")
    home = private_home(spec, options)
    home.mkdir(parents=True, exist_ok=True)
    return recipe(OfflineContext(home=home, cwd=options.cwd, endpoint=options.endpoint))


def cli_environment(
    spec: LaunchSpec, options: BackendOptions, offline: Callable[[], Mapping[str, str]] | None = None
) -> dict[str, str]:
    """A CLI's environment: hive's, the spec's quiet settings, with an endpoint the offline recipe's (``offline()``,
    by default :func:`prepare_offline`), then the options' (which win)."""
    env = dict(os.environ)
    env.update(spec.environment)
    if options.endpoint is not None:
        env.update(offline() if offline is not None else prepare_offline(spec, options))
    env.update(options.environment)
    return env


def private_home(spec: LaunchSpec, options: BackendOptions) -> Path:
    """The private ``HOME`` of ``spec``'s runs: ``options.home``, by default ``<hive home>/agents/<name>/home``."""
    home = options.home if options.home is not None else hive_home() / "agents" / spec.name / "home"
    return home.absolute()
