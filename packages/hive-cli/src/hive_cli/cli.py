"""The ``hive`` command line: the interactive mode, ``-p`` one-shots, ``run`` and the management commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import Unpack

import click

if TYPE_CHECKING:
    from .commands.session_flags import SessionFlags

__all__ = ["cli", "run_cli"]

_EFFORTS = ["none", "low", "medium", "high", "extra_high"]

_MAIN_EPILOG = """\b
Examples:
  hive                                   interactive mode
  hive -p "Summarize this directory"     one prompt, then exit
  hive "Why does the test fail?"         interactive, starting with this message
  git diff | hive -p "Review this"       the piped text, then the prompt
  hive -p "Hello" -o json                one JSON document on stdout
  hive -p "Hello" -o jsonl               streaming JSON Lines
  hive -c                                continue the latest session here
  hive -r 18f3a2c4d5e-1a2b3c4d --fork    resume a copy of a session
  hive --agent gemini -p "Fix it"        a coding-agent CLI runs it (`hive agents`)
"""


def _agent_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--allow``, and ``--agent``, ``--agent-mode`` and ``--model-endpoint``: a coding-agent CLI runs the turns."""
    command = click.option(
        "--allow",
        "allow",
        multiple=True,
        metavar="TOOL[:PATTERN]",
        help="Pre-approve calls for this run, on top of the rules (repeatable): execute_command:'pytest *', "
        "write_file:'docs/**', read_file, mcp__github__list_issues. The rules' guards still apply.",
    )(command)
    command = click.option(
        "--model-endpoint",
        metavar="URL",
        help="With --agent: run the CLI offline against this OpenAI-compatible server (-m names its model); hive "
        "writes the CLI's configuration in a private HOME.",
    )(command)
    command = click.option(
        "--agent-mode",
        metavar="MODE",
        help="With --agent: the CLI's session mode (e.g. its bypass mode); default: the mode that asks first.",
    )(command)
    return click.option(
        "--agent",
        metavar="NAME",
        help="Run the turns with this coding-agent CLI (`hive agents` lists the names); `hive` is hive's own loop.",
    )(command)


@dataclass
class _Invocation:
    """What ``run_cli`` needs to know about the options once a command has failed."""

    debug: bool = False


def _set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and isinstance(ctx.obj, _Invocation):
        ctx.obj.debug = True


def _set_store(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    # Through the environment, as sessions.store's variable: the configuration, and every process the command
    # starts (a `hive serve` session's, a subagent's), then find the same store.
    if value:
        from .session_store import STORE_VARIABLE

        os.environ[STORE_VARIABLE] = value


_store_option = click.option(
    "--store",
    metavar="URL",
    expose_value=False,
    is_eager=True,
    callback=_set_store,
    help="Where sessions are kept: a postgresql:// URL (default: sessions.store, else the hive home's file).",
)


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # `hive --version` alone is answered by __main__ before this module is imported; this is `hive --debug -V`.
    if value and not ctx.resilient_parsing:
        from .version import installed_version

        click.echo(f"hive {installed_version()}")
        ctx.exit()


POSITIONAL_PROMPT = "hive.positional_prompt"
"""Where :class:`_PromptGroup` leaves the words of ``hive "question"`` in the context's ``meta``."""


class _OneLineUsageError(click.UsageError):
    """A mistyped command or option: one ``hive:`` line naming the closest one, exit 2 as any usage error."""

    def show(self, file: Any = None) -> None:  # pyright: ignore[reportImplicitOverride]
        click.echo(f"hive: {self.format_message()}", err=True, file=file)


class _PromptGroup(click.Group):
    """The ``hive`` group: words that name no command are a prompt (``hive "fix the test"``), as in ``claude``.

    The group's options may stand before or after the words (``hive "fix it" -m sonnet``). A first word close to
    a command's name (``sesions``) is refused with the closest name, not sent to a model, when it stands alone or
    what follows it reads as that command's line: one of its subcommands (``hive sesions list``) or one of its own
    options (``hive modles --provider openai``). ``hive model this function`` stays a prompt.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        kept, words = self._split(ctx, args)
        if words:
            close = self._mistyped(ctx, words, kept)
            if close is not None:
                raise _OneLineUsageError(
                    f"no such command {words[0]!r} — did you mean {close!r}? "
                    f'(to send it to the model: hive -p "{" ".join(words)}")',
                    ctx,
                )
            ctx.meta[POSITIONAL_PROMPT] = " ".join(words)
        return super().parse_args(ctx, kept)

    def _mistyped(self, ctx: click.Context, words: list[str], options: list[str]) -> str | None:
        """The command ``words`` were meant to run, when they read as a mistyped command line; else ``None``."""
        import difflib

        if " " in words[0]:
            return None
        close = difflib.get_close_matches(words[0].lower(), list(self.commands), n=1, cutoff=0.75)
        if not close:
            return None
        command = self.commands[close[0]]
        if len(words) == 1:
            return close[0]
        if isinstance(command, click.Group) and words[1] in command.commands:
            return close[0]
        own = {name for param in self.get_params(ctx) for name in getattr(param, "opts", [])}
        theirs = {name for param in command.params for name in getattr(param, "opts", [])}
        flags = {option.partition("=")[0] for option in options}
        return close[0] if flags & (theirs - own) else None

    def _split(self, ctx: click.Context, args: list[str]) -> tuple[list[str], list[str]]:
        """``args`` without the prompt's words, and those words (none when a command is named first)."""
        takes_value = {
            name
            for param in self.get_params(ctx)
            if isinstance(param, click.Option) and not param.is_flag and not param.count
            for name in param.opts
        }
        kept: list[str] = []
        words: list[str] = []
        tokens = iter(args)
        for token in tokens:
            if token == "--":
                words.extend(tokens)
                break
            if token.startswith("-") and token != "-":
                kept.append(token)
                value = next(tokens, None) if token in takes_value else None  # ``--model=x`` carries its own
                if value is not None:
                    kept.append(value)
                continue
            if not words and token in self.commands:
                return args, []  # a command: everything after it is the command's
            words.append(token)
        return kept, words


_FORMATS = ["text", "json", "jsonl"]


def _output_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``-o/--output text|json|jsonl``, the one spelling of every command's machine output."""
    return click.option(
        "-o",
        "--output",
        type=click.Choice(_FORMATS),
        default="text",
        show_default=True,
        help=f"Output format: text, json (one document) or jsonl (one record a line) {what}.",
    )


def _json_alias(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--json``: the old spelling of ``-o json``, hidden, still working, deprecated once on stderr."""
    return click.option("--json", "as_json", is_flag=True, hidden=True, help="Deprecated: -o json.")(command)


def _chosen_output(output: str, as_json: bool) -> str:
    if as_json:
        from .output import warn_deprecated

        warn_deprecated("--json", "-o json")
        return "json"
    return output


def _positive(_ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and value <= 0:
        raise click.BadParameter("must be greater than 0", param=param)
    return value


@click.group(
    cls=_PromptGroup,
    invoke_without_command=True,
    epilog=_MAIN_EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
)
@click.option(
    "--version",
    "-V",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=_show_version,
    help="Show the version and exit.",
)
@click.option("-p", "--prompt", help="Run one prompt and exit.")
@click.option("-m", "--model", help="Model to use.")
@click.option(
    "--provider",
    help="Provider to use (openai, anthropic, google, azure, xai, ollama, lmstudio, gpustack, local).",
)
@click.option("--show-tokens", is_flag=True, help="Show token usage.")
@click.option("--show-thinking", is_flag=True, help="Show the model's reasoning.")
@click.option("--no-stream", is_flag=True, help="Wait for the whole reply instead of streaming it.")
@click.option("--plan", is_flag=True, help="Planning mode: only read-only tools run.")
@click.option("--dry-run", is_flag=True, help="Like --plan, and say that nothing will be changed.")
@click.option(
    "-c", "--continue", "continue_", is_flag=True, help="Continue the latest session of this project."
)
@click.option("-r", "--resume", metavar="ID", help="Resume a session by id (or a unique start of it).")
@click.option(
    "--fork", is_flag=True, help="With -r or -c: continue in a copy, leaving the original as it was."
)
@_output_option("of a -p run")
@_store_option
@click.option("--plain", is_flag=True, help="No colours, spinners or Markdown rendering.")
@click.option(
    "--debug",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=_set_debug,
    envvar="HIVE_DEBUG",
    help="Print the traceback of an internal error and every log record (also HIVE_DEBUG=1).",
)
@_agent_options
@click.pass_context
def cli(ctx: click.Context, **options: Any) -> None:
    """hive: an agent host for any model, in your terminal.

    With no command it starts the interactive mode; with -p it answers one prompt and exits. `hive "question"`
    starts the interactive mode with that first message at a terminal, and answers it like -p elsewhere. Text
    piped in with -p is sent too, before the prompt. It works with no key at all, on the local model.

    A first word close to a command (`hive sesions list`) is refused with the command it resembles when it stands
    alone or is followed by that command's subcommand or options; use -p to send such words to the model.
    """
    from .log_output import configure_logging  # here, not at import: `hive --help` never needs logging

    configure_logging(debug=isinstance(ctx.obj, _Invocation) and ctx.obj.debug)
    if ctx.invoked_subcommand != "doctor":  # doctor reports a legacy file; `doctor --fix` migrates it
        from .legacy_settings import migrate_on_first_run

        migrate_on_first_run()
    if ctx.invoked_subcommand is not None:
        return
    from .commands.chat import chat_main

    positional = ctx.meta.get(POSITIONAL_PROMPT)
    if positional is not None and options["prompt"] is not None:
        raise click.UsageError("give the prompt once: as words or with -p, not both", ctx)
    ctx.exit(chat_main(**options, first=positional))


@cli.command(
    epilog="""\b
Examples:
  hive run "Add type hints to utils.py"
  hive run -o json -p "What changed?" > result.json
  hive run --server --session-id build-42      JSON Lines server on stdin/stdout
  hive run --server --agent opencode           serve a coding-agent CLI's turns
  hive run --http http://127.0.0.1:8000 --session-id s1   serve a host's agent endpoints over HTTP
"""
)
@click.argument("prompt_arg", metavar="[PROMPT]", required=False)
@click.option("-p", "--prompt", help="The prompt (instead of the argument).")
@click.option("-m", "--model", help="Model to use.")
@click.option("--provider", help="Provider to use.")
@_output_option("on stdout, nothing else there")
@_json_alias
@_store_option
@click.option("--server", is_flag=True, help="Serve the turn-stream protocol as JSON Lines on stdin/stdout.")
@click.option(
    "--http",
    "http_url",
    metavar="URL",
    help="Serve the turn-stream protocol to the host at URL (its /api/agent/ID/ready, inbox and events "
    "endpoints; needs --session-id; HIVE_SERVE_TOKEN is sent as the bearer token).",
)
@click.option(
    "--session-id",
    envvar="HIVE_SESSION_ID",
    show_envvar=True,
    help="Session id (server mode): resumes that session's history and pending approvals.",
)
@click.option("--max-iterations", type=int, callback=_positive, help="Tool rounds allowed per turn.")
@click.option(
    "--max-output-tokens", type=int, callback=_positive, help="Cap on output tokens per model round."
)
@click.option(
    "--reasoning-effort", type=click.Choice(_EFFORTS), help="Reasoning effort for reasoning models."
)
@click.option("--tool-timeout", type=float, callback=_positive, help="Seconds one tool call may run.")
@click.option(
    "--timeout",
    type=float,
    callback=_positive,
    help="Seconds the whole run may take; with --server, each turn (the server runs until its input ends).",
)
@click.option("--show-tokens", is_flag=True, help="Show token usage.")
@click.option("--show-thinking", is_flag=True, help="Show the model's reasoning.")
@click.option("--plan", is_flag=True, help="Planning mode: only read-only tools run.")
@click.option(
    "--auto-commit",
    is_flag=True,
    help="After a successful run in a git repository, commit the tracked changes and the files hive wrote "
    "(never .env or secrets/).",
)
@click.option("--commit-message", help="Message for --auto-commit.")
@_agent_options
def run(**options: Any) -> None:
    """Run a single prompt and exit (or serve the protocol with --server).

    Exit codes: 0 completed, 1 error, 2 stopped short (step limit, output limit, a stuck tool loop, --timeout),
    3 content filter, 130 cancelled (Ctrl+C), 143 stopped by SIGTERM.

    SIGINT or SIGTERM cancels the running turn, which still ends with its turn_end; with --server, turns queued
    behind it are dropped and the server exits (130 or 143). A second signal exits at once. Every process hive
    started (commands, MCP servers) is stopped with it, even when hive is killed.
    """
    from .commands.run import run_main

    options["output"] = _chosen_output(options["output"], options.pop("as_json"))
    sys.exit(run_main(**options))


@cli.command(
    epilog="\b\nExamples:\n  hive acp                       hive's own loop, for Zed or any ACP client\n"
    "  hive acp --agent claude-code   Claude Code behind hive's rules"
)
@click.option("-m", "--model", help="Model of new sessions (a session's `model` option changes it).")
@click.option("--provider", help="Provider of new sessions.")
@_store_option
@_agent_options
def acp(**flags: Unpack[SessionFlags]) -> None:
    """Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim) and ACP clients.

    Each ACP session is a hive session in the client's working directory, under the project's rules: every ask
    becomes a permission request of the client. Sessions are stored as `hive run --server`'s are (load, resume,
    fork, list). The process ends when the client closes stdin.
    """
    from .commands.acp import acp_main
    from .commands.session_flags import host_options

    options = host_options(flags)
    if options is None:
        sys.exit(2)
    sys.exit(acp_main(options))


@cli.command(
    epilog="\b\nExamples:\n  hive serve                      on 127.0.0.1, a free port, a new token\n"
    "  hive serve --port 8765 --max-sessions 20\n  hive serve --agent claude-code   sessions run Claude Code by default"
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, help="Port to listen on (default: a free one)."
)
@click.option(
    "--token",
    help="The token clients must present (default: HIVE_SERVE_TOKEN, else a new random one each start).",
)
@click.option("--max-sessions", type=int, callback=_positive, help="Live sessions at most (429 past it).")
@_store_option
@click.option(
    "--engine",
    metavar="temporal://HOST:PORT[/NAMESPACE]",
    help="Run sessions on this engine's workers (`hive worker`) instead of in this server; needs a "
    "postgresql:// --store (default: serve.engine).",
)
@click.option(
    "--isolate",
    is_flag=True,
    help="Run each session's turns in a `hive run --http` process of its own, connecting back (a crash ends "
    "only its turn).",
)
@click.option("-m", "--model", help="Default model of new sessions.")
@click.option("--provider", help="Default provider of new sessions.")
@click.option(
    "--agent", metavar="NAME", help="Default backend of new sessions (`hive agents` lists the names)."
)
@click.option(
    "--model-endpoint",
    metavar="URL",
    help="Sessions of a coding-agent CLI run it offline against this OpenAI-compatible server (-m or the "
    "session's model names its model).",
)
@click.option("--agent-mode", metavar="MODE", help="Sessions of a coding-agent CLI run it in this mode.")
@click.option(
    "--allow",
    multiple=True,
    metavar="TOOL[:PATTERN]",
    help="Pre-approve calls in every session, on top of the rules (repeatable).",
)
def serve(
    host: str,
    port: int,
    token: str | None,
    max_sessions: int | None,
    engine: str | None,
    isolate: bool,
    model: str | None,
    provider: str | None,
    agent: str | None,
    model_endpoint: str | None,
    agent_mode: str | None,
    allow: tuple[str, ...],
) -> None:
    """Serve sessions over HTTP: the turn-stream protocol's client API at /api, for web pages, back ends and
    orchestrators.

    Prints one line once listening: `hive serve: http://HOST:PORT/?token=TOKEN`. Every request needs the token
    (Authorization: Bearer TOKEN); the Host header must name the bound address and a cross-origin Origin is
    refused. SIGINT or SIGTERM stops every session (running turns end with turn_end) and the server.
    """
    from .assemble import HostOptions
    from .commands.serve import serve_main

    options = HostOptions(
        model=model,
        provider=provider,
        agent=agent,
        allow=allow,
        model_endpoint=model_endpoint,
        agent_mode=agent_mode,
    )
    sys.exit(
        serve_main(
            host=host,
            port=port,
            token=token,
            max_sessions=max_sessions,
            isolate=isolate,
            options=options,
            engine=engine,
        )
    )


@cli.command()
@click.option(
    "--engine",
    required=True,
    metavar="temporal://HOST:PORT[/NAMESPACE]",
    help="The engine whose sessions this worker runs (namespace `default` when omitted).",
)
@_store_option
@click.option(
    "--max-turns",
    type=int,
    default=16,
    show_default=True,
    callback=_positive,
    help="Turns this worker runs at once at most (the engine queues the rest for any worker).",
)
def worker(engine: str, max_turns: int) -> None:
    """Run the turns of sessions that `hive serve --engine` front ends keep on an engine.

    Any number of workers, on any machines, poll the engine's task queue `hive`; a turn whose worker dies goes on
    on another from its last recorded step. Every worker needs the same --store (a postgresql:// URL) and must
    see each session's folder at the same path. Prints one line once it polls: `hive worker: ready (…)`.
    """
    from .commands.worker import worker_main

    sys.exit(worker_main(engine=engine, max_turns=max_turns))


@cli.command(
    "set",
    epilog="\b\nExamples:\n  hive set openai.apiKey        (asks for the key, hidden)\n"
    "  hive set openai.apiKey sk-...\n  hive set chatBehavior.maxOutputTokens 8192",
)
@click.argument("key")
@click.argument("value", required=False)
def set_(key: str, value: str | None) -> None:
    """Set a value in the global configuration (~/.hive/config.yaml). A secret (an API key) given without a
    value is asked for at the terminal, hidden."""
    from .commands.settings import set_main

    sys.exit(set_main(key, value))


@cli.command(epilog="\b\nExamples:\n  hive get\n  hive get openai.model\n  hive get openai.apiKey --raw")
@click.argument("key", required=False)
@click.option("--raw", is_flag=True, help="Show secrets unmasked.")
@_output_option("on stdout")
def get(key: str | None, raw: bool, output: str) -> None:
    """Show the effective value of a key and where it comes from (without a key: every key set). API keys are
    masked unless --raw."""
    from .commands.settings import get_main

    sys.exit(get_main(key, raw=raw, output=output))


@cli.command(epilog="\b\nExample:\n  hive unset openai.apiKey")
@click.argument("key")
def unset(key: str) -> None:
    """Remove a value from the global configuration."""
    from .commands.settings import unset_main

    sys.exit(unset_main(key))


@cli.command(epilog="\b\nExamples:\n  hive config\n  hive config path\n  hive config show --raw")
@click.argument("action", type=click.Choice(["show", "path"]), default="show")
@click.option("--raw", is_flag=True, help="Show secrets unmasked.")
@_output_option("on stdout")
def config(action: str, raw: bool, output: str) -> None:
    """Show the merged configuration and where each value comes from, or the config file paths."""
    from .commands.settings import config_main

    sys.exit(config_main(action, raw=raw, output=output))


@cli.command(
    epilog="\b\nExamples:\n  hive trust\n  hive trust ~/code/app\n  hive trust --list\n  hive trust --revoke"
)
@click.argument("path", required=False)
@click.option("--list", "list_all", is_flag=True, help="List the trusted (and declined) projects.")
@click.option("--revoke", is_flag=True, help="Stop trusting the project.")
def trust(path: str | None, list_all: bool, revoke: bool) -> None:
    """Trust the project at PATH (default: here): use its settings that lower protection (sandbox mode, rules
    that allow more, plugins, endpoints and keys in .hive/ and .env) until those files change."""
    from .commands.trust import trust_main

    sys.exit(trust_main(path, list_all=list_all, revoke=revoke))


def _no_short_provider(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:  # -p is the prompt everywhere else: never let it mean a provider here
        raise _OneLineUsageError("no such option -p for `hive models` — did you mean --provider?")


@cli.group(
    invoke_without_command=True,
    epilog="\b\nExamples:\n  hive models\n  hive models --provider openai -o json\n  hive models pull qwen2.5-1.5b",
)
@click.option("--provider", help="Only this provider.")
@click.option("-p", "short_provider", hidden=True, expose_value=False, callback=_no_short_provider)
@_output_option("on stdout")
@_json_alias
@click.pass_context
def models(ctx: click.Context, provider: str | None, output: str, as_json: bool) -> None:
    """List the models of the configured providers; `hive models pull` downloads a local one."""
    if ctx.invoked_subcommand == "pull":
        from .commands.model_pull import pull_epilog

        # Read from the model table only now (it imports the local adapter): before `pull --help` is parsed.
        models_pull.epilog = pull_epilog()
    if ctx.invoked_subcommand is None:
        from .commands.models import models_main

        ctx.exit(models_main(provider=provider, output=_chosen_output(output, as_json)))


@models.command("pull")
@click.argument("name", required=False)
def models_pull(name: str | None) -> None:
    """Download a local model into the Hugging Face cache: NAME is an alias, REPO[:FILE_PATTERN] or gguf:auto
    (default: lmsupply.generatorModel). Progress is shown on a terminal; HF_HOME and HF_ENDPOINT are honoured."""
    from .commands.model_pull import pull_main

    sys.exit(pull_main(name))


@cli.command(epilog="\b\nExamples:\n  hive doctor --verbose\n  hive doctor --fix")
@click.option("--verbose", is_flag=True, help="Show details of every check.")
@click.option(
    "--fix",
    is_flag=True,
    help="Repair hive's files: a missing home, modes of files holding keys, settings.json.",
)
@_store_option
@click.option(
    "--engine",
    metavar="temporal://HOST:PORT[/NAMESPACE]",
    help="Also check that this engine answers (default: serve.engine).",
)
def doctor(verbose: bool, fix: bool, engine: str | None) -> None:
    """Check the configuration, the providers and their connectivity, and the environment."""
    from .commands.doctor import doctor_main

    sys.exit(doctor_main(verbose=verbose, fix=fix, engine=engine))


@cli.command(epilog="\b\nExamples:\n  hive agents\n  hive agents -o json --verbose")
@_output_option("on stdout")
@click.option(
    "--verbose", is_flag=True, help="Also the program, protocol, arguments, and the warm-session pool."
)
def agents(output: str, verbose: bool) -> None:
    """List the agent backends: hive's own loop and every coding-agent CLI, installed or not."""
    from .commands.agents import agents_main

    sys.exit(agents_main(output=output, verbose=verbose))


@cli.command(epilog="\b\nExamples:\n  hive update --check\n  hive update\n  hive update --force")
@click.option(
    "--check", is_flag=True, help="Only check; exit 2 when a newer version exists, 1 when the check fails."
)
@click.option("--pre", is_flag=True, help="Consider pre-releases too.")
@click.option("--force", is_flag=True, help="Reinstall, even when up to date.")
@click.option("--dry-run", is_flag=True, help="Say the upgrade command instead of running it.")
def update(check: bool, pre: bool, force: bool, dry_run: bool) -> None:
    """Check the package index for a newer hive and upgrade it the way it was installed (pipx, uv or pip)."""
    from .commands.update import update_main

    sys.exit(update_main(check=check, pre=pre, force=force, dry_run=dry_run))


@cli.group(
    invoke_without_command=True,
    epilog="\b\nExamples:\n  hive sessions\n  hive sessions list -n 20 -o json\n  hive sessions list --all\n"
    "  hive sessions show 18f3a2c4\n  hive sessions delete 18f3a2c4d5e-1a2b3c4d",
)
@click.option("-n", "--limit", type=int, default=10, show_default=True, help="How many sessions to list.")
@_output_option("on stdout")
@click.option(
    "--all", "everything", is_flag=True, help="Also list empty sessions and those that failed at start."
)
@_store_option
@click.pass_context
def sessions(ctx: click.Context, limit: int, output: str, everything: bool) -> None:
    """List and manage the sessions of this project."""
    if ctx.invoked_subcommand is None:
        from .commands.sessions import list_main

        ctx.exit(list_main(limit=limit, output=output, everything=everything))


@sessions.command("list")
@click.option("-n", "--limit", type=int, default=10, show_default=True, help="How many sessions to list.")
@_output_option("on stdout")
@click.option(
    "--all", "everything", is_flag=True, help="Also list empty sessions and those that failed at start."
)
@_store_option
def sessions_list(limit: int, output: str, everything: bool) -> None:
    """List sessions, newest first (dead: its process is gone)."""
    from .commands.sessions import list_main

    sys.exit(list_main(limit=limit, output=output, everything=everything))


@sessions.command("show")
@click.argument("session_id")
@_output_option("on stdout")
@_store_option
def sessions_show(session_id: str, output: str) -> None:
    """Print a session's transcript (ID: the id, or a unique start of it)."""
    from .commands.sessions import show_main

    sys.exit(show_main(session_id, output=output))


@sessions.command("delete")
@click.argument("session_id", required=False)
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", help="Output format.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@_store_option
def sessions_delete(session_id: str | None, output: str, yes: bool) -> None:
    """Delete a session."""
    from .commands.sessions import delete_main

    sys.exit(delete_main(session_id, as_json=output == "json", yes=yes))


@cli.command(
    epilog="\b\nExamples:\n  hive logs\n  hive logs 18f3a2c4 -o json\n  hive logs --follow",
)
@click.argument("session_id", metavar="[SESSION]", required=False)
@click.option(
    "-o",
    "--output",
    type=click.Choice(_FORMATS),
    default="text",
    show_default=True,
    help="Output format: text, or json / jsonl (both: one JSON record a line).",
)
@click.option("-f", "--follow", is_flag=True, help="Keep printing records as they are written, until Ctrl+C.")
@_store_option
def logs(session_id: str | None, output: str, follow: bool) -> None:
    """Show a session's execution log: turns, model requests (size, duration, tokens), tool calls, fallbacks and
    compactions (SESSION: an id or a unique start of one; the project's most recent session by default)."""
    from .commands.logs import logs_main

    sys.exit(logs_main(session_id, output=output, follow=follow))


def run_cli(args: list[str]) -> int:
    """Run the command line with ``args``; return the exit code.

    A user error that escapes a command prints as one line and exits 1; any other exception is a bug, reported
    as such (exit 70), with its traceback under ``--debug``.
    """
    invocation = _Invocation()
    try:
        # Without standalone mode, click returns the code of a ``ctx.exit(code)`` instead of raising it.
        result = cli.main(args=args, prog_name="hive", standalone_mode=False, obj=invocation)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as error:
        error.show()
        return 2 if isinstance(error, click.UsageError) else 1
    except click.Abort:
        sys.stderr.write("\n")
        return 130
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except Exception as error:
        from .errors import report_failure  # imports hive_core, which --help and --version never need

        return report_failure(error, sys.stderr, debug=invocation.debug)
    return result if isinstance(result, int) else 0
