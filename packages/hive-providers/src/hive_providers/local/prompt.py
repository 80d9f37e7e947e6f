"""The conversation as a local model's chat template sees it, tools included.

When the model's template is tool-aware in the Hermes style (it renders ``tools`` and speaks ``<tool_call>``,
as Qwen 2.5/3, Hermes and SmolLM3 do), the tools are handed to the template: the model's native
function-calling format. Otherwise (SmolLM2's template knows nothing of tools) the prompted fallback writes the
tool list and the call format into the system message. Earlier calls and results go back in the same format:
calls inside the assistant's text, results as ``<tool_response>`` blocks (in ``tool`` messages for a
tool-aware template, in a user message otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from typing import cast

import msgspec

from hive_core import ChatOptions
from hive_core import Message
from hive_core import TextPart
from hive_core import ToolCallPart
from hive_core import ToolResultPart
from hive_core import ToolSpec
from hive_core.chat import RequiredTool

from .tool_calls import TOOL_CALL_CLOSE
from .tool_calls import TOOL_CALL_OPEN
from .tool_calls import TOOL_RESPONSE_OPEN

__all__ = ["choice_name", "is_tool_aware", "template_messages", "tool_prompt"]


def is_tool_aware(template: str) -> bool:
    """Whether a chat template takes ``tools`` and speaks the ``<tool_call>`` format itself (Hermes style)."""
    return TOOL_CALL_OPEN in template and re.search(r"\btools\b", template) is not None


def tool_prompt(tools: Sequence[ToolSpec], choice: str) -> str:
    """The system text of the prompted fallback: the tools, and how to call them.

    Each tool is one line, its signature and the first sentence of its description
    (``- read_file(path: string, offset?: integer): Read a text file.``): the models without native tool
    calling are small, and a JSON Schema per tool cost them hundreds of tokens they read slowly and poorly.
    """
    lines = [
        "You can call tools. Available tools:",
        *(f"- {_signature(spec)}: {_first_sentence(spec.description)}" for spec in tools),
        "",
        "To call a tool, write exactly this and nothing else, one block per call:",
        f'{TOOL_CALL_OPEN}{{"name": "<tool name>", "arguments": {{<arguments as JSON>}}}}{TOOL_CALL_CLOSE}',
        f"The results come back in {TOOL_RESPONSE_OPEN} blocks.",
    ]
    if choice == "auto":
        lines.append("When no tool is needed, answer directly without a tool call.")
    else:
        lines.append("Call a tool now.")
    return "\n".join(lines)


def _signature(spec: ToolSpec) -> str:
    properties = spec.parameters.get("properties")
    required = {str(name) for name in cast("list[object]", spec.parameters.get("required") or [])}
    if not isinstance(properties, dict):
        return f"{spec.name}()"
    arguments = [
        f"{name}{'' if name in required else '?'}: {_type_of(schema)}"
        for name, schema in cast("dict[str, object]", properties).items()
    ]
    return f"{spec.name}({', '.join(arguments)})"


def _type_of(schema: object) -> str:
    if not isinstance(schema, dict):
        return "any"
    fields = cast("dict[str, object]", schema)
    enum, kind = fields.get("enum"), fields.get("type")
    if isinstance(enum, list) and enum:
        return " | ".join(msgspec.json.encode(value).decode() for value in cast("list[object]", enum))
    if kind == "array":
        return f"list of {_type_of(fields.get('items'))}"
    if isinstance(kind, list):
        return " | ".join(str(item) for item in cast("list[object]", kind) if item != "null") or "any"
    return kind if isinstance(kind, str) else "any"


def _first_sentence(text: str) -> str:
    first = text.strip().split("\n\n", 1)[0].replace("\n", " ")
    head, dot, _ = first.partition(". ")
    return head + "." if dot else first


def _call_text(call: ToolCallPart) -> str:
    arguments: object = call.arguments if call.arguments is not None else call.arguments_text
    body = msgspec.json.encode({"name": call.name, "arguments": arguments}).decode()
    return f"{TOOL_CALL_OPEN}{body}{TOOL_CALL_CLOSE}"


def _result_text(result: ToolResultPart) -> str:
    name, content = (msgspec.json.encode(text).decode() for text in (result.name, result.content))
    return f'{TOOL_RESPONSE_OPEN}\n{{"name": {name}, "content": {content}}}\n</tool_response>'


def template_messages(
    messages: Sequence[Message], options: ChatOptions, *, native: bool, offered: bool
) -> list[dict[str, Any]]:
    """hive's conversation as chat-template messages: one leading system message (instructions, the system
    messages, and the prompted tool list), tool calls and results in the ``<tool_call>`` format."""
    system = [options.instructions] if options.instructions else []
    system += [m.text for m in messages if m.role == "system" and m.text]
    if offered and not native:
        system.append(tool_prompt(options.tools, choice_name(options)))
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


def choice_name(options: ChatOptions) -> str:
    """``auto``, ``none``, ``required`` or the name of the required tool (``none`` when no tool is offered)."""
    if not options.tools:
        return "none"
    choice = options.tool_choice
    return choice.name if isinstance(choice, RequiredTool) else choice
