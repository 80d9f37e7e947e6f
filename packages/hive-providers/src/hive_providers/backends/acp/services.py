"""What hive serves an ACP agent during a turn: permission answers, files, terminals and questions.

Everything the agent asks for is judged as hive judges its own tools: a permission request as the hive tool its
``kind`` names (``execute`` as ``execute_command``, ``edit`` as ``edit_file``...), ``fs/write_text_file`` as
``write_file``, ``fs/read_text_file`` by the read rules, ``terminal/create`` as ``execute_command``. The policy
decides first; its ``ask`` verdicts go to the approval service, whose ``hitl_request`` names the hive call id of
the tool the request belongs to (a call of hive's own is started when none is running); what the human approved
for a running call is not asked about again when the agent carries it out through hive. Terminals run through
hive's command sandbox (as ``execute_command`` does), each in a process group of its own, their output going to a
private file of which ``terminal/output`` returns the last ``outputByteLimit`` bytes.

Handlers take the raw ``params`` dict of the request and return the raw result dict, or raise
:class:`acp.RequestError`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final, Literal

import anyio
import anyio.to_thread
from acp import RequestError

from hive_core.approvals import (
    ApprovalRequest,
    ApprovalService,
    PathJudge,
    ToolCallPolicy,
    Verdict,
)
from hive_core.child_processes import SupervisedProcess, open_child
from hive_core.questions import QuestionService
from hive_core.sandbox import SandboxSettings, SandboxUnavailable, launch_command
from hive_core.tools import EventSink
from hive_protocol import Question, QuestionOption, QuestionRequestEvent, RefusalKind
from hive_providers.backends.kit.json_values import as_list, as_mapping
from hive_providers.backends.kit.judging import judge_call, verdict_of, working_directory
from hive_providers.backends.kit.tool_calls import TOOL_NAMES, ToolCallTracker, TrackedCall, text_of

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "REFUSED",
    "AcpClientServices",
    "Option",
    "is_question",
    "permission_arguments",
]

REFUSED: Final = -32001
"""The JSON-RPC error code of a file or terminal request that hive's rules or the human refused."""

DEFAULT_OUTPUT_LIMIT: Final = 1_048_576
"""Bytes of a terminal's output kept when the agent sets no ``outputByteLimit``."""

_PATH_KEYS: Final = ("path", "file_path", "filePath", "absolute_path", "filename", "file", "target_file")
_CONTENT_KEYS: Final = ("content", "new_string", "newText", "new_text", "text")
_SOURCE_KEYS: Final = ("source", "from", "old_path", "oldPath", "source_path")
_DESTINATION_KEYS: Final = ("destination", "to", "new_path", "newPath", "destination_path", "target")
_COMMAND_KEYS: Final = ("command", "cmd", "commandLine", "command_line")
_QUESTION_OPTION: Final = re.compile(r"^q\d+:")
_CANCELLED_OUTCOME: Final[dict[str, Any]] = {"outcome": {"outcome": "cancelled"}}

PermissionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


@dataclass(frozen=True)
class Option:
    """One option of a permission request."""

    option_id: str
    """The agent's id for it: what the answer quotes."""
    name: str
    """Its label."""
    kind: str | None
    """Its ``PermissionOptionKind`` (``allow_once``, ``allow_always``, ``reject_once``, ``reject_always``)."""


@dataclass
class _Terminal:
    process: SupervisedProcess
    output: Path
    """The file its stdout and stderr go to: nothing needs to read a pipe while the agent is not asking."""
    limit: int
    release: Callable[[], None] = lambda: None
    """Removes the sandbox's empty mount points once the command has ended."""


class AcpClientServices:
    """Answers the agent's requests to the client for one turn.

    ``policy`` judges first (``None``: every request is asked about); ``approvals`` answers the ``ask`` verdicts
    (``None``: they are refused); ``questions`` answers questions that arrive as permission requests (``None``:
    they are declined); ``sandbox`` confines terminal commands (``None``: the default settings, ``auto``).
    """

    def __init__(
        self,
        *,
        emit: EventSink,
        tracker: ToolCallTracker,
        cwd: Path,
        policy: ToolCallPolicy | None,
        approvals: ApprovalService | None,
        questions: QuestionService | None,
        sandbox: SandboxSettings | None,
        session_id_of_hive_call: Callable[[str], str | None] | None = None,
    ) -> None:
        self._emit = emit
        self._tracker = tracker
        self._cwd = Path(os.path.abspath(cwd))
        self._policy = policy
        self._approvals = approvals
        self._questions = questions
        self._sandbox = sandbox if sandbox is not None else SandboxSettings()
        self.session_id_of_hive_call = session_id_of_hive_call
        """Kept for the backend: maps a hive call id to the agent session it belongs to."""
        self._terminals: dict[str, _Terminal] = {}
        self._granted: list[tuple[str, str, str]] = []
        self._scratch: Path | None = None
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {
            "session/request_permission": self.request_permission,
            "fs/read_text_file": self.read_text_file,
            "fs/write_text_file": self.write_text_file,
            "terminal/create": self.create_terminal,
            "terminal/output": self.terminal_output,
            "terminal/wait_for_exit": self.wait_for_terminal_exit,
            "terminal/kill": self.kill_terminal,
            "terminal/release": self.release_terminal,
        }

    async def handle(self, method: str, params: object) -> dict[str, Any]:
        """Serve the agent->client request ``method``; an unknown one raises ``RequestError.method_not_found``."""
        handler = self._handlers.get(method)
        if handler is None:
            raise RequestError.method_not_found(method)
        fields: dict[str, Any] = dict(params) if isinstance(params, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]
        return await handler(fields)

    # -- permissions --------------------------------------------------------------------------------------------

    async def request_permission(self, params: dict[str, Any]) -> dict[str, Any]:
        """``session/request_permission``: the engine's verdict, else the human's, as one of the offered options
        chosen by kind; a Reasonix question becomes a ``question_request``."""
        tool_call = as_mapping(params.get("toolCall"))
        options = _options(params.get("options"))
        if is_question(tool_call, options):
            return await self._question(tool_call, options)
        call_id = self._tracker.correlate(tool_call)
        call = self._tracker.get(call_id)
        assert call is not None
        tool, arguments = permission_arguments(call, tool_call)
        judged = await judge_call(
            call_id,
            tool,
            arguments,
            policy=self._policy,
            approvals=self._approvals,
            tracker=self._tracker,
            cwd=working_directory(_raw_input(call, tool_call)),
            project=self._cwd,
        )
        if not judged.runs:
            return _select(options, ("reject_once",))
        if judged.decision is None:  # the rules allowed it
            return _select(options, ("allow_once", "allow_always"))
        self._grant(call_id, tool, arguments)
        if judged.decision.always_approve:
            return _select(options, ("allow_always", "allow_once"))
        return _select(options, ("allow_once", "allow_always"))

    async def _question(self, tool_call: Mapping[str, Any], options: list[Option]) -> dict[str, Any]:
        request_id = text_of(tool_call.get("toolCallId")) or f"ask-{uuid.uuid4().hex[:12]}"
        raw = _asked(as_mapping(tool_call.get("rawInput")), options)
        text = (
            text_of(raw.get("question")) or text_of(tool_call.get("title")) or "The agent asks you a question"
        )
        offered = [option for option in options if not option.option_id.endswith(":cancel")]
        choices = _choices(offered, raw.get("options"))
        question = Question(
            question=text,
            # Reasonix sends the header as the request's text content.
            header=text_of(raw.get("header")) or _content_text(tool_call.get("content")),
            multi_select=False,
            options=[
                QuestionOption(label=label, description=description) for _, label, description in choices
            ],
            allow_free_text=False,
        )
        answers = None
        if self._questions is not None:
            answers = await self._questions.ask(
                QuestionRequestEvent(id=request_id, call_id=self._asking_call(), questions=[question])
            )
        chosen = answers.get(text) if answers is not None else None
        if chosen is not None and len(chosen) == 1:
            # The label offered, or the agent's own name for the option ("Postgres - the big one").
            match = next((option for option, label, _ in choices if label == chosen[0]), None) or next(
                (option for option in offered if option.name == chosen[0]), None
            )
            if match is not None:
                return _selected(match.option_id)
        cancel = next((option for option in options if option.option_id.endswith(":cancel")), None)
        return _selected(cancel.option_id) if cancel is not None else _CANCELLED_OUTCOME

    def _asking_call(self) -> str | None:
        """The running call of Reasonix's ``ask`` tool, which a question names; its own id differs."""
        for call in reversed(self._tracker.calls):
            if call.running and call.tool in ("ask", "ask_user"):
                return call.call_id
        return None

    # -- files --------------------------------------------------------------------------------------------------

    async def read_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        """``fs/read_text_file``: the file's text from ``line`` (1-based) for ``limit`` lines, after the read
        rules (and the human, when they ask) allowed it."""
        path = self._path(params)
        line = _positive(params.get("line"))
        limit = _positive(params.get("limit"))
        arguments: dict[str, Any] = {"path": str(path)}
        if isinstance(self._policy, PathJudge):
            verdict = self._policy.judge_path("read", str(path))
        else:
            verdict = self._verdict("read_file", arguments)
        await self._authorise("read_file", arguments, verdict, f"reading {path}")
        try:
            text = await anyio.Path(path).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise RequestError(-32002, f"no file at {path}", {"path": str(path)}) from None
        except OSError as error:
            raise RequestError(
                -32603, f"cannot read {path}: {error.strerror or error}", {"path": str(path)}
            ) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = (line or 1) - 1
            text = "".join(lines[start : start + limit if limit is not None else None])
        return {"content": text}

    async def write_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        """``fs/write_text_file``: judged exactly as hive's own ``write_file``; creates parent directories."""
        path = self._path(params)
        content = params.get("content")
        if not isinstance(content, str):
            raise RequestError.invalid_params({"content": "must be text"})
        arguments: dict[str, Any] = {"path": str(path), "content": content}
        verdict = self._verdict("write_file", arguments)
        await self._authorise("write_file", arguments, verdict, f"writing {path}")
        try:
            await anyio.Path(path).parent.mkdir(parents=True, exist_ok=True)
            await anyio.Path(path).write_text(content, encoding="utf-8")
        except OSError as error:
            raise RequestError(
                -32603, f"cannot write {path}: {error.strerror or error}", {"path": str(path)}
            ) from None
        return {}

    def _path(self, params: Mapping[str, Any]) -> Path:
        path = text_of(params.get("path"))
        if path is None:
            raise RequestError.invalid_params({"path": "must be a file path"})
        return self._resolve(path)

    def _resolve(self, path: str) -> Path:
        """``path`` made absolute from the working directory, ``.`` and ``..`` folded (links are the rules')."""
        return Path(os.path.normpath(self._cwd / path))

    # -- terminals ----------------------------------------------------------------------------------------------

    async def create_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/create``: the command, judged as ``execute_command``, started in hive's sandbox."""
        command = text_of(params.get("command"))
        if command is None:
            raise RequestError.invalid_params({"command": "must be a command"})
        args = [arg for arg in as_list(params.get("args")) if isinstance(arg, str)]
        cwd = self._resolve(text_of(params.get("cwd")) or ".")
        line = shlex.join([command, *args]) if args else command
        judged = line if cwd == self._cwd else f"cd {shlex.quote(str(cwd))} && {line}"
        arguments: dict[str, Any] = {"command": judged}
        verdict = verdict_of(
            self._policy, "execute_command", {"command": line}, cwd=str(cwd), project=self._cwd
        )
        await self._authorise("execute_command", arguments, verdict, judged)
        argv = [command, *args] if args else [shutil.which("bash") or "/bin/sh", "-c", command]
        if cwd != self._cwd:
            # The sandbox starts in the project; the agent's directory is entered inside it.
            argv = ["/bin/sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", str(cwd), *argv]
        try:
            launch = await anyio.to_thread.run_sync(
                partial(launch_command, argv, working_dir=self._cwd, settings=self._sandbox)
            )
        except SandboxUnavailable as error:
            raise RequestError(REFUSED, str(error), {"command": line}) from None
        env = dict(launch.env)
        for entry in as_list(params.get("env")):
            fields = as_mapping(entry)
            name, value = fields.get("name"), fields.get("value")
            if (
                isinstance(name, str)
                and name
                and isinstance(value, str)
                and name not in self._sandbox.withheld_variables
            ):
                env[name] = value
        terminal_id = f"term-{uuid.uuid4().hex[:12]}"
        output = self._scratch_dir() / f"{terminal_id}.out"
        limit = _positive(params.get("outputByteLimit")) or DEFAULT_OUTPUT_LIMIT
        with output.open("wb") as sink:
            try:
                process = await open_child(
                    launch.argv,
                    cwd=self._cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    # Unconfined, a subreaper keeps what the command daemonises in reach (see open_child).
                    reap_orphans=launch.argv == argv,
                )
            except OSError as error:
                output.unlink(missing_ok=True)
                launch.release()
                raise RequestError(-32603, f"cannot start {command}: {error.strerror or error}") from None
        self._terminals[terminal_id] = _Terminal(
            process=process, output=output, limit=limit, release=launch.release
        )
        return {"terminalId": terminal_id}

    async def terminal_output(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/output``: what the command printed so far (its last ``outputByteLimit`` bytes)."""
        terminal = self._terminal(params)
        text, truncated = await anyio.to_thread.run_sync(_read_tail, terminal.output, terminal.limit)
        result: dict[str, Any] = {"output": text, "truncated": truncated}
        if terminal.process.returncode is not None:
            result["exitStatus"] = _exit_status(terminal.process.returncode)
        return result

    async def wait_for_terminal_exit(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/wait_for_exit``: the exit code, or the signal that ended it."""
        terminal = self._terminal(params)
        return _exit_status(await terminal.process.wait())

    async def kill_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/kill``: kill the command and everything it started; its output stays readable."""
        terminal = self._terminal(params)
        # Also after the command exited: what it left running in the background dies with it.
        terminal.process.kill_tree()
        return {}

    async def release_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        """``terminal/release``: kill what still runs and forget the terminal."""
        terminal_id = text_of(params.get("terminalId")) or ""
        terminal = self._terminal(params)
        del self._terminals[terminal_id]
        await _close(terminal)
        return {}

    async def aclose(self) -> None:
        """Kill every terminal still open and remove their output files."""
        terminals = list(self._terminals.values())
        self._terminals.clear()
        with anyio.CancelScope(shield=True):
            for terminal in terminals:
                await _close(terminal)
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None

    def _terminal(self, params: Mapping[str, Any]) -> _Terminal:
        terminal_id = text_of(params.get("terminalId"))
        terminal = self._terminals.get(terminal_id or "")
        if terminal is None:
            raise RequestError.invalid_params({"terminalId": f"no terminal {terminal_id!r}"})
        return terminal

    def _scratch_dir(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="hive-acp-terminals-"))
        return self._scratch

    # -- judging ------------------------------------------------------------------------------------------------

    def _verdict(self, tool: str, arguments: Mapping[str, Any]) -> Verdict:
        return verdict_of(self._policy, tool, arguments)

    async def _authorise(self, tool: str, arguments: dict[str, Any], verdict: Verdict, what: str) -> None:
        """Raise the refusal ``RequestError`` unless ``verdict`` allows or the human approves (inside the running
        call, or a call of hive's own started for the request)."""
        if verdict.action == "allow":
            return
        if verdict.action == "deny":
            raise _refused(what, verdict.reason)
        if self._granted_already(tool, arguments):
            return
        if self._approvals is None:
            raise _refused(what, f"{verdict.reason}; no one can approve it")
        running = self._tracker.latest_running()
        local = running is None
        call_id = self._tracker.start_local(tool, arguments) if running is None else running.call_id
        decision = await self._approvals.request(
            ApprovalRequest(
                call_id=call_id,
                tool_name=tool,
                arguments=arguments,
                reason=verdict.reason,
                level=verdict.level,
            )
        )
        if local:
            refusal: RefusalKind | None = None if decision.approved else "rejected"
            if refusal is not None:
                self._tracker.refuse(call_id, refusal)
            self._tracker.end(
                call_id,
                success=decision.approved,
                output="approved" if decision.approved else decision.reason,
            )
        if not decision.approved:
            raise _refused(what, decision.reason or "the user rejected it")

    def _grant(self, call_id: str, tool: str, arguments: Mapping[str, Any]) -> None:
        """Remember what the human approved for call ``call_id``, so the agent carrying it out through hive's
        files or terminals is not asked about a second time."""
        target = self._target(tool, arguments)
        if target is not None:
            self._granted.append((call_id, *target))

    def _granted_already(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        """Whether the human approved exactly this file change (or read), or this command, for a call still
        running."""
        target = self._target(tool, arguments)
        if target is None:
            return False
        category, what = target
        for call_id, granted, approved in self._granted:
            call = self._tracker.get(call_id)
            if call is None or not call.running or approved != what:
                continue
            if granted == category or (granted == "edit" and category == "read"):
                return True
        return False

    def _target(self, tool: str, arguments: Mapping[str, Any]) -> tuple[str, str] | None:
        if tool == "execute_command":
            command = text_of(arguments.get("command"))
            return None if command is None else ("command", command.strip())
        category = {"read_file": "read", "write_file": "edit", "edit_file": "edit"}.get(tool)
        path = text_of(arguments.get("path"))
        return None if category is None or path is None else (category, str(self._resolve(path)))


def is_question(tool_call: Mapping[str, Any], options: list[Option]) -> bool:
    """Whether a permission request is a Reasonix question: options ``qN:<i>`` (plus ``qN:cancel``) under a
    tool call id starting ``ask-``, or with a ``qN:cancel`` option."""
    if not options or not all(_QUESTION_OPTION.match(option.option_id) for option in options):
        return False
    if all(option.option_id.endswith(":cancel") for option in options):
        return False
    call_id = text_of(tool_call.get("toolCallId")) or ""
    return call_id.startswith("ask-") or any(option.option_id.endswith(":cancel") for option in options)


def _asked(raw: dict[str, Any], options: list[Option]) -> dict[str, Any]:
    """The question's own fields: ``raw`` itself, or its entry in the ask call's ``questions`` list (the N of the
    ``qN:`` option ids, 1-based)."""
    questions = as_list(raw.get("questions"))
    if not questions:
        return raw
    number = int(options[0].option_id[1:].split(":", 1)[0])
    return as_mapping(questions[number - 1]) if 0 < number <= len(questions) else {}


def permission_arguments(call: TrackedCall, tool_call: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The hive tool and arguments a permission request is judged as, from its call and its ``toolCall``.

    The tool follows the latest ``kind`` (the request's, else the call's), so a call announced as ``other`` and
    re-announced as ``execute`` is judged as a command; a call of no known kind whose input has a command is
    judged as one too. The input is the request's ``rawInput``, else the call's, else what it streamed as text.
    """
    raw = _raw_input(call, tool_call)
    title = text_of(tool_call.get("title")) or call.title
    kind = text_of(tool_call.get("kind")) or call.kind
    tool = TOOL_NAMES.get(kind or "") or ("execute_command" if _command(raw) else call.tool)
    match tool:
        case "execute_command":
            return tool, {"command": _command(raw) or title or ""}
        case "edit_file" | "read_file" | "delete_file":
            arguments: dict[str, Any] = {}
            path = _first_text(raw, _PATH_KEYS) or _location(tool_call) or _location_of(call)
            if path is not None:
                arguments["path"] = path
            content = _first_text(raw, _CONTENT_KEYS)
            if tool == "edit_file" and content is not None:
                arguments["content"] = content
            return tool, arguments
        case "move_file":
            moved: dict[str, Any] = {}
            source = _first_text(raw, _SOURCE_KEYS) or _first_text(raw, _PATH_KEYS)
            destination = _first_text(raw, _DESTINATION_KEYS)
            if source is not None:
                moved["source"] = source
            if destination is not None:
                moved["destination"] = destination
            return tool, moved
        case _:
            return tool, raw


def _raw_input(call: TrackedCall, tool_call: Mapping[str, Any]) -> dict[str, Any]:
    """The input a permission request is judged by: its ``rawInput``, else the call's, else what it streamed."""
    return (
        as_mapping(tool_call.get("rawInput"))
        or as_mapping(call.raw_input)
        or (dict(call.content_input) if call.content_input else {})
    )


def _command(raw: Mapping[str, Any]) -> str | None:
    for key in _COMMAND_KEYS:
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(part, str) for part in value):  # pyright: ignore[reportUnknownVariableType]
            parts: list[str] = value  # pyright: ignore[reportUnknownVariableType]
            # ["bash", "-lc", "<line>"] (Codex-style): the line is what runs.
            if len(parts) == 3 and parts[1] in ("-c", "-lc"):
                return parts[2]
            return shlex.join(parts)
    return None


def _location(tool_call: Mapping[str, Any]) -> str | None:
    for entry in as_list(tool_call.get("locations")):
        path = text_of(as_mapping(entry).get("path"))
        if path is not None:
            return path
    return None


def _location_of(call: TrackedCall) -> str | None:
    for entry in call.locations:
        path = text_of(as_mapping(entry).get("path"))
        if path is not None:
            return path
    return None


def _options(value: object) -> list[Option]:
    options: list[Option] = []
    for entry in as_list(value):
        fields = as_mapping(entry)
        option_id = fields.get("optionId")
        if isinstance(option_id, str) and option_id:
            kind = fields.get("kind")
            name = fields.get("name")
            options.append(
                Option(
                    option_id=option_id,
                    name=name if isinstance(name, str) else option_id,
                    kind=kind if isinstance(kind, str) else None,
                )
            )
    return options


def _choices(offered: list[Option], described: object) -> list[tuple[Option, str, str | None]]:
    """Each offered option with its label and description: from the question's own ``options`` entry (the ``i`` of
    ``qN:i``, 1-based; Reasonix spells the keys ``Label`` and ``Description``), else the option's name."""
    entries = [as_mapping(entry) for entry in as_list(described)]
    choices: list[tuple[Option, str, str | None]] = []
    for option in offered:
        index = option.option_id.rsplit(":", 1)[-1]
        entry = entries[int(index) - 1] if index.isdigit() and 0 < int(index) <= len(entries) else {}
        label = text_of(entry.get("label")) or text_of(entry.get("Label"))
        description = text_of(entry.get("description")) or text_of(entry.get("Description"))
        choices.append((option, label or option.name, description if label else None))
    return choices


def _content_text(content: object) -> str | None:
    for entry in as_list(content):
        block = as_mapping(as_mapping(entry).get("content"))
        if block.get("type") == "text":
            text = text_of(block.get("text"))
            if text is not None:
                return text
    return None


def _select(options: list[Option], kinds: tuple[PermissionKind, ...]) -> dict[str, Any]:
    """The first option of the first of ``kinds`` offered (an allow falls back to the other allow kind), else the
    ``cancelled`` outcome: never an option picked by position or id, nor one of a kind hive does not know."""
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return _selected(option.option_id)
    return _CANCELLED_OUTCOME


def _selected(option_id: str) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


def _refused(what: str, reason: str) -> RequestError:
    return RequestError(REFUSED, f"Permission denied: {what}: {reason}", {"reason": reason})


def _read_tail(path: Path, limit: int) -> tuple[str, bool]:
    """The last ``limit`` bytes of ``path`` as text, cut at a character boundary, and whether bytes were cut."""
    try:
        with path.open("rb") as source:
            size = source.seek(0, os.SEEK_END)
            start = max(0, size - limit)
            source.seek(start)
            data = source.read(size - start)
    except FileNotFoundError:
        return "", False
    cut = 0
    if start > 0:
        # Skip the continuation bytes of a character the cut split.
        while cut < len(data) and cut < 4 and data[cut] & 0xC0 == 0x80:
            cut += 1
    return data[cut:].decode("utf-8", errors="replace"), start > 0


def _exit_status(returncode: int) -> dict[str, Any]:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return {"exitCode": None, "signal": name}
    return {"exitCode": returncode, "signal": None}


async def _close(terminal: _Terminal) -> None:
    terminal.process.kill_tree()
    with anyio.CancelScope(shield=True):
        await terminal.process.aclose()
    terminal.release()
    with contextlib.suppress(OSError):
        terminal.output.unlink()


def _positive(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value


def _first_text(fields: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        text = text_of(fields.get(key))
        if text is not None:
            return text
    return None
