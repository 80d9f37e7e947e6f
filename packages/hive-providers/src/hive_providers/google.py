"""Google AI (Gemini) through its REST API with ``httpx2``: ``streamGenerateContent`` as server-sent events.

No Google SDK is needed: the adapter builds the request JSON, retries 408, 429 and 5xx answers itself
(honouring ``retry-after`` and Google's ``RetryInfo``), and decodes each event with msgspec.

Thought signatures. Gemini attaches a ``thoughtSignature`` to a response part (a thought, a text or a function
call part) and wants it back on the same part. The loop keeps one :class:`~hive_core.ThinkingPart` per response,
so its ``signature`` holds, for ``provider == "google"``, a JSON object that maps where each signature came to
the signature: ``"thought"`` (the thought summary), ``"text"`` (the reply text) and ``"call:N"`` (the N-th
function call of the response, from 0). Requests rebuild the model's parts in the order thoughts, text, calls
and put each signature back where it was. For a Gemini 3 model, a function call from elsewhere (another
provider, or history without signatures) gets Google's documented placeholder signature instead.

Call ids. Gemini usually sends no call id; the adapter then makes one from a digest of the request and the
call's position (``gemini_<digest>_<n>``), so the same request always yields the same ids. Ids Gemini does
send are kept and sent back on the call and its response.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import re
from collections.abc import AsyncIterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Final
from typing import Unpack
from typing import cast

import anyio
import httpx2
import msgspec

from hive_core import ChatError
from hive_core import chat
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_protocol import ErrorCode

from ._client import Connection
from ._client import RemoteChatClient
from ._client import keyed_connection
from ._client import shared_ssl_context
from ._client import transport_error
from .errors import code_for_status
from .errors import retry_after_seconds
from .registry import required_setting
from .settings import ProviderSettings
from .sse import iter_sse

__all__ = ["DEFAULT_BASE_URL", "THINKING_BUDGETS", "GoogleChatClient", "from_settings", "google_schema"]

PROVIDER: Final = "google"

DEFAULT_BASE_URL: Final = "https://generativelanguage.googleapis.com/v1beta"
"""The Gemini API's root."""

THINKING_BUDGETS: Final[dict[str, int]] = {
    "none": 0,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "extra_high": 32768,
}
"""``thinkingBudget`` per reasoning effort (Gemini 3 still takes a budget). Thoughts count as output, so the
budget is added to ``maxOutputTokens`` when the request caps the output."""

SKIP_SIGNATURE: Final = "skip_thought_signature_validator"
"""Google's placeholder signature for a function call Gemini 3 did not make itself."""

_FINISH: Final[dict[str, chat.FinishReason]] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}
_RETRY_STATUSES: Final = frozenset({408, 429, 500, 502, 503, 504})
_MAX_ERROR_BODY: Final = 65536
_GENERATED_ID = re.compile(r"gemini_[0-9a-f]{12}_\d+\Z")
_THINKING_MODEL = re.compile(r"gemini-(?:2\.5|[3-9]|\d\d)|thinking")
_SIGNATURE_REQUIRED = re.compile(r"gemini-(?:[3-9]|\d\d)")


class _FunctionCall(msgspec.Struct):
    name: str = ""
    args: msgspec.Raw = msgspec.Raw()
    id: str | None = None


class _Part(msgspec.Struct, rename="camel"):
    text: str | None = None
    thought: bool = False
    thought_signature: str | None = None
    function_call: _FunctionCall | None = None


class _Content(msgspec.Struct):
    parts: list[_Part] = msgspec.field(default_factory=list[_Part])


class _Candidate(msgspec.Struct, rename="camel"):
    content: _Content | None = None
    finish_reason: str | None = None


class _UsageMetadata(msgspec.Struct, rename="camel"):
    prompt_token_count: int = 0
    candidates_token_count: int = 0
    thoughts_token_count: int = 0
    tool_use_prompt_token_count: int = 0
    cached_content_token_count: int = 0


class _PromptFeedback(msgspec.Struct, rename="camel"):
    block_reason: str | None = None


class _Error(msgspec.Struct):
    code: int = 500
    message: str = ""
    status: str = ""
    details: list[dict[str, Any]] = msgspec.field(default_factory=list[dict[str, Any]])


class _Response(msgspec.Struct, rename="camel"):
    candidates: list[_Candidate] = msgspec.field(default_factory=list[_Candidate])
    usage_metadata: _UsageMetadata | None = None
    prompt_feedback: _PromptFeedback | None = None
    error: _Error | None = None
    model_version: str | None = None


class _ErrorBody(msgspec.Struct):
    error: _Error | None = None


class _Model(msgspec.Struct, rename="camel"):
    name: str = ""
    id: str = ""
    supported_generation_methods: list[str] | None = None


class _ModelList(msgspec.Struct, rename="camel"):
    models: list[_Model] = msgspec.field(default_factory=list[_Model])
    data: list[_Model] = msgspec.field(default_factory=list[_Model])
    next_page_token: str | None = None


_decode_response = msgspec.json.Decoder(_Response).decode
_decode_error = msgspec.json.Decoder(_ErrorBody).decode
_decode_models = msgspec.json.Decoder(_ModelList).decode
_decode_signatures = msgspec.json.Decoder(dict[str, str]).decode
_decode_string = msgspec.json.Decoder(str).decode
_encode = msgspec.json.encode


class GoogleChatClient(RemoteChatClient):
    """A :class:`~hive_core.ChatClient` for the Gemini API (Google AI Studio keys)."""

    streamed_tool_calls = False  # each call arrives whole

    def __init__(
        self,
        *,
        model: str,
        max_retry_wait: float = 60.0,
        include_thoughts: bool | None = None,
        http_client: httpx2.AsyncClient | None = None,
        **connection: Unpack[Connection],
    ) -> None:
        """Configure a client; no connection is made until the first request.

        ``api_key`` is required (there is no SDK to look one up). ``base_url`` defaults to :data:`DEFAULT_BASE_URL`; a bare host gets ``/v1beta``. A 408, 429 or 5xx
        answer, or a failed connection, is retried up to ``max_retries`` times, waiting what the server asks
        (at most ``max_retry_wait`` seconds, else the error is raised with its ``retry_after``) or a growing
        backoff. ``include_thoughts`` asks for thought summaries; by default it is on for Gemini 2.5 and later.
        ``http_client`` is used instead of a client of its own (and left open).
        """
        super().__init__(provider=PROVIDER, model=model, connection=connection)
        if not self.api_key:
            raise ValueError("google: missing required setting 'api_key'")
        self._api_key: str = self.api_key
        self.base_url = _api_root(self.base_url or DEFAULT_BASE_URL)
        self.max_retry_wait = max_retry_wait
        self.include_thoughts = include_thoughts
        self._http_client = http_client
        self._client: httpx2.AsyncClient | None = None

    def _http(self) -> httpx2.AsyncClient:
        if self._http_client is not None:
            return self._http_client
        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=self.timeout, verify=shared_ssl_context())
        return self._client

    async def aclose(self) -> None:
        """Close the connections (a client passed in as ``http_client`` stays open)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def list_models(self) -> list[str]:
        """The models that can generate content, without the ``models/`` prefix."""
        names: list[str] = []
        token: str | None = None
        for _ in range(50):
            params = {"pageSize": "1000", **({"pageToken": token} if token else {})}
            request = self._http().build_request(
                "GET",
                f"{self.base_url}/models",
                params=params,
                headers=self._headers(),
                timeout=self.timeout,
            )
            response = await self._send(request)
            try:
                data = await response.aread()
            except httpx2.TransportError as exc:
                raise transport_error(PROVIDER, exc, self.idle_timeout) from exc
            finally:
                await response.aclose()
            try:
                page = _decode_models(data)
            except msgspec.DecodeError as exc:
                raise ChatError(f"google: unreadable model list ({exc})", code="internal") from exc
            for model in page.models or page.data:
                methods = model.supported_generation_methods
                if methods is None or "generateContent" in methods:
                    names.append((model.name or model.id).removeprefix("models/"))
            token = page.next_page_token
            if not token:
                break
        return names

    async def stream(
        self, messages: Sequence[Message], options: chat.ChatOptions
    ) -> AsyncIterator[chat.ChatUpdate]:
        """Stream the model's answer to ``messages``; failures raise :class:`~hive_core.ChatError`."""
        model = options.model or self.model
        body = _encode(self._request_body(messages, options, model))
        request = self._http().build_request(
            "POST",
            f"{self.base_url}/{_model_path(model)}:streamGenerateContent",
            params={"alt": "sse"},
            content=body,
            headers={**self._headers(), "content-type": "application/json"},
            timeout=self.timeout,
        )
        response = await self._send(request)
        try:
            async for update in _read_stream(response, body):
                yield update
        except httpx2.TransportError as exc:
            raise transport_error(PROVIDER, exc, self.idle_timeout) from exc
        finally:
            await response.aclose()

    def _headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._api_key}

    async def _send(self, request: httpx2.Request) -> httpx2.Response:
        """Send with retries; the response returned is a success whose body is still to be read."""
        http = self._http()
        attempt = 0
        while True:
            try:
                response = await http.send(request, stream=True)
            except httpx2.TransportError as exc:
                error, retryable = transport_error(PROVIDER, exc, self.idle_timeout), True
            else:
                if response.is_success:
                    return response
                try:
                    data = await _read_bounded(response)
                except httpx2.TransportError:
                    data = b""
                finally:
                    await response.aclose()
                error = _status_error(response.status_code, data, response.headers)
                retryable = response.status_code in _RETRY_STATUSES
            if not retryable or attempt >= self.max_retries:
                raise error
            wait = error.retry_after
            if wait is None:
                wait = min(0.5 * 2**attempt, 8.0) * (1 - 0.25 * random.random())
            elif wait > self.max_retry_wait:
                raise error
            attempt += 1
            await anyio.sleep(wait)

    def _request_body(
        self, messages: Sequence[Message], options: chat.ChatOptions, model: str
    ) -> dict[str, Any]:
        system: list[str] = [options.instructions] if options.instructions else []
        contents: list[dict[str, Any]] = []
        needs_signature = bool(_SIGNATURE_REQUIRED.search(_model_name(model)))
        for message in messages:
            if message.role == "system":
                if text := message.text:
                    system.append(text)
                continue
            if message.role == "assistant":
                role, parts = "model", _model_parts(message, needs_signature)
            else:
                role, parts = "user", _user_parts(message)
            if not parts:
                continue
            if contents and contents[-1]["role"] == role:
                contents[-1]["parts"].extend(parts)
            else:
                contents.append({"role": role, "parts": parts})
        body: dict[str, Any] = {"contents": contents}
        if system:
            body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
        if options.tools:
            body["tools"] = [
                {
                    "functionDeclarations": [
                        _declaration(t.name, t.description, t.parameters) for t in options.tools
                    ]
                }
            ]
            body["toolConfig"] = {"functionCallingConfig": _calling_config(options.tool_choice)}
        generation: dict[str, Any] = {}
        if options.temperature is not None:
            generation["temperature"] = options.temperature
        if options.max_output_tokens is not None:
            generation["maxOutputTokens"] = options.max_output_tokens
        thinking: dict[str, Any] = {}
        effort = options.reasoning_effort
        if effort is not None:
            try:
                budget = THINKING_BUDGETS[effort]
            except KeyError:
                raise ChatError(
                    f"google: unknown reasoning effort {effort!r}; "
                    "expected none, low, medium, high or extra_high",
                    code="request_rejected",
                ) from None
            if budget == 0 and "-pro" in model:
                budget = 128  # Pro models cannot turn thinking off; this is their least
            thinking["thinkingBudget"] = budget
            if "maxOutputTokens" in generation:
                # Thoughts count as output: the cap stays whole for the reply.
                generation["maxOutputTokens"] += budget
        include = self.include_thoughts
        if include is None:
            include = bool(_THINKING_MODEL.search(_model_name(model)))
        if include and thinking.get("thinkingBudget") != 0:
            thinking["includeThoughts"] = True
        if thinking:
            generation["thinkingConfig"] = thinking
        if generation:
            body["generationConfig"] = generation
        return body


def _api_root(url: str) -> str:
    url = url.rstrip("/")
    scheme, _, rest = url.partition("://")
    return url if "/" in rest or not scheme else url + "/v1beta"


def _model_name(model: str) -> str:
    return model.rsplit("/", 1)[-1]


def _model_path(model: str) -> str:
    return model if "/" in model else f"models/{model}"


def _user_parts(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:
                parts.append({"text": part.text})
        elif isinstance(part, ToolResultPart):
            key = "error" if part.is_error else "output"
            response: dict[str, Any] = {"name": part.name, "response": {key: part.content}}
            if not _GENERATED_ID.match(part.call_id):
                response["id"] = part.call_id
            parts.append({"functionResponse": response})
            parts += ({"inlineData": {"mimeType": i.media_type, "data": i.data}} for i in part.images)
    return parts


def _model_parts(message: Message, needs_signature: bool) -> list[dict[str, Any]]:
    """The model's parts in the order thoughts, text, calls, each with the signature it came with."""
    signatures: dict[str, str] = {}
    thought = ""
    text_parts: list[str] = []
    calls: list[ToolCallPart] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            text_parts.append(part.text)
        elif isinstance(part, ToolCallPart):
            calls.append(part)
        elif isinstance(part, ThinkingPart) and part.provider == PROVIDER and part.signature:
            thought += part.text
            with contextlib.suppress(msgspec.DecodeError):
                signatures.update(_decode_signatures(part.signature))
    parts: list[dict[str, Any]] = []
    if "thought" in signatures:
        parts.append({"text": thought, "thought": True, "thoughtSignature": signatures["thought"]})
    text = "".join(text_parts)
    if "text" in signatures:
        parts.append({"text": text, "thoughtSignature": signatures["text"]})
    elif text.strip():
        parts.append({"text": text})
    for number, call in enumerate(calls):
        function: dict[str, Any] = {"name": call.name, "args": call.arguments or {}}
        if not _GENERATED_ID.match(call.id):
            function["id"] = call.id
        item: dict[str, Any] = {"functionCall": function}
        signature = signatures.get(f"call:{number}")
        if signature is None and number == 0 and needs_signature:
            signature = SKIP_SIGNATURE
        if signature is not None:
            item["thoughtSignature"] = signature
        parts.append(item)
    return parts


def _calling_config(choice: chat.ToolChoice) -> dict[str, Any]:
    if isinstance(choice, chat.RequiredTool):
        return {"mode": "ANY", "allowedFunctionNames": [choice.name]}
    return {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice]}


def _declaration(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": name, "description": description}
    schema = google_schema(parameters)
    if schema.get("properties"):
        declaration["parameters"] = schema
    return declaration


_SCHEMA_KEYS: Final = frozenset(
    {
        "description",
        "nullable",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
    }
)
_FORMATS: Final = frozenset({"enum", "date-time", "int32", "int64", "float", "double"})


def google_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON Schema rewritten into the OpenAPI subset Gemini accepts.

    References are inlined (a recursive one becomes a plain object), ``oneOf`` becomes ``anyOf``, a ``null``
    alternative becomes ``nullable``, ``const`` becomes a one-value ``enum``, types are upper case, and keys
    Gemini refuses (``additionalProperties``, ``default``, ``$schema``, ``examples``, ``title``...) are dropped.
    """
    definitions: dict[str, Any] = {
        **cast("dict[str, Any]", schema.get("definitions") or {}),
        **cast("dict[str, Any]", schema.get("$defs") or {}),
    }
    return _convert(schema, definitions, ())


def _convert(node: object, definitions: dict[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        return {}
    source = dict(cast("Mapping[str, Any]", node))
    ref = source.pop("$ref", None)
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen or name not in definitions:
            return {"type": "OBJECT", **({"description": d} if (d := source.get("description")) else {})}
        target = {**definitions[name], **source}
        return _convert(target, definitions, (*seen, name))
    all_of = source.pop("allOf", None)
    if isinstance(all_of, list):
        for item in cast("list[Any]", all_of):
            resolved = _convert(item, definitions, seen)
            source = {**resolved, **source}
    result: dict[str, Any] = {}
    nullable = source.get("nullable") is True
    alternatives = source.get("anyOf", source.get("oneOf"))
    if isinstance(alternatives, list):
        options = [a for a in cast("list[Any]", alternatives) if not _is_null(a)]
        nullable = nullable or len(options) < len(cast("list[Any]", alternatives))
        converted = [_convert(a, definitions, seen) for a in options]
        if len(converted) == 1:
            result.update(converted[0])
        elif converted:
            result["anyOf"] = converted
    kind = source.get("type")
    if isinstance(kind, list):
        kinds = [k for k in cast("list[Any]", kind) if k != "null"]
        nullable = nullable or len(kinds) < len(cast("list[Any]", kind))
        if len(kinds) == 1:
            kind = kinds[0]
        else:
            result["anyOf"] = [{"type": str(k).upper()} for k in kinds]
            kind = None
    if isinstance(kind, str):
        result["type"] = kind.upper()
    if "const" in source:
        source = {**source, "enum": [source["const"]]}
    enum = source.get("enum")
    if isinstance(enum, list):
        values = cast("list[Any]", enum)
        if all(isinstance(v, str) for v in values):
            result["enum"] = values
            result["type"] = "STRING"
            result["format"] = "enum"
    fmt = source.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS and "format" not in result:
        result["format"] = fmt
    for key in _SCHEMA_KEYS:
        if key in source and key != "nullable":
            result[key] = source[key]
    if nullable:
        result["nullable"] = True
    properties = source.get("properties")
    if isinstance(properties, Mapping) and properties:
        props = cast("Mapping[str, Any]", properties)
        result["properties"] = {name: _convert(value, definitions, seen) for name, value in props.items()}
        required = source.get("required")
        if isinstance(required, list):
            names = [n for n in cast("list[Any]", required) if n in props]
            if names:
                result["required"] = names
    items: object = source.get("items")
    if isinstance(items, Mapping):
        result["items"] = _convert(cast("Mapping[str, Any]", items), definitions, seen)
    return result


def _is_null(node: object) -> bool:
    return isinstance(node, Mapping) and cast("Mapping[str, Any]", node).get("type") == "null"


async def _read_stream(response: httpx2.Response, body: bytes) -> AsyncIterator[chat.ChatUpdate]:
    """Updates from a ``streamGenerateContent`` event stream; fails when it ends without a finish reason."""
    signatures: dict[str, str] = {}
    calls = 0
    digest = ""
    finish: str | None = None
    blocked = False
    model: str | None = None  # the model version the server says answered
    usage: _UsageMetadata | None = None
    async for sse in iter_sse(response.aiter_bytes()):
        try:
            chunk = _decode_response(sse.data)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise ChatError(f"google: unreadable stream event ({exc})", code="internal") from exc
        if chunk.error is not None:
            raise _google_error(chunk.error, {})
        for candidate in chunk.candidates[:1]:
            if candidate.content is not None:
                for part in candidate.content.parts:
                    signature = part.thought_signature
                    call = part.function_call
                    if call is not None:
                        call_id = call.id
                        if not call_id:
                            digest = digest or hashlib.sha256(body).hexdigest()[:12]
                            call_id = f"gemini_{digest}_{calls}"
                        yield chat.ToolCallUpdate(
                            calls, id=call_id, name=call.name, arguments=_arguments(call.args)
                        )
                        where = f"call:{calls}"
                        calls += 1
                    elif part.text is not None:
                        if part.thought:
                            where = "thought"
                            if part.text:
                                yield chat.ThinkingUpdate(part.text)
                        else:
                            where = "text"
                            if part.text:
                                yield chat.TextUpdate(part.text)
                    else:
                        where = "text"
                    if signature:
                        signatures[where] = signature
                        yield chat.ThinkingUpdate(
                            "", signature=_encode(signatures).decode(), provider=PROVIDER
                        )
            if candidate.finish_reason is not None:
                finish = candidate.finish_reason
        if chunk.usage_metadata is not None:
            usage = chunk.usage_metadata
        if chunk.model_version:
            model = chunk.model_version
        if chunk.prompt_feedback is not None and chunk.prompt_feedback.block_reason:
            blocked = True
    if finish is None and not blocked:
        raise ChatError("google: the stream ended before a finish reason", code="network")
    if usage is not None:
        yield chat.UsageUpdate(
            input_tokens=usage.prompt_token_count + usage.tool_use_prompt_token_count,
            output_tokens=usage.candidates_token_count + usage.thoughts_token_count,
            cached_input_tokens=usage.cached_content_token_count,
        )
    if blocked:
        reason: chat.FinishReason = "content_filter"
    else:
        reason = _FINISH.get(finish or "STOP", "stop")
        if reason == "stop" and calls:
            reason = "tool_calls"
    yield chat.FinishUpdate(reason, model)


def _arguments(raw: msgspec.Raw) -> str:
    data = bytes(raw)
    if not data:
        return "{}"
    if data.startswith(b'"'):
        # Not an object: the model's text as it wrote it, for the loop to report as unparsable.
        try:
            return _decode_string(data)
        except msgspec.DecodeError:
            pass
    return data.decode()


async def _read_bounded(response: httpx2.Response) -> bytes:
    data = b""
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= _MAX_ERROR_BODY:
            break
    return data


def _status_error(status: int, data: bytes, headers: Mapping[str, str]) -> ChatError:
    try:
        error = _decode_error(data).error
    except msgspec.DecodeError:
        error = None
    if error is None:
        error = _Error(code=status, message=data.decode(errors="replace").strip())
    error.code = status
    return _google_error(error, headers)


def _google_error(error: _Error, headers: Mapping[str, str]) -> ChatError:
    """The :class:`ChatError` for a Google error object, with the wait it asks for."""
    status, message = error.code, error.message
    reasons = {str(d.get("reason", "")) for d in error.details}
    code: ErrorCode = code_for_status(status, message)
    if status == 429 or error.status == "RESOURCE_EXHAUSTED":
        code = "rate_limit"  # Google's quota messages mention billing, but the wait is what matters
    if "API_KEY_INVALID" in reasons or error.status == "UNAUTHENTICATED" or "API key not valid" in message:
        code = "auth"
    retry_after = retry_after_seconds(headers)
    if retry_after is None:
        retry_after = _retry_delay(error.details)
    text = (
        f"google: HTTP {status}{' ' + error.status if error.status else ''}: {message or 'no details given'}"
    )
    return ChatError(text, code=code, retry_after=retry_after)


def _retry_delay(details: list[dict[str, Any]]) -> float | None:
    for detail in details:
        delay = detail.get("retryDelay")
        if str(detail.get("@type", "")).endswith("RetryInfo") and isinstance(delay, str):
            try:
                return max(float(delay.removesuffix("s")), 0.0)
            except ValueError:
                return None
    return None


def from_settings(settings: ProviderSettings) -> GoogleChatClient:
    """The ``google`` provider; raises :class:`~hive_providers.registry.MissingSettingError` without a key or a
    model."""
    return GoogleChatClient(model=required_setting(settings, "model"), **keyed_connection(settings))
