"""One running ACP agent: its process, its JSON-RPC connection, its session, and how a turn is cancelled.

JSON-RPC ids, requests and errors are :class:`acp.connection.Connection`'s (message form, over
:class:`~.transport.ProcessTransport`); it echoes the agent's int or string request ids verbatim and reads
messages without ``"jsonrpc"`` or with extra fields. ``session/update`` notifications never reach it: acp runs a
task per notification, which does not promise their order, so the transport hands each one to the running
turn's :class:`~.updates.TurnMapper` synchronously, in arrival order; with no turn running (a ``session/load``
replay, or anything after the prompt's result) they are dropped. Agent requests go to the turn's
:class:`~.services.AcpClientServices`.

The process runs in a process group of its own (:func:`~hive_core.child_processes.open_child`). Its end (or the
end of its stdout) fails every pending request at once; a turn never waits on a dead agent. Cancelling a turn
sends ``session/cancel``, answers pending permission requests ``cancelled`` and waits ``cancel_grace`` seconds
for the prompt's result; then SIGINT to the group, then SIGKILL to the group and every process carrying the
child's mark, and the connection is faulted.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version
from typing import Any
from typing import Final

import anyio
from acp.connection import Connection
from acp.exceptions import RequestError
from acp.task import TaskSupervisor

from hive_core.child_processes import SupervisedProcess
from hive_core.failures import ChatError
from hive_protocol import ErrorCode
from hive_providers.backends.kit.cli_process import CliProcess
from hive_providers.backends.kit.errors import AgentProcessError
from hive_providers.backends.kit.errors import BackendNotInstalled
from hive_providers.backends.kit.errors import BackendUnavailable
from hive_providers.backends.kit.handshake import handshake
from hive_providers.backends.kit.json_values import as_array
from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.kit.transport import ProcessTransport
from hive_providers.backends.probe import find_executable

from .services import AcpClientServices
from .update_types import decode_update
from .updates import TurnMapper

__all__ = ["PROTOCOL_VERSION", "AcpConnection", "launch_command"]

PROTOCOL_VERSION: Final = 1
"""The ACP version hive speaks (an agent answering 2 is spoken to in the v1 subset)."""
CANCELLED_OUTCOME: Final[dict[str, Any]] = {"outcome": {"outcome": "cancelled"}}
"""The answer to a permission request nobody will decide any more."""
_EXIT_WAIT: Final = 2.0
_STDIN_EXIT_WAIT: Final = 0.5
_log = logging.getLogger(__name__)


def launch_command(spec: LaunchSpec, options: BackendOptions) -> list[str]:
    """The command line that starts ``spec``'s protocol server; raises :class:`BackendNotInstalled`."""
    executable = options.executable
    if executable is None:
        executable = find_executable(spec, options)
    if executable is None:
        raise BackendNotInstalled(spec.name, spec.executables, spec.install_hint)
    arguments = list(options.arguments if options.arguments is not None else spec.arguments)
    if spec.model_passing == "argument" and spec.model_argument and options.model:
        arguments += [spec.model_argument, options.model]
    return [executable, *arguments]


class AcpConnection:
    """A running ACP agent and its session; what the pool keeps warm between turns."""

    def __init__(self) -> None:
        self.spec: LaunchSpec | None = None
        """The CLI's launch spec, once started."""
        self.cli: CliProcess | None = None
        """The CLI's process and how it ends, once started."""
        self.process: SupervisedProcess | None = None
        """The CLI's process, once started."""
        self.transport: ProcessTransport | None = None
        """The stdio transport, once started."""
        self.protocol_version: int | None = None
        """The protocol version the agent answered ``initialize`` with."""
        self.agent_info: dict[str, Any] = {}
        """The agent's ``agentInfo`` (name, version)."""
        self.capabilities: dict[str, Any] = {}
        """The agent's ``agentCapabilities``."""
        self.auth_methods: list[Any] = []
        """The agent's ``authMethods``."""
        self.session_id: str | None = None
        """The agent's session id once a session is open."""
        self.session: dict[str, Any] = {}
        """The result of the ``session/new`` (or ``load``/``resume``) that opened it: its modes and models."""
        self.notes: list[str] = []
        """What could not be done as asked (a resume the agent does not offer, a mode it lacks)."""
        self.cancel_result: dict[str, Any] | None = None
        """The prompt result of the last cancelled turn, when the agent answered within the grace period."""
        self._options: BackendOptions | None = None
        self._rpc: Connection | None = None
        self._tasks: TaskSupervisor | None = None
        self._mapper: TurnMapper | None = None
        self._services: AcpClientServices | None = None
        self._prompt_id: object = None
        self._permission_scopes: set[anyio.CancelScope] = set()
        self._cancelling = False
        self._faulted = False
        self._closed = False
        self._startup_timeout = 60.0

    # -- state ----------------------------------------------------------------------------------------------

    @property
    def faulted(self) -> bool:
        """Whether the agent died, closed its output, was killed, or broke the protocol: not to be reused."""
        if self._faulted or self._closed:
            return True
        if self.process is not None and self.process.returncode is not None:
            return True
        return self.transport is not None and self.transport.at_eof

    @property
    def pid(self) -> int | None:
        """The agent's process id (also its process group's)."""
        return None if self.process is None else self.process.pid

    @property
    def name(self) -> str:
        """The backend's canonical name."""
        return "agent" if self.spec is None else self.spec.name

    # -- start ----------------------------------------------------------------------------------------------

    async def start(self, spec: LaunchSpec, options: BackendOptions, env: Mapping[str, str]) -> None:
        """Start the CLI and ``initialize`` it within its startup timeout; :class:`BackendStartError` if not."""
        self.spec, self._options = spec, options
        command = launch_command(spec, options)
        timeout = options.startup_timeout if options.startup_timeout is not None else spec.startup_timeout
        self._startup_timeout = timeout
        cli = self.cli = await CliProcess.start(
            spec.name,
            command,
            cwd=options.cwd,
            env=env,
            transport=lambda process: ProcessTransport(
                process, incoming=self._incoming, outgoing=self._outgoing
            ),
        )
        self.process, self.transport = cli.process, cli.transport
        try:
            self._tasks = TaskSupervisor(source="hive.acp")
            self._tasks.create(self.transport.drain_stderr(), name="hive.acp.stderr")
            self._tasks.create(self._watch_exit(), name="hive.acp.exit")
            self._rpc = Connection(self._handle, self.transport)
            async with handshake(cli, timeout, ended=AgentProcessError, rejected=RequestError):
                await self._initialize(spec, options)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.aclose(0.0)
            raise

    async def _initialize(self, spec: LaunchSpec, options: BackendOptions) -> None:
        result = as_mapping(
            await self._request(
                "initialize",
                {
                    "protocolVersion": PROTOCOL_VERSION,
                    "clientCapabilities": {
                        "fs": {"readTextFile": spec.serve_files, "writeTextFile": spec.serve_files},
                        "terminal": spec.serve_terminals,
                    },
                    "clientInfo": {"name": "hive", "title": "hive", "version": _hive_version()},
                },
                during="initialize",
            )
        )
        answered = result.get("protocolVersion")
        self.protocol_version = answered if isinstance(answered, int) else None
        self.capabilities = as_mapping(result.get("agentCapabilities"))
        self.agent_info = as_mapping(result.get("agentInfo"))
        self.auth_methods = as_list(result.get("authMethods"))
        if spec.auth_method and options.endpoint is not None:
            await self._request("authenticate", {"methodId": spec.auth_method}, during="authenticate")

    # -- session ----------------------------------------------------------------------------------------------

    @property
    def can_fork(self) -> bool:
        """Whether the agent advertises ``sessionCapabilities.fork`` (the unstable ``session/fork``)."""
        return as_mapping(self.capabilities.get("sessionCapabilities")).get("fork") is not None

    async def open_session(self, resume: str | None = None, *, fork: bool = False) -> str:
        """Open the session: resume ``resume`` (``session/resume`` when offered, else ``session/load``, whose
        replayed updates are not turn output), or a new one; then the mode and model the options ask for. With
        ``fork``, ``session/fork`` copies ``resume`` and the copy is opened instead (:attr:`can_fork` must hold:
        a refused fork is an error, never a silent new session or the original)."""
        spec, options = self._started()
        cwd = str(options.cwd)
        opened: dict[str, Any] | None = None
        if fork:
            if resume is None or not self.can_fork:
                raise BackendUnavailable(f"{spec.name} cannot fork a session: it does not offer session/fork")
            opened = as_mapping(
                await self._session_request(
                    "session/fork", {"sessionId": resume, "cwd": cwd, "mcpServers": []}
                )
            )
            forked = opened.get("sessionId")
            if not isinstance(forked, str) or not forked:
                self._faulted = True
                raise AgentProcessError(
                    f"{spec.name} answered session/fork without a session id", code="internal"
                )
            resume = forked
        elif resume is not None:
            session_capabilities = as_mapping(self.capabilities.get("sessionCapabilities"))
            params = {"sessionId": resume, "cwd": cwd, "mcpServers": []}
            method = (
                "session/resume"
                if session_capabilities.get("resume") is not None
                else "session/load"
                if self.capabilities.get("loadSession")
                else None
            )
            if method is None:
                self._note(f"{spec.name} cannot resume a session: a new one was started")
            else:
                try:
                    opened = as_mapping(await self._bounded(method, params))
                except RequestError as exc:
                    # The CLI refused (Gemini 0.61 cannot load its own sessions from a new process): the turn
                    # still runs, in a new session, and the user is told the earlier one is not continued.
                    self._note(
                        f"{spec.name} could not resume session {resume} ({exc}); a new session was started"
                    )
        if opened is not None:
            assert resume is not None
            self.session_id = resume
        else:
            params: dict[str, Any] = {"cwd": cwd, "mcpServers": []}
            if spec.model_passing == "new_session_settings" and options.model:
                params["settings"] = {"model": options.model}
            opened = as_mapping(await self._session_request("session/new", params))
            session_id = opened.get("sessionId")
            if not isinstance(session_id, str) or not session_id:
                self._faulted = True
                raise AgentProcessError(
                    f"{spec.name} answered session/new without a session id", code="internal"
                )
            self.session_id = session_id
        self.session = opened
        mode = options.mode or spec.ask_mode
        if mode:
            await self.set_mode(mode, required=options.mode is not None)
        if options.mode is None:
            for config_id, value in spec.ask_config.items():
                await self.set_config_option(config_id, value)
        if options.model and spec.model_passing in ("set_model", "config_option"):
            await self.set_model(options.model)
        if resume is not None and options.endpoint is not None:
            await self._follow_endpoint_model(options.endpoint.model)
        return self.session_id

    async def _follow_endpoint_model(self, model: str) -> None:
        """Point a resumed session at the endpoint's ``model``: a CLI resumes on the model its session was
        recorded with (Kimi Code does), which the configuration hive wrote for this run may no longer list, and
        the turn would then fail inside the CLI with nothing said. Only when the session's ``model`` option
        offers the endpoint's model and is on another one."""
        for option in map(as_mapping, as_list(self.session.get("configOptions"))):
            if option.get("id") != "model" and option.get("category") != "model":
                continue
            if _names_model(option.get("currentValue"), model):
                return
            for choice in _select_values(option):
                if _names_model(choice.get("value"), model) or choice.get("name") == model:
                    await self.set_config_option(str(option.get("id")), str(choice.get("value")))
                    return

    async def set_config_option(self, config_id: str, value: str) -> None:
        """``session/set_config_option`` when the session offers ``config_id`` and it is not ``value`` already
        (an option the session does not offer is a note: it may name a setting of another version)."""
        spec, _ = self._started()
        offered = {
            str(option.get("id")): option
            for option in map(as_mapping, as_list(self.session.get("configOptions")))
        }
        option = offered.get(config_id)
        if option is None:
            self._note(f"{spec.name} offers no option {config_id!r}")
            return
        if option.get("currentValue") == value:
            return
        try:
            result = as_mapping(
                await self._bounded(
                    "session/set_config_option",
                    {"sessionId": self.session_id, "configId": config_id, "value": value},
                )
            )
        except RequestError as exc:
            raise ChatError(
                f"{spec.name} refused option {config_id}={value!r}: {exc}", code="request_rejected"
            ) from exc
        if "configOptions" in result:
            self.session["configOptions"] = result["configOptions"]

    async def set_mode(self, mode: str, *, required: bool = True) -> None:
        """``session/set_mode``; a mode the agent lacks is an error when ``required``, else a note."""
        spec, _ = self._started()
        modes = as_mapping(self.session.get("modes"))
        if modes.get("currentModeId") == mode:
            return  # already in it: a round trip less (and a recording made without it still replays)
        available = _mode_ids(self.session)
        if available is not None and mode not in available:
            message = (
                f"{spec.name} has no mode {mode!r} (it offers: {', '.join(sorted(available)) or 'none'})"
            )
            if required:
                raise ChatError(message, code="request_rejected")
            self._note(message)
            return
        try:
            await self._bounded("session/set_mode", {"sessionId": self.session_id, "modeId": mode})
        except RequestError as exc:
            if required:
                raise ChatError(f"{spec.name} refused mode {mode!r}: {exc}", code="request_rejected") from exc
            self._note(f"{spec.name} refused mode {mode!r}: {exc}")
            return
        self.session["modes"] = {**modes, "currentModeId": mode}

    async def set_model(self, model: str) -> None:
        """Pass ``model`` the way the spec says (``session/set_model`` or the ``model`` config option)."""
        spec, _ = self._started()
        if spec.model_passing == "config_option":
            method = "session/set_config_option"
            params: dict[str, Any] = {"sessionId": self.session_id, "configId": "model", "value": model}
        else:
            method, params = "session/set_model", {"sessionId": self.session_id, "modelId": model}
        try:
            await self._bounded(method, params)
        except RequestError as exc:
            raise ChatError(f"{spec.name} refused model {model!r}: {exc}", code="request_rejected") from exc

    # -- turns ------------------------------------------------------------------------------------------------

    async def prompt(
        self, text: str, mapper: TurnMapper, services: AcpClientServices | None = None
    ) -> dict[str, Any]:
        """Run one ``session/prompt``: its updates go to ``mapper``, its requests to ``services``; the raw
        PromptResponse. Cancelled, it runs the cancel sequence (see the module) before the cancellation goes on."""
        _, options = self._started()
        rpc = self._rpc
        assert rpc is not None
        assert self._tasks is not None
        if self.faulted:
            raise self._died("the turn")
        self._mapper, self._services, self.cancel_result = mapper, services, None
        done = anyio.Event()
        box: dict[str, Any] = {}

        async def run() -> None:
            try:
                box["result"] = await rpc.send_request(
                    "session/prompt",
                    {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]},
                )
            except BaseException as exc:
                box["error"] = exc
                if isinstance(exc, anyio.get_cancelled_exc_class()):
                    raise  # the connection was closed under the turn
            finally:
                done.set()

        # Its own task: a cancelled turn must still see the agent's answer to session/cancel.
        self._tasks.create(run(), name="hive.acp.prompt")
        try:
            await done.wait()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel_turn(done, box, options.cancel_grace)
            raise
        finally:
            self._mapper = self._services = None
            self._prompt_id = None
        error = box.get("error")
        if error is not None:
            await self._settle(error)
            raise self._translate(error, "the turn")
        return as_mapping(box.get("result"))

    async def cancel(self) -> None:
        """Send ``session/cancel`` and answer every pending permission request ``cancelled``."""
        self._cancelling = True
        for scope in list(self._permission_scopes):
            scope.cancel()
        if self._rpc is None or self.session_id is None or self.faulted:
            return
        with contextlib.suppress(ConnectionError, OSError), anyio.move_on_after(1.0):
            await self._rpc.send_notification("session/cancel", {"sessionId": self.session_id})

    async def _cancel_turn(self, done: anyio.Event, box: dict[str, Any], grace: float) -> None:
        try:
            await self.cancel()
            with anyio.move_on_after(grace):
                await done.wait()
            if done.is_set():
                result: object = box.get("result")
                self.cancel_result = as_mapping(result) if result is not None else None
                return
            # The agent ignored the cancel: it may be stuck; its process is not trusted again.
            self._faulted = True
            if self.cli is not None:
                self.cli.signal_group(signal.SIGINT)
            with anyio.move_on_after(grace):
                await done.wait()
            if not done.is_set() and self.process is not None:
                self.process.kill_tree()
                with anyio.move_on_after(_EXIT_WAIT):
                    await done.wait()
        finally:
            self._cancelling = False

    # -- close ------------------------------------------------------------------------------------------------

    async def aclose(self, grace: float | None = None) -> None:
        """Stop the agent: close its stdin, SIGINT its group, wait ``grace`` seconds (default: the options'
        ``cancel_grace``), SIGKILL the group and every process carrying its mark. Leaves no process behind."""
        if self._closed:
            return
        self._closed = True
        if grace is None:
            grace = self._options.cancel_grace if self._options is not None else 5.0
        with anyio.CancelScope(shield=True):
            if self.cli is not None:
                await self.cli.stop(grace, exit_wait=min(grace, _STDIN_EXIT_WAIT))
            # A handler still answering a dead agent fails its write; that is not the caller's error.
            if self._rpc is not None:
                try:
                    await self._rpc.close()
                except Exception:
                    _log.debug("closing the connection to %s failed", self.name, exc_info=True)
            if self._tasks is not None:
                try:
                    await self._tasks.shutdown()
                except Exception:
                    _log.debug("stopping the tasks of %s failed", self.name, exc_info=True)

    # -- the message hooks --------------------------------------------------------------------------------------

    def _incoming(self, message: dict[str, Any]) -> bool:
        method = message.get("method")
        if method == "session/update" and "id" not in message:
            params = as_mapping(message.get("params"))
            update = params.get("update")
            mapper = self._mapper
            session = params.get("sessionId")
            if mapper is not None and isinstance(update, dict) and session in (None, self.session_id):
                try:
                    mapper.on_update(decode_update(params["update"]))
                except Exception:
                    _log.exception("mapping an ACP session/update failed")
            return True
        if method is None and self._prompt_id is not None and message.get("id") == self._prompt_id:
            # The turn's result: whatever comes after it is not part of the turn.
            self._mapper = None
            self._prompt_id = None
        return False

    def _outgoing(self, message: dict[str, Any]) -> None:
        if message.get("method") == "session/prompt":
            self._prompt_id = message.get("id")

    async def _handle(self, method: str, params: Any, is_notification: bool) -> Any:
        if is_notification:
            return None  # session/update is handled by the transport; others carry nothing hive needs
        arguments = as_mapping(params)
        services = self._services
        if method == "session/request_permission":
            if services is None or self._cancelling:
                return CANCELLED_OUTCOME
            with anyio.CancelScope() as scope:
                self._permission_scopes.add(scope)
                try:
                    return await services.handle(method, arguments)
                finally:
                    self._permission_scopes.discard(scope)
            return CANCELLED_OUTCOME
        if services is None:
            raise RequestError.internal_error({"details": f"no turn is running to serve {method}"})
        return await services.handle(method, arguments)

    async def _watch_exit(self) -> None:
        process = self.process
        assert process is not None
        await process.wait()
        self._faulted = True
        # A dead agent's descendants may hold its stdout open: kill them, so its end reaches every request.
        process.kill_tree()

    # -- helpers -----------------------------------------------------------------------------------------------

    def _started(self) -> tuple[LaunchSpec, BackendOptions]:
        if self.spec is None or self._options is None or self._rpc is None:
            raise RuntimeError("the ACP connection was not started")
        return self.spec, self._options

    async def _request(self, method: str, params: dict[str, Any], *, during: str) -> Any:
        rpc = self._rpc
        assert rpc is not None
        try:
            return await rpc.send_request(method, params)
        except (ConnectionError, OSError) as exc:
            await self._settle(exc)
            raise self._translate(exc, during) from exc

    async def _settle(self, error: BaseException) -> None:
        """After the pipe broke: give the process a moment to exit, so the error can say how it ended."""
        if self.cli is not None and isinstance(error, (ConnectionError, OSError)):
            await self.cli.settle()

    async def _settle_stderr(self) -> None:
        """Let the stderr tail catch up with what the CLI wrote before it failed."""
        if self.cli is not None:
            await self.cli.settle_stderr()

    def _note(self, message: str) -> None:
        """Something the user should know that does not fail the turn: kept, and logged as a warning."""
        self.notes.append(message)
        _log.warning("%s", message)

    async def _session_request(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return await self._bounded(method, params)
        except RequestError as exc:
            raise _request_failure(self.name, method, exc) from exc

    async def _bounded(self, method: str, params: dict[str, Any]) -> Any:
        # Bounded like the start: a CLI stuck opening or configuring its session must not hang the turn.
        timeout = self._startup_timeout
        try:
            with anyio.fail_after(timeout):
                return await self._request(method, params, during=method)
        except TimeoutError:
            self._faulted = True
            await self._settle_stderr()
            raise ChatError(
                self._describe(f"{self.name} did not answer {method} within {timeout:g} s"), code="timeout"
            ) from None

    def _translate(self, exc: BaseException, during: str) -> BaseException:
        if isinstance(exc, RequestError):
            return _request_failure(self.name, during, exc)
        if isinstance(exc, (ConnectionError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)):
            return self._died(during)
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            # Not this turn's cancellation (that one reaches the turn itself): the connection was closed.
            return self._died(during)
        return exc

    def _died(self, during: str) -> AgentProcessError:
        self._faulted = True
        if self.cli is None:
            return AgentProcessError(f"{self.name} closed its output during {during}", code="internal")
        return AgentProcessError(self._describe(self.cli.describe_exit(f"during {during}")), code="internal")

    def _describe(self, what: str) -> str:
        return what if self.cli is None else self.cli.describe(what)


def _request_failure(name: str, during: str, exc: RequestError) -> ChatError:
    code: ErrorCode = (
        "auth" if exc.code == -32000 else "request_rejected" if exc.code == -32602 else "internal"
    )
    detail = f": {exc.data}" if exc.data else ""
    return ChatError(f"{name} failed {during}: {exc}{detail}", code=code)


def _mode_ids(session: dict[str, Any]) -> set[str] | None:
    modes = as_array(as_mapping(session.get("modes")).get("availableModes"))
    if modes is None:
        return None
    return {str(as_mapping(mode).get("id")) for mode in modes if as_mapping(mode)}


def _names_model(value: object, model: str) -> bool:
    """Whether a CLI's model value names ``model``, bare or behind a provider (``local/other-model``)."""
    return isinstance(value, str) and (value == model or value.endswith("/" + model))


def _select_values(option: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The values a ``select`` config option offers, its groups flattened."""
    values: list[dict[str, Any]] = []
    for entry in map(as_mapping, as_list(option.get("options"))):
        if "options" in entry:
            values.extend(map(as_mapping, as_list(entry["options"])))
        else:
            values.append(entry)
    return values


def _hive_version() -> str:
    try:
        return version("hive-providers")
    except PackageNotFoundError:
        return "0"
