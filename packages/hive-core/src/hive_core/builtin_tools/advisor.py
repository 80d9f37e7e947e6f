"""The advisor: a tool with no arguments that shows the conversation so far to a stronger model and returns its
review.

The working model calls it before committing to an approach, when it is stuck, and before it declares a task
done. The advisor sees a plain transcript, not the messages themselves: a history of tool calls sent with no tool
definitions is refused by some providers, and the advisor is never offered tools. The transcript labels each
message "Agent instructions", "User", "Agent" or "Tool results", writes each call as ``-> calls name({json})`` and
each result as ``<- text`` cut to :data:`MAX_RESULT_CHARS`, and leaves reasoning out: the advisor reviews what the
agent did and said.

A session consults it at most ``max_calls`` times. The count is read from the conversation (the consultations
whose results it holds, and the advisor calls before this one in the same message), so a resumed session keeps
its count. The advisor's tokens are added to the turn's usage (:attr:`~hive_core.tools.ToolOutcome.usage`).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Final

import anyio
import msgspec

from hive_core.chat import AsyncClosable
from hive_core.chat import ChatClient
from hive_core.chat import ChatOptions
from hive_core.chat import TextUpdate
from hive_core.chat import UsageUpdate
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import user
from hive_core.tools import Tool
from hive_core.tools import ToolContext
from hive_core.tools import ToolOutcome

__all__ = [
    "ADVISOR_DESCRIPTION",
    "ADVISOR_TOOL_NAME",
    "DEFAULT_MAX_CALLS",
    "MAX_RESULT_CHARS",
    "NO_ADVICE_TEXT",
    "REVIEWER_INSTRUCTIONS",
    "advisor_tool",
    "limit_text",
    "render_transcript",
]

ADVISOR_TOOL_NAME: Final = "advisor"
"""The tool's name (the default rules allow it, as a read-only tool)."""

DEFAULT_MAX_CALLS: Final = 5
"""Consultations per session at most, unless configured (``advisor.maxCalls``)."""

MAX_RESULT_CHARS: Final = 2_000
"""Characters of each tool result the advisor is shown; the rest is named by its length."""

ADVISOR_DESCRIPTION: Final = (
    "Ask a stronger reviewer model for advice on the task so far. It takes no arguments: it reads the whole "
    "conversation, your tool calls and their results included. Consult it before you commit to an approach on a "
    "task that is not trivial, when you are stuck or the results do not add up, and before you say the task is "
    "done; take its advice seriously."
)
"""What the working model reads about the tool."""

REVIEWER_INSTRUCTIONS: Final = (
    "You advise an AI agent that is in the middle of a task. You are shown its conversation: what the user asked, "
    "what the agent said, the tools it called and what they returned. Review it as an experienced colleague "
    "would: say whether the approach holds up; name mistakes, assumptions nobody checked and requirements that "
    "were missed; and give the concrete next step you recommend. Keep it short and specific, a few sentences or a "
    "short list. Do not redo the work, and do not repeat what the agent already knows."
)
"""The advisor model's system prompt."""

NO_ADVICE_TEXT: Final = "The advisor returned no advice. Proceed on your own judgment."
"""The result when the advisor answers with no text."""


def limit_text(max_calls: int) -> str:
    """The result of a consultation past the session's limit."""
    return f"The advisor has already been consulted {max_calls} times in this session. Proceed on your own judgment."


_ROLE_LABELS: Final = {
    "system": "Agent instructions",
    "user": "User",
    "assistant": "Agent",
    "tool": "Tool results",
}


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} ... [{len(text) - limit} more characters cut]"


def render_transcript(
    conversation: Sequence[Message],
    *,
    instructions: str | None = None,
    max_result_chars: int = MAX_RESULT_CHARS,
) -> str:
    """The conversation as the advisor reads it: ``instructions`` (the agent's system text) first, then each
    message under its role's label, calls as ``-> calls name({json})``, results as ``<- text`` cut to
    ``max_result_chars``; reasoning is left out, and so is a message with nothing else."""
    blocks = ["Here is the agent's conversation so far."]
    if instructions:
        blocks.append(f"[Agent instructions]\n{instructions}")
    for message in conversation:
        lines: list[str] = []
        for part in message.parts:
            if isinstance(part, TextPart):
                if part.text:
                    lines.append(part.text)
            elif isinstance(part, ToolCallPart):
                arguments = (
                    msgspec.json.encode(part.arguments).decode()
                    if part.arguments is not None
                    else part.arguments_text
                )
                lines.append(f"-> calls {part.name}({arguments})")
            elif isinstance(part, ToolResultPart):
                lines.append(f"<- {_cut(part.content or '(no result)', max_result_chars)}")
        if lines:
            blocks.append(f"[{_ROLE_LABELS[message.role]}]\n" + "\n".join(lines))
    blocks.append("Review the work so far and advise the agent on what to do next.")
    return "\n\n".join(blocks)


def _is_consultation(result: ToolResultPart) -> bool:
    return result.name == ADVISOR_TOOL_NAME and not result.is_error and result.refusal is None


def _consultations_before(conversation: Sequence[Message], call_id: str) -> int:
    """Consultations the conversation holds the results of, plus the advisor calls before ``call_id`` in the
    message that asks for it (they run in the same round and have no result yet)."""
    done = sum(_is_consultation(result) for message in conversation for result in message.tool_results)
    for message in reversed(conversation):
        if message.role != "assistant":
            continue
        names = [call.id for call in message.tool_calls if call.name == ADVISOR_TOOL_NAME]
        if call_id in names:
            done += names.index(call_id)
        break
    return done


def advisor_tool(
    connect: Callable[[], ChatClient],
    *,
    max_calls: int = DEFAULT_MAX_CALLS,
    model: str | None = None,
    max_output_tokens: int | None = None,
) -> Tool:
    """The ``advisor`` tool consulting the model ``connect`` gives a client for (opened for each consultation
    and closed after it, so nothing outlives a session): at most ``max_calls`` consultations per session,
    ``model`` overriding the client's, ``max_output_tokens`` capping the advice. Read-only: planning mode runs
    it. Raises ``ValueError`` when ``max_calls`` is below 1."""
    if max_calls < 1:
        raise ValueError(f"max_calls must be at least 1, got {max_calls}")

    async def advisor(context: ToolContext) -> ToolOutcome:
        if _consultations_before(context.conversation, context.call_id) >= max_calls:
            return ToolOutcome(content=limit_text(max_calls), success=False)
        request = [user(render_transcript(context.conversation, instructions=context.instructions))]
        options = ChatOptions(
            tools=[],
            tool_choice="none",
            instructions=REVIEWER_INSTRUCTIONS,
            max_output_tokens=max_output_tokens,
            model=model,
        )
        advice: list[str] = []
        spent = UsageUpdate()
        client = connect()
        try:
            async for update in client.stream(request, options):
                if isinstance(update, TextUpdate):
                    advice.append(update.text)
                elif isinstance(update, UsageUpdate):
                    spent = UsageUpdate(
                        spent.input_tokens + update.input_tokens,
                        spent.output_tokens + update.output_tokens,
                        spent.cached_input_tokens + update.cached_input_tokens,
                    )
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            text = f"The advisor could not be consulted: {type(exc).__name__}: {exc}"
            return ToolOutcome(content=text, success=False, error=text)
        finally:
            if isinstance(client, AsyncClosable):
                with anyio.CancelScope(shield=True):
                    await client.aclose()
        text = "".join(advice).strip()
        return ToolOutcome(content=text or NO_ADVICE_TEXT, usage=spent)

    return Tool(advisor, name=ADVISOR_TOOL_NAME, description=ADVISOR_DESCRIPTION, read_only=True)
