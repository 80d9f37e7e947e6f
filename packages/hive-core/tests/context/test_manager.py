"""ContextManager.prepare end to end over a ScriptedChatClient: what is sent, the summary request, the marker."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Sequence

import anyio
import pytest

from hive_core.budget import TokenBudgetChatClient
from hive_core.chat import Capabilities
from hive_core.chat import ChatClient
from hive_core.chat import ChatOptions
from hive_core.chat import ChatUpdate
from hive_core.chat import FinishUpdate
from hive_core.chat import TextUpdate
from hive_core.chat import ToolSpec
from hive_core.context import CompactionReport
from hive_core.context import CompactionSettings
from hive_core.context import ContextManager
from hive_core.context import ContextWindow
from hive_core.context import PreparedRequest
from hive_core.context import budgets_for
from hive_core.context import estimate_tokens
from hive_core.failures import ChatError
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import system
from hive_core.messages import user
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import fail
from hive_core.testing import reply

pytestmark = pytest.mark.anyio

WAIT = 10
WINDOW = 8192
OPTIONS = ChatOptions()


def client(*rounds: ScriptedRound, window: int | None = WINDOW) -> ScriptedChatClient:
    return ScriptedChatClient(list(rounds), capabilities=Capabilities(context_window=window))


def exchange(i: int, result: str) -> list[Message]:
    return [
        user(f"question {i}: " + "q" * 200),
        Message("assistant", [ToolCallPart(f"c{i}", "shell", f'{{"command":"run {i}"}}')]),
        Message("tool", [ToolResultPart(f"c{i}", "shell", result)]),
        Message("assistant", [TextPart(f"answer {i}: " + "a" * 300)]),
    ]


def history(turns: int, result: str = "out\n" * 100) -> list[Message]:
    messages = [system("You are hive.")]
    for i in range(turns):
        messages += exchange(i, result)
    return messages


def paired(messages: Sequence[Message]) -> bool:
    called = [c.id for m in messages for c in m.tool_calls]
    answered = [r.call_id for m in messages for r in m.tool_results]
    return called == answered


async def prepare(
    manager: ContextManager, messages: Sequence[Message], chat: ChatClient, *, force: bool = False
) -> PreparedRequest:
    with anyio.fail_after(WAIT):
        return await manager.prepare(messages, client=chat, options=OPTIONS, force=force)


async def test_a_short_conversation_is_sent_as_it_is() -> None:
    messages = history(2)
    chat = client()

    prepared = await prepare(ContextManager(settings=CompactionSettings(goal_reminder=False)), messages, chat)

    assert prepared.messages == messages
    assert prepared.compaction is None
    assert prepared.window == ContextWindow(WINDOW, "catalog")
    assert prepared.estimated_tokens == estimate_tokens(messages)
    assert chat.requests == []


async def test_long_results_are_cut_in_every_turn_and_the_conversation_is_kept() -> None:
    big = "\n".join(f"line {i}" for i in range(8000))
    messages = [user("read it"), *exchange(0, big)[1:3]]
    before = list(messages)

    prepared = await prepare(ContextManager(), messages, client(window=1_000_000))

    sent = prepared.messages[2].tool_results[0].content
    assert "\n\n[... 7,930 lines omitted" in sent
    assert sent.startswith("line 0\nline 1\n")
    assert sent.endswith("line 7999")
    assert messages == before
    assert messages[2].tool_results[0].content == big


async def test_compaction_asks_the_model_for_a_summary_and_sends_it() -> None:
    messages = history(40)  # about 14,000 tokens, 7,500 once old results are masked: over the trigger
    chat = client(reply("The user ran 40 commands; all succeeded."))

    prepared = await prepare(ContextManager(), messages, chat)

    # The summary request: no tools, headroom reserved, the pruned history as text, inside the window.
    assert len(chat.requests) == 1
    sent, options = chat.requests[0]
    assert options.tools == []
    assert options.max_output_tokens is not None
    assert options.max_output_tokens > 0
    assert sent[0].role == "system"
    assert f"under {options.max_output_tokens - 4} tokens" in sent[0].text
    assert "assistant called shell" in sent[1].text
    assert "assistant: answer 0:" in sent[1].text
    assert estimate_tokens(sent) + options.max_output_tokens <= WINDOW
    # What is sent: the system message, the summary, then the rest in order.
    assert prepared.messages[0] == messages[0]
    assert prepared.messages[1] == system(
        "[Previous conversation summary]: The user ran 40 commands; all succeeded."
    )
    assert prepared.messages[-1] == messages[-1]
    assert paired(prepared.messages)
    report = prepared.compaction
    assert report is not None
    assert report.summarized
    assert report.tokens_before > WINDOW - budgets_for(CompactionSettings(), WINDOW).headroom
    assert (
        prepared.estimated_tokens == report.tokens_after <= budgets_for(CompactionSettings(), WINDOW).target
    )
    assert report.describe() == (
        f"compacted {report.messages_before - report.messages_after} messages into a summary, "
        f"{report.tokens_before:,} → {report.tokens_after:,} tokens"
    )


async def test_the_summary_is_reused_while_the_conversation_grows() -> None:
    messages = history(40)
    chat = client(reply("SUMMARY"))
    manager = ContextManager()
    first = await prepare(manager, messages, chat)

    grown = [*messages, user("and now?")]
    second = await prepare(manager, grown, chat)

    assert len(chat.requests) == 1  # no second summary
    assert second.compaction is None
    assert second.messages[1].text == "[Previous conversation summary]: SUMMARY"
    assert second.messages[-1] == user("and now?")
    assert len(second.messages) == len(first.messages) + 1
    assert manager.last is second


async def test_a_failed_summary_leaves_the_marker() -> None:
    messages = history(40)
    chat = client(fail(ChatError("server down")))

    prepared = await prepare(ContextManager(), messages, chat)

    report = prepared.compaction
    assert report is not None
    assert not report.summarized
    pruned = report.messages_before - report.messages_after
    assert prepared.messages[1] == system(f"[{pruned} earlier messages omitted]")
    assert "(no summary: omitted)" in report.describe()
    assert paired(prepared.messages)


async def test_a_summary_refused_by_the_budget_backstop_leaves_the_marker() -> None:
    messages = history(40)
    inner = client(reply("never sent"), window=300)

    prepared = await prepare(ContextManager(window=WINDOW), messages, TokenBudgetChatClient(inner))

    assert prepared.compaction is not None
    assert not prepared.compaction.summarized
    assert inner.requests == []


async def test_force_compacts_below_the_trigger() -> None:
    messages = history(6)  # about 2,000 tokens: no trigger in 8k
    chat = client(reply("S"), reply("unused"))
    manager = ContextManager()
    assert (await prepare(manager, messages, chat)).compaction is None

    forced = await prepare(manager, messages, chat, force=True)

    assert forced.compaction is not None
    assert forced.messages[1].text == "[Previous conversation summary]: S"
    assert len(forced.messages) < len(messages)
    assert forced.messages[-4:] == messages[-4:]  # the protected tail


async def test_the_provider_figure_calibrates_the_next_estimate() -> None:
    messages = history(2)
    chat = client()
    # Without the reminder, which restates the latest user message and so changes with ``next``.
    manager = ContextManager(settings=CompactionSettings(goal_reminder=False))
    sent = await prepare(manager, messages, chat)

    manager.observe_usage(sent.estimated_tokens + 500, sent)
    added = [Message("assistant", [TextPart("x" * 400)]), user("next")]
    following = await prepare(manager, [*messages, *added], chat)

    # What the provider reported, plus the estimate of what was added since.
    assert following.estimated_tokens == sent.estimated_tokens + 500 + (104 + 5)


async def test_the_calibrated_figure_triggers_compaction() -> None:
    messages = history(18)
    chat = client(reply("S"))
    manager = ContextManager()
    sent = await prepare(manager, messages, chat)
    assert sent.compaction is None
    assert sent.estimated_tokens < WINDOW * 0.75  # by the estimate alone, nothing would be compacted

    # The server counts 3,000 more (tool definitions, a template): the request is inside the trigger's headroom.
    manager.observe_usage(sent.estimated_tokens + 3000, sent)
    following = await prepare(manager, [*messages, user("next")], chat)

    assert following.compaction is not None
    assert following.compaction.summarized
    assert len(chat.requests) == 1
    # The 3,000 count as fixed: the request lands under the target all the same.
    assert following.estimated_tokens <= budgets_for(CompactionSettings(), WINDOW).target


async def test_a_usage_figure_far_below_the_estimate_is_believed_only_halfway() -> None:
    messages = [*history(10), user("next")]
    faked, unobserved = ContextManager(), ContextManager()
    sent = await prepare(faked, messages[:-1], client())
    await prepare(unobserved, messages[:-1], client())
    faked.observe_usage(1, sent)  # a server that fakes its usage
    following = await prepare(faked, messages, client())
    baseline = await prepare(unobserved, messages, client())
    # The figure takes half of the estimate off, no more.
    assert following.estimated_tokens == baseline.estimated_tokens - (
        sent.estimated_tokens - sent.estimated_tokens // 2
    )


async def test_tool_definitions_count() -> None:
    messages = history(1)
    tools = [ToolSpec("shell", "d" * 400, {"type": "object"})]
    manager = ContextManager()
    with anyio.fail_after(WAIT):
        prepared = await manager.prepare(messages, client=client(), options=ChatOptions(tools=tools))

    assert prepared.estimated_tokens == estimate_tokens(messages) + (5 + 400 + 17 + 3) // 4


async def test_the_goal_reminder_appears_in_long_conversations() -> None:
    goal = "g" * 600
    # The latest user message (not the first) followed by six more: a long turn on the current task.
    rounds = [m for i in range(3) for m in exchange(i, "out")[1:3]]  # three tool calls and their results
    messages = [system("s"), user("an earlier task"), *history(1)[2:], user(goal), *rounds]
    prepared = await prepare(ContextManager(), messages, client())

    assert prepared.messages[1] == system("[REMINDER] Current goal: " + "g" * 497 + "...")
    assert prepared.messages[2:] == messages[1:]
    # Five messages after it: no reminder yet, so a short turn keeps the prompt's start as it was.
    short = await prepare(ContextManager(), messages[:-1], client())
    assert short.messages == messages[:-1]


async def test_another_conversation_starts_over() -> None:
    manager = ContextManager(settings=CompactionSettings(goal_reminder=False))
    chat = client()
    await prepare(manager, history(2), chat)

    other = [user("a different conversation")]
    prepared = await prepare(manager, other, chat)

    assert prepared.messages == other


async def test_the_window_comes_from_the_client_then_the_settings_then_the_default() -> None:
    chat = client(window=None)
    assert ContextManager().window(chat) == ContextWindow(8192, "default")
    assert ContextManager(CompactionSettings(max_context_tokens=65_536)).window(chat) == ContextWindow(
        65_536, "configured"
    )
    assert ContextManager(window=1000).window(client()) == ContextWindow(1000, "configured")
    assert ContextWindow(131_072, "catalog").describe() == "131,072 tokens (from the catalog)"


async def test_masking_follows_the_settings() -> None:
    messages = history(5)
    on = await prepare(ContextManager(), messages, client(window=1_000_000))
    off = await prepare(
        ContextManager(CompactionSettings(enable_observation_masking=False)),
        messages,
        client(window=1_000_000),
    )

    masked = [m for m in on.messages if m.role == "tool" and m.tool_results[0].content.startswith("[Masked:")]
    assert len(masked) == 2  # turns 0 and 1; the last three are protected
    assert masked[0].tool_results[0].content == (
        '[Masked: shell result, 400 chars, ~101 lines] Call shell with {"command":"run 0"} again to see it.'
    )
    assert [m for m in off.messages if m.role == "tool"] == [m for m in messages if m.role == "tool"]


async def test_the_summary_request_fits_a_small_window_and_its_answer_is_capped() -> None:
    messages = history(40)
    chat = client(reply("word " * 2000), window=2048)

    prepared = await prepare(ContextManager(), messages, chat)

    sent, options = chat.requests[0]
    assert options.max_output_tokens is not None
    assert estimate_tokens(sent) + options.max_output_tokens <= 2048
    assert "characters omitted ...]" in sent[1].text  # the pruned history was cut to fit
    summary = prepared.messages[1]
    assert summary.text.startswith("[Previous conversation summary]: word word")
    assert estimate_tokens([summary]) - 3 <= options.max_output_tokens
    assert prepared.estimated_tokens <= budgets_for(CompactionSettings(), 2048).target


class Summarizer:
    """Answers each summary request with a numbered summary and records what it was sent."""

    def __init__(self, window: int) -> None:
        self.capabilities = Capabilities(context_window=window)
        self.requests: list[list[Message]] = []

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        self.requests.append(list(messages))
        yield TextUpdate(f"summary {len(self.requests)}")
        yield FinishUpdate("stop")


async def test_a_growing_session_stays_inside_the_window_on_every_request() -> None:
    model = Summarizer(4096)
    manager = ContextManager()
    conversation = [system("You are hive.")]
    budget = int(4096 * 0.8)  # the token-budget backstop's limit
    for turn in range(60):
        conversation += exchange(turn, "out\n" * 300)
        prepared = await prepare(manager, conversation, model)

        assert prepared.estimated_tokens <= budget
        assert estimate_tokens(prepared.messages) <= budget
        assert paired(prepared.messages)
        assert prepared.messages[-4:] == conversation[-4:]  # the protected tail, whole

    assert len(model.requests) >= 2
    # A later summary is written over the earlier one.
    assert "[Summary of what came before]\nsummary 1" in model.requests[1][1].text
    assert manager.last is not None
    assert manager.last.messages[1].text == f"[Previous conversation summary]: summary {len(model.requests)}"
    assert len(conversation) == 241  # the conversation itself keeps everything


def test_the_report_reads_as_english() -> None:
    one = CompactionReport(
        messages_before=5, messages_after=4, tokens_before=1200, tokens_after=900, summarized=True
    )
    many = CompactionReport(
        messages_before=150, messages_after=10, tokens_before=61_200, tokens_after=38_900, summarized=False
    )
    assert one.describe() == "compacted 1 message into a summary, 1,200 → 900 tokens"
    assert many.describe() == "compacted 140 messages (no summary: omitted), 61,200 → 38,900 tokens"


@pytest.mark.parametrize("compact_on_overflow", [True, False])
async def test_a_window_nobody_knows_is_not_compacted_against_with_compact_on_overflow(
    compact_on_overflow: bool,
) -> None:
    messages = history(60)  # far over the 8,192-token default
    settings = CompactionSettings(compact_on_overflow=compact_on_overflow, goal_reminder=False)
    chat = client(reply("S"), window=None)
    prepared = await prepare(ContextManager(settings), messages, chat)

    assert prepared.window.source == "default"
    assert (prepared.compaction is None) is compact_on_overflow
    # The server's overflow is what compacts then: a forced compaction still works on the guess.
    forced = await prepare(ContextManager(settings), messages, chat, force=True)
    assert forced.compaction is not None
