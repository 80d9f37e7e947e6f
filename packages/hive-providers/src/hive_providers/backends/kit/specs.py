"""What hive knows about each coding-agent CLI before it starts one: its launch spec.

One :class:`LaunchSpec` per backend, declared once in :mod:`hive_providers.backends.registry`: its names, the
programs to look for, the arguments that start its protocol server, how a model and a mode reach it, how long it
may take to start, how its version is read, and how it is installed. Which private configuration points it at a
local model endpoint lives beside it in :mod:`hive_providers.backends.offline`.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Final
from typing import Literal

import msgspec

from hive_core.approvals import ApprovalService
from hive_core.approvals import ToolCallPolicy
from hive_core.questions import QuestionService
from hive_core.sandbox import SandboxSettings

__all__ = ["ENDPOINT_MODEL", "BackendOptions", "LaunchSpec", "ModelEndpoint", "ModelPassing", "Wire"]

Wire = Literal[
    "acp", "claude_stream", "codex_app_server", "copilot_server", "opencode_http", "pi_rpc", "omp_rpc"
]
"""The protocol hive speaks with the CLI: ACP, or a CLI's own (Claude Code's stream-json and control channel,
Codex's app-server, Copilot's headless server, OpenCode's HTTP server, Pi's JSON and RPC modes, OMP's JSON and
rpc-ui modes)."""


ModelPassing = Literal[
    "set_model", "new_session_settings", "argument", "config_option", "offline_config", "none"
]
"""How a model name reaches the CLI: ``session/set_model``; ``session/new`` settings (Hermes); a command-line
argument (:attr:`LaunchSpec.model_argument`); ``session/set_config_option`` with id ``model``; only through the
private configuration hive writes for an endpoint; or not at all."""


class LaunchSpec(msgspec.Struct, frozen=True, kw_only=True):
    """How one coding-agent CLI is found, started and spoken to."""

    name: str
    """The canonical name (``gemini``, ``claude-code``): what ``--agent`` and ``hive agents`` show."""
    title: str
    """The product's name for people (``Gemini CLI``)."""
    aliases: tuple[str, ...] = ()
    """Other names that resolve to this backend, matched case-insensitively like :attr:`name`."""
    executables: tuple[str, ...]
    """Program names looked for on ``PATH``, in order."""
    arguments: tuple[str, ...] = ()
    """The arguments that start its protocol server (``--acp``, ``acp``)."""
    wire: Wire = "acp"
    """The protocol spoken over its stdio (or HTTP)."""
    environment: dict[str, str] = {}
    """Variables set for every run (telemetry and update checks off)."""
    model_passing: ModelPassing = "set_model"
    """How a model chosen with ``-m`` reaches it."""
    model_argument: str | None = None
    """With ``model_passing="argument"``: the option that carries it (``-m``)."""
    ask_mode: str | None = None
    """The session mode in which it asks before acting, set with ``session/set_mode`` when the CLI offers it;
    ``None`` when its default mode already asks (or when asking is set in its private configuration)."""
    ask_config: dict[str, str] = {}
    """``session/set_config_option`` calls (config id to value) that make it ask before acting, applied after
    ``session/new`` or a resume when the session offers that option (Reasonix: ``tool_approval`` ``read-only``)."""
    bypass_mode: str | None = None
    """Its mode that acts without asking: only used when the user asks for it (``--agent-mode``)."""
    startup_timeout: float = 60.0
    """Seconds it may take from start to answering ``initialize``."""
    version_arguments: tuple[str, ...] = ("--version",)
    """The arguments that print its version."""
    install_hint: str
    """The command that installs it, shown when it is missing (a private prefix, never a global install)."""
    offline: bool = False
    """Whether hive can point it at a local model endpoint with no vendor login (see ``offline.py``)."""
    needs_login: str | None = None
    """Why it cannot run without the vendor's account, when it cannot."""
    auth_method: str | None = None
    """The ACP ``authenticate`` method to call before ``session/new`` when running offline, if it needs one."""
    serve_files: bool = True
    """Whether to advertise ``fs`` (read and write text files through hive) in ``initialize``."""
    serve_terminals: bool = False
    """Whether to advertise ``terminal`` (commands run by hive, under its rules and sandbox)."""
    poolable: bool = True
    """Whether warm sessions of it may be kept for reuse (see ``pool.py``)."""


ENDPOINT_MODEL: Final = "local-model"
"""The model a CLI asks a ``--model-endpoint`` for when ``-m`` names none."""


class ModelEndpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A model server a CLI is pointed at instead of its vendor's service (``--model-endpoint``)."""

    base_url: str
    """The OpenAI-compatible base URL, ``http://127.0.0.1:8080/v1`` (a CLI that speaks another wire API gets the
    same server's root; hive's scripted model server and LiteLLM answer all of them)."""
    model: str = ENDPOINT_MODEL
    """The model name sent to the endpoint."""
    api_key: str = "hive-local-dummy-key"
    """The key sent; local servers ignore it, but most CLIs refuse to start without one."""
    context_window: int = 32768
    """The context window written into configurations that ask for one."""

    @property
    def root_url(self) -> str:
        """The base URL without a trailing ``/v1``: for CLIs that add their own API path."""
        url = self.base_url.rstrip("/")
        return url[: -len("/v1")] if url.endswith("/v1") else url


@dataclass(kw_only=True)
class BackendOptions:
    """What the host tells a backend: where it works, which model, and who judges and answers its requests."""

    cwd: Path
    """The project directory the CLI works in."""
    model: str | None = None
    """A model name for the CLI (``-m``); ``None`` for its own default (or the endpoint's model)."""
    mode: str | None = None
    """A session mode to set instead of the spec's :attr:`~LaunchSpec.ask_mode` (``--agent-mode``)."""
    endpoint: ModelEndpoint | None = None
    """A local model endpoint: hive writes the CLI's private configuration for it in a private ``HOME``."""
    home: Path | None = None
    """The private ``HOME`` for runs with an endpoint; default ``<hive home>/agents/<name>/home``."""
    executable: str | None = None
    """The program to run instead of searching :attr:`LaunchSpec.executables` on ``PATH``."""
    arguments: tuple[str, ...] | None = None
    """Arguments replacing the spec's :attr:`~LaunchSpec.arguments`."""
    environment: dict[str, str] = field(default_factory=dict[str, str])
    """More variables for the CLI's process."""
    resume: str | None = None
    """The CLI's own session id to resume (``session/load`` or ``session/resume``)."""
    fork: bool = False
    """With :attr:`resume`: continue in a copy of that CLI session, leaving the original as it was. A backend
    whose CLI cannot copy a session raises :class:`~hive_providers.backends.kit.errors.BackendUnavailable` saying
    so, before it starts anything; after the first turn :attr:`~hive_core.backends.AgentBackend.session_id` is
    the copy's id."""
    session_key: str | None = None
    """The logical session key for the pool (hive's session id); ``None`` for an anonymous run."""
    policy: ToolCallPolicy | None = None
    """The permission rules that judge the CLI's permission requests, file reads and writes and commands first;
    ``None`` asks about everything."""
    approvals: ApprovalService | None = None
    """Who answers what the rules ask about (the terminal, or the wire); ``None`` rejects it (fail closed)."""
    questions: QuestionService | None = None
    """Who answers the CLI's questions; ``None`` declines them."""
    sandbox: SandboxSettings | None = None
    """The sandbox for commands the CLI runs through hive's terminals."""
    startup_timeout: float | None = None
    """Seconds the CLI may take to start, replacing the spec's."""
    cancel_grace: float = 5.0
    """Seconds between the protocol's cancel, SIGINT and killing the process group."""
