"""One generation on a local model, in its worker thread: render the prompt, generate, parse the tool calls.

Generation runs one request at a time per loaded model. Cancelling sets a flag the thread checks on every
token, and while a long prompt is being evaluated, llama.cpp's abort callback stops the evaluation itself.

With tools offered, ``<tool_response>`` is a stop sequence. When the tool choice is ``required`` or a tool's
name, the prompt is continued with ``<tool_call>`` and a grammar built from the tools' JSON Schemas constrains
the output, so even a tiny model writes a well-formed call.

The prompt's prefix (the system message and the tools: what the template makes the same whatever the user
says) is kept across processes in a :class:`~.prefix_cache.PrefixCache`: when the model does not hold it
already, its saved state is loaded, or else it is evaluated on its own and saved before the rest of the prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Final

from hive_core import ChatError
from hive_core import FinishUpdate
from hive_core import ToolSpec
from hive_core import UsageUpdate
from hive_core.chat import FinishReason

from .bridge import Done
from .bridge import Emit
from .grammar import call_grammar
from .models import RUNNING
from .models import LoadedModel
from .models import import_llama
from .prefix_cache import MIN_PREFIX_TOKENS
from .prefix_cache import PrefixCache
from .tool_calls import TOOL_CALL_OPEN
from .tool_calls import TOOL_RESPONSE_OPEN
from .tool_calls import ToolCallParser

__all__ = ["SAMPLING", "TEMPERATURE", "Job", "generate"]

TEMPERATURE: Final = 0.2
"""The sampling temperature when a request sets none (llama-cpp-python's chat-completion default)."""
SAMPLING: Final[dict[str, float | int]] = {"top_p": 0.95, "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1}
"""llama-cpp-python's other chat-completion defaults, which hive samples with."""


@dataclass(eq=False)
class Job:
    """One generation request, as the worker thread sees it."""

    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    choice: str
    max_tokens: int | None
    temperature: float
    prefix_cache: PrefixCache | None = None
    """Where the prefix's state is saved and looked for (``None``: only in memory)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    generated: int = 0


@dataclass(frozen=True)
class _Prompt:
    tokens: list[int]
    stop: list[str]
    grammar: Any
    prefix: int
    """How many leading tokens are the same whatever the user says: the system message and the tools."""


def _template(model: LoadedModel, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> Any:
    kwargs: dict[str, Any] = {"messages": messages}
    if tools and model.native_tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in tools
        ]
    return model.formatter(**kwargs)


def _tokenize(model: LoadedModel, rendered: Any, suffix: str = "") -> list[int]:
    text: str = rendered.prompt + suffix
    return model.llama.tokenize(text.encode("utf-8"), add_bos=not rendered.added_special, special=True)


def _render(model: LoadedModel, job: Job) -> _Prompt:
    """The prompt's tokens, the stop sequences, the grammar and the length of the shared prefix for ``job``."""
    from llama_cpp import llama_grammar

    tools = job.tools if job.choice != "none" else []
    result = _template(model, job.messages, tools)
    stop: list[str] = (
        [] if result.stop is None else [result.stop] if isinstance(result.stop, str) else result.stop
    )
    grammar = None
    suffix = ""
    if tools:
        stop.append(TOOL_RESPONSE_OPEN)
        if job.choice != "auto":
            suffix = TOOL_CALL_OPEN
            grammar = llama_grammar.LlamaGrammar.from_string(call_grammar(tools, job.choice), verbose=False)
    tokens = _tokenize(model, result, suffix)
    prefix = _prefix_length(model, job, tools, tokens) if job.prefix_cache is not None else 0
    return _Prompt(tokens, stop, grammar, prefix)


def _prefix_length(model: LoadedModel, job: Job, tools: list[ToolSpec], tokens: list[int]) -> int:
    """The tokens ``tokens`` shares with any conversation of the same system message and tools: what the
    template makes of the leading system message followed by two different user messages have in common."""
    system = [m for m in job.messages[:1] if m["role"] == "system"]
    one, two = (
        _tokenize(model, _template(model, [*system, {"role": "user", "content": text}], tools))
        for text in ("1", "2")
    )
    return min(_common_prefix(one, two), _common_prefix(one, tokens), _common_prefix(two, tokens))


def _reuse(model: LoadedModel, job: Job, prompt: _Prompt) -> int:
    """Put as much of the prompt as can be had without evaluating it into the model's KV cache: what the
    previous request left there, or the prefix's saved state. The prefix is saved when it had to be
    evaluated. The tokens reused."""
    llama, tokens = model.llama, prompt.tokens
    reused = _common_prefix(llama.input_ids[: llama.n_tokens].tolist(), tokens)
    cache, prefix = job.prefix_cache, prompt.prefix
    if cache is not None and prefix >= MIN_PREFIX_TOKENS and reused < prefix and prefix < len(tokens):
        if cache.restore(llama, model.path, tokens[:prefix]):
            return prefix
        reused = min(reused, llama.n_tokens)  # a failed restore emptied the model
        llama.n_tokens = reused
        llama.eval(tokens[reused:prefix])
        cache.save(llama, model.path, tokens[:prefix])
    return reused


def generate(model: LoadedModel, job: Job, emit: Emit) -> None:
    """The worker thread: wait for the model, render, generate, and hand every update to ``emit``."""
    llama_cpp = import_llama()
    RUNNING.add(job.cancelled)
    while not model.lock.acquire(timeout=0.05):
        if job.cancelled.is_set():
            RUNNING.discard(job.cancelled)
            emit(Done())
            return
    try:
        llama = model.llama
        prompt = _render(model, job)
        tokens, stop, grammar = prompt.tokens, prompt.stop, prompt.grammar
        if len(tokens) >= model.context_length:
            raise ChatError(
                f"the prompt has {len(tokens)} tokens, more than the local model's context of "
                f"{model.context_length}; set lmsupply.maxContextLength higher or shorten the conversation",
                code="context_limit",
            )
        cached = 0
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
            cached = max(0, min(_reuse(model, job, prompt), len(tokens) - 1))
            chunks = llama.create_completion(
                prompt=tokens,
                max_tokens=job.max_tokens or -1,
                temperature=job.temperature,
                stop=stop,
                stream=True,
                grammar=grammar,
                stopping_criteria=llama_cpp.StoppingCriteriaList([stopping]),
                **SAMPLING,
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
            emit(Done())
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
        emit(Done())
    except BaseException as exc:
        emit(Done(exc))
    finally:
        model.lock.release()
        RUNNING.discard(job.cancelled)


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count
