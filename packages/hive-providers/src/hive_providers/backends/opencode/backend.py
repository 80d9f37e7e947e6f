"""OpenCode over ``opencode serve``, as an :class:`~hive_core.backends.AgentBackend`.

One server per backend, started at the first turn (:mod:`.server`) with the offline recipe's private ``HOME``
when there is an endpoint, and kept warm between turns until :meth:`OpenCodeServeBackend.aclose`. The backend's
session is OpenCode's: created with ``POST /session``, or the resumed id (checked with ``GET /session/{id}``), or
with :attr:`~hive_providers.backends.kit.specs.BackendOptions.fork` a copy made by ``POST /session/{id}/fork``.

A turn subscribes to ``GET /event`` before it sends ``POST /session/{id}/prompt_async`` and maps the stream
(:mod:`.events`) until the session is idle again. ``permission.asked`` is judged by the policy, then the approval
service (``hitl_request``), and answered ``once`` / ``always`` / ``reject``; ``question.asked`` (or a 2.0.32
``form.created``, with ``forms=True``) becomes one ``question_request`` (:mod:`.questions`); each is answered in a
task of its own while the stream is read on.

Cancelled, the turn closes its open calls and declines its pending questions, sends ``POST
/session/{id}/abort`` and waits up to ``cancel_grace`` seconds for the session to stop; a server that does not is
stopped (SIGINT to its group, then kill). A server that dies or whose stream breaks mid-turn fails the turn with
its exit status and the end of its log, whatever was pending; the next turn starts a new one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any
from typing import Final

import anyio
from anyio.abc import TaskGroup

from hive_core.failures import ChatError
from hive_core.tool_round import CANCELLED_CALL_TEXT
from hive_core.tools import EventSink
from hive_protocol import QuestionRequestEvent
from hive_protocol import UserMessageRequest
from hive_providers.backends.kit.backend_shell import BackendShell
from hive_providers.backends.kit.cli_process import FAILED_CALL_TEXT
from hive_providers.backends.kit.errors import AgentProcessError
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.judging import judge_call
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.offline import prepare_offline
from hive_providers.backends.offline import private_home
from hive_providers.backends.probe import require_executable

from .events import OpenCodeEventMapper
from .questions import DECLINED_MESSAGE
from .questions import AskedQuestions
from .questions import PermissionAsked
from .questions import form_answers
from .questions import question_answers
from .questions import read_form
from .questions import read_permission
from .questions import read_question
from .server import OpenCodeServer
from .server import ServerGone
from .wire import decode_event

__all__ = ["ASKING_PERMISSIONS", "OpenCodeServeBackend"]

ASKING_PERMISSIONS: Final = '{"bash": "ask", "edit": "ask", "webfetch": "ask"}'
"""``OPENCODE_PERMISSION``: OpenCode asks before commands, edits and fetches (its default runs them)."""

_SETTLE_WAIT: Final = 2.0
_STATUS_POLL: Final = 0.1
_log = logging.getLogger(__name__)


class OpenCodeServeBackend(BackendShell):
    """Drives OpenCode through one warm ``opencode serve``: one hive session's turns in one OpenCode session.

    ``forms`` answers questions on OpenCode 2.0.32's form wire (``form.created`` and the form routes) instead of
    1.18's question routes.
    """

    def __init__(self, spec: LaunchSpec, options: BackendOptions, *, forms: bool = False) -> None:
        super().__init__(spec, options)
        self.forms = forms
        """Whether questions arrive as 2.0.32 forms."""
        self.server: OpenCodeServer | None = None
        """The running server, once a turn started it."""
        self._session_id = None  # the options' resume is only asked for: session_id says which one

    @property
    def session_id(self) -> str | None:
        """OpenCode's session id once a turn opened it (before: the id to resume, unless it is to be forked)."""
        if self._session_id is not None:
            return self._session_id
        return None if self.options.fork else self.options.resume

    @property
    def home(self) -> Path:
        """The private home of runs with an endpoint (the server's log lives there too)."""
        return private_home(self.spec, self.options)

    def command(self) -> list[str]:
        """The server's command line; raises :class:`BackendNotInstalled`."""
        executable = require_executable(self.spec, self.options)
        return [
            executable,
            "serve",
            "--port",
            "0",
            "--hostname",
            "127.0.0.1",
            *(self.options.arguments or ()),
        ]

    def environment(self) -> dict[str, str]:
        """The server's environment: hive's, the spec's, the offline recipe's, asking permissions, the options'."""
        env = dict(os.environ)
        env.update(self.spec.environment)
        if self.options.endpoint is not None:
            env.update(prepare_offline(self.spec, self.options))
        env.setdefault("OPENCODE_PERMISSION", ASKING_PERMISSIONS)
        # Only hive (which holds the password) can drive the server, even from another local account.
        env["OPENCODE_SERVER_PASSWORD"] = secrets.token_urlsafe(24)
        env.update(self.options.environment)
        return env

    async def aclose(self) -> None:
        """Stop the server (its whole process group)."""
        server, self.server = self.server, None
        if server is not None:
            await server.stop(self.options.cancel_grace)

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn in OpenCode's session on the warm server."""
        server = await self._server()
        session_id = await self._session(server)
        await _Turn(self, server, session_id, emit).run(request.content)

    async def _server(self) -> OpenCodeServer:
        if self.server is not None and self.server.running:
            return self.server
        await self.aclose()
        command, env = self.command(), self.environment()
        server = OpenCodeServer(
            command,
            cwd=self.options.cwd,
            env=env,
            log=self.home / "opencode-serve.log",
            password=env.get("OPENCODE_SERVER_PASSWORD"),
        )
        timeout = self.options.startup_timeout or self.spec.startup_timeout
        try:
            await server.start(timeout)
        except TimeoutError:
            await server.stop(self.options.cancel_grace)
            raise BackendStartError(
                server.describe(f"{self.name} serve did not become healthy within {timeout:g} s"),
                code="timeout",
            ) from None
        except ServerGone as exc:
            await server.stop(self.options.cancel_grace)
            raise BackendStartError(str(exc)) from None
        except OSError as exc:
            await server.stop(self.options.cancel_grace)
            raise BackendStartError(f"cannot start {self.name} ({command[0]}): {exc}") from exc
        except BaseException:
            await server.stop(self.options.cancel_grace)
            raise
        self.server = server
        return server

    async def _session(self, server: OpenCodeServer) -> str:
        if self._session_id is not None:
            return self._session_id
        resume = self.options.resume
        if resume and self.options.fork:
            reply = await server.request("POST", f"/session/{resume}/fork", {})
            what = f"fork the OpenCode session {resume}"
        elif resume:
            reply = await server.request("GET", f"/session/{resume}")
            what = f"resume the OpenCode session {resume}"
        else:
            reply = await server.request("POST", "/session", {})
            what = "create an OpenCode session"
        session_id = text_of(as_mapping(reply.body).get("id")) if reply.ok else None
        if session_id is None:
            raise BackendStartError(f"cannot {what}: HTTP {reply.status} {_problem(reply.body)}")
        self._session_id = session_id
        return session_id

    def prompt_body(self, prompt: str) -> dict[str, Any]:
        """The ``prompt_async`` body: the text, the model (``provider/model``, or the endpoint's), the agent."""
        body: dict[str, Any] = {"parts": [{"type": "text", "text": prompt}]}
        model = self.options.model
        if self.options.endpoint is not None:
            body["model"] = {"providerID": "local", "modelID": model or self.options.endpoint.model}
        elif model and "/" in model:
            provider, _, name = model.partition("/")
            body["model"] = {"providerID": provider, "modelID": name}
        if self.options.mode:
            body["agent"] = self.options.mode
        return body


class _Turn:
    """One turn's stream and the requests answered during it."""

    def __init__(
        self, backend: OpenCodeServeBackend, server: OpenCodeServer, session_id: str, emit: EventSink
    ):
        self.backend = backend
        self.server = server
        self.options = backend.options
        self.session_id = session_id
        self.tracker = ToolCallTracker(emit, taken=backend.call_ids)
        self.mapper = OpenCodeEventMapper(emit, self.tracker, session_id)
        self._emit = emit
        self._pending: dict[str, anyio.CancelScope] = {}
        self._cancelling = False

    async def run(self, prompt: str) -> None:
        failure: Exception | None = None
        events = self.server.events()
        async with anyio.create_task_group() as group:
            try:
                await self._stream(group, events, prompt)
            except anyio.get_cancelled_exc_class():
                # The runner writes the turn_end: it alone knows a cancel from a deadline.
                with anyio.CancelScope(shield=True):
                    await self._cancel()
                raise
            except ServerGone as exc:
                failure = AgentProcessError(str(exc), code="internal")
            except Exception as exc:
                failure = exc
            finally:
                group.cancel_scope.cancel()
                with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                    await events.aclose()
        if failure is not None:
            with contextlib.suppress(Exception):
                self.tracker.close_all(FAILED_CALL_TEXT)
                self.mapper.stop_children()
            raise failure
        if self.mapper.error is not None and not self.mapper.aborted:
            self.tracker.close_all(FAILED_CALL_TEXT)
            self.mapper.stop_children()
            raise ChatError(f"{self.backend.name} reported an error: {self.mapper.error}", code="internal")
        self._emit(self.mapper.finish())

    async def _stream(self, group: TaskGroup, events: AsyncGenerator[dict[str, Any]], prompt: str) -> None:
        timeout = self.options.startup_timeout or self.backend.spec.startup_timeout
        with anyio.fail_after(timeout):
            first = await anext(events)
        if first.get("type") != "server.connected":
            self._dispatch(group, first)
        reply = await self.server.request(
            "POST", f"/session/{self.session_id}/prompt_async", self.backend.prompt_body(prompt)
        )
        if not reply.ok:
            raise ChatError(
                f"{self.backend.name} refused the prompt: HTTP {reply.status} {_problem(reply.body)}",
                code="internal",
            )
        while not self.mapper.ended:
            self._dispatch(group, await anext(events))

    def _dispatch(self, group: TaskGroup, event: dict[str, Any]) -> None:
        kind = event.get("type")
        props = as_mapping(event.get("properties"))
        try:
            if kind == "permission.asked":
                permission = read_permission(props)
                if permission is not None and self.mapper.owns(permission.session_id):
                    local = permission.session_id != self.session_id or permission.call_id is None
                    call_id = self._call_for(
                        None if local else permission.call_id, permission.tool, permission.arguments
                    )
                    group.start_soon(self._permit, permission, call_id, local)
            elif kind == ("form.created" if self.backend.forms else "question.asked"):
                asked = read_form(props) if self.backend.forms else read_question(props)
                if asked is not None and self.mapper.owns(asked.session_id):
                    call_id = None
                    if asked.call_id is not None and asked.session_id in (None, self.session_id):
                        arguments = {"questions": [q.question for q in asked.questions]}
                        call_id = self.mapper.start_call(asked.call_id, "question", arguments)
                    group.start_soon(self._ask, asked, call_id)
            else:
                self.mapper.on_event(decode_event(event))
        except Exception:
            _log.exception("mapping an OpenCode event failed")

    # -- permissions --------------------------------------------------------------------------------------------

    def _call_for(self, call_id: str | None, tool: str, arguments: dict[str, Any]) -> str:
        """The hive call a request is about: OpenCode's call ``call_id`` (started now when its part has not said
        ``running`` yet), else a call of hive's own (a subagent's request, or one naming no call)."""
        if call_id is not None:
            return self.mapper.start_call(call_id, tool, arguments)
        return self.tracker.start_local(tool, arguments)

    async def _permit(self, permission: PermissionAsked, call_id: str, local: bool) -> None:
        reply: dict[str, Any] = {"reply": "reject"}
        try:
            reply = await self._judge(call_id, permission)
        finally:
            if local:
                self.tracker.end(call_id, success=reply["reply"] != "reject", output=reply.get("message"))
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(_SETTLE_WAIT),
                contextlib.suppress(ServerGone),
            ):
                await self.server.request("POST", f"/permission/{permission.request_id}/reply", reply)

    async def _judge(self, call_id: str, permission: PermissionAsked) -> dict[str, Any]:
        """The reply to ``permission``: the rules' verdict, else the human's."""
        approvals = None if self._cancelling else self.options.approvals
        judged = await judge_call(
            call_id,
            permission.tool,
            permission.arguments,
            policy=self.options.policy,
            approvals=approvals,
            tracker=self.tracker,
            cwd=permission.directory,
            project=self.options.cwd,
        )
        decision = judged.decision
        match judged.outcome:
            case "allowed":
                return {"reply": "once"}
            case "denied":
                return {"reply": "reject", "message": judged.verdict.reason}
            case "unavailable":
                return {"reply": "reject"}
            case "rejected":
                assert decision is not None
                return (
                    {"reply": "reject", "message": decision.reason}
                    if decision.reason
                    else {"reply": "reject"}
                )
            case "approved":
                assert decision is not None
                return {"reply": "always" if decision.always_approve else "once"}

    # -- questions ----------------------------------------------------------------------------------------------

    async def _ask(self, asked: AskedQuestions, call_id: str | None) -> None:
        scope = anyio.CancelScope()
        self._pending[asked.request_id] = scope
        answers = None
        try:
            with scope:
                questions = self.options.questions
                if questions is not None and not self._cancelling:
                    try:
                        answers = await questions.ask(
                            QuestionRequestEvent(
                                id=asked.request_id,
                                call_id=call_id,
                                questions=asked.questions,
                            )
                        )
                    except Exception:
                        _log.exception("asking an OpenCode question failed")
        finally:
            self._pending.pop(asked.request_id, None)
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(_SETTLE_WAIT),
                contextlib.suppress(ServerGone),
            ):
                await self._settle(asked, answers)

    async def _settle(self, asked: AskedQuestions, answers: dict[str, list[str]] | None) -> None:
        """Send the answer, or the decline: an answer OpenCode refuses (400) is declined, one to a question
        settled already (404, 409) is dropped."""
        base = self._question_route(asked)
        if answers is not None:
            encoded = form_answers(asked, answers) if self.backend.forms else question_answers(asked, answers)
            if encoded is not None:
                reply = await self.server.request("POST", f"{base}/reply", {"answers": encoded})
                if reply.ok or reply.status in (404, 409):
                    if not reply.ok:
                        _log.info("OpenCode question %s was settled already", asked.request_id)
                    return
                _log.warning(
                    "OpenCode refused the answer to %s (HTTP %s %s); declining it",
                    asked.request_id,
                    reply.status,
                    _problem(reply.body),
                )
            else:
                _log.warning(
                    "the answer to OpenCode question %s offers no valid choice; declining it",
                    asked.request_id,
                )
        if self.backend.forms:
            await self.server.request("POST", f"{base}/cancel", {"message": DECLINED_MESSAGE})
        else:
            await self.server.request("POST", f"{base}/reject")

    def _question_route(self, asked: AskedQuestions) -> str:
        if self.backend.forms:
            return f"/api/session/{asked.session_id or self.session_id}/form/{asked.request_id}"
        return f"/question/{asked.request_id}"

    # -- cancel -------------------------------------------------------------------------------------------------

    async def _cancel(self) -> None:
        """The cancel sequence (see the module); shielded by the caller."""
        self._cancelling = True
        self.tracker.close_all(CANCELLED_CALL_TEXT)
        self.mapper.stop_children()
        for scope in list(self._pending.values()):
            scope.cancel()  # each declines its question as it ends
        stopped = False
        with anyio.move_on_after(self.options.cancel_grace), contextlib.suppress(ServerGone):
            route = (
                f"/api/session/{self.session_id}/interrupt"
                if self.backend.forms
                else f"/session/{self.session_id}/abort"
            )
            await self.server.request("POST", route)
            while not stopped:
                reply = await self.server.request("GET", "/session/status")
                status = as_mapping(as_mapping(reply.body).get(self.session_id)).get("type")
                stopped = reply.ok and status in (None, "idle")
                if not stopped:
                    await anyio.sleep(_STATUS_POLL)
        if not stopped:
            await self.backend.aclose()


def _problem(body: object) -> str:
    fields = as_mapping(body)
    return (
        text_of(fields.get("message"))
        or text_of(as_mapping(fields.get("data")).get("message"))
        or text_of(fields.get("name"))
        or text_of(fields.get("_tag"))
        or ""
    )
