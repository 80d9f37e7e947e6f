"""The context manager: what the loop calls before every model request."""

from __future__ import annotations

from collections.abc import Sequence

from hive_core.chat import ChatClient
from hive_core.chat import ChatOptions
from hive_core.messages import Message
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import system

from .anchor import AnchorState
from .compaction import MIN_SUMMARY_TOKENS
from .compaction import budgets_for
from .compaction import plan_compaction
from .compaction import should_compact
from .grouping import drop_unpaired
from .masking import mask_boundary
from .masking import mask_message
from .reminder import REMINDER_AFTER
from .reminder import goal_reminder
from .report import CompactionReport
from .report import PreparedRequest
from .settings import CompactionSettings
from .summary import omitted_marker
from .summary import summarize
from .summary import summary_message
from .tokens import CONVERSATION_OVERHEAD
from .tokens import MESSAGE_OVERHEAD
from .tokens import chars_to_tokens
from .tokens import estimate_message_tokens
from .tokens import estimate_tool_tokens
from .truncation import truncate_tool_result
from .window import ContextWindow
from .window import resolve_window

__all__ = ["CompactionReport", "ContextManager", "PreparedRequest"]


class ContextManager:
    """Keeps each request inside the model's context window; one per conversation.

    :meth:`prepare` builds what to send: tool results cut to their head and tail, old ones masked, and — when
    the trigger fires — older history compacted into a summary the model writes (or, when that fails, the
    ``[N earlier messages omitted]`` marker), with the goal reminder once the conversation is long; with
    ``use_anchored_compaction``, an anchored state block (goal, files, errors, decisions) merged at every
    compaction goes beside the summary (see :mod:`hive_core.context.anchor`). The
    conversation passed in is never modified. The work is cached per message: the conversation only grows by
    appending, so each request costs the new messages plus one pass to assemble the list. A conversation that
    is not an extension of the last one starts the cache over.
    """

    def __init__(self, settings: CompactionSettings | None = None, *, window: int | None = None) -> None:
        self.settings = settings or CompactionSettings()
        """The ``compaction`` settings."""
        self.window_override = window
        """A fixed window (tests, embedders that know better), else resolved from the client per request."""
        self._last: PreparedRequest | None = None
        self._last_raw = 0
        self._offset: int | None = None
        self._reset()

    def _reset(self) -> None:
        self._source: list[Message] = []
        self._views: list[Message] = []
        self._tokens: list[int] = []
        self._dropped: list[bool] = []
        self._body_from = 0
        self._live = 0
        self._masked_upto = 0
        self._leading = 0
        self._calls: dict[str, ToolCallPart] = {}
        self._goal: str | None = None
        self._since_goal = 0
        self._summary: Message | None = None
        self._summary_text: str | None = None
        self._anchor = AnchorState()
        self._anchor_message: Message | None = None
        self._omitted = 0
        self._offset = None

    # -- the request ------------------------------------------------------------------------------------

    async def prepare(
        self,
        conversation: Sequence[Message],
        *,
        client: ChatClient,
        options: ChatOptions,
        force: bool = False,
    ) -> PreparedRequest:
        """The request to send for ``conversation``: reduced as configured, compacted when the trigger fires
        or ``force`` is set (``/compact``, the retry after an overflow)."""
        window = self.window(client)
        self._sync(conversation)
        fixed = self._fixed(options)
        raw = fixed + self._live
        report: CompactionReport | None = None
        budgets = budgets_for(self.settings, window.tokens)
        # With compactOnOverflow, a window nobody knows is not compacted against (the server says when it
        # overflows, and the loop then compacts with force).
        guessed = window.source == "default" and self.settings.compact_on_overflow
        if force or (not guessed and should_compact(self._calibrated(raw), budgets, self.settings)):
            report = await self._compact(client, options, window.tokens, fixed, force=force)
            raw = self._fixed(options) + self._live  # the summary is one of the fixed costs now
        prepared = PreparedRequest(self._assemble(), self._calibrated(raw), window, report)
        self._last, self._last_raw = prepared, raw
        return prepared

    def observe_usage(self, input_tokens: int, sent: PreparedRequest) -> None:
        """Record the provider's input tokens for the request built from ``sent``: later estimates are that
        figure plus the estimate of what changed since (the difference calibrates the estimator, tool
        definitions and chat templates included). A figure under half the estimate counts as half of it."""
        if input_tokens <= 0:
            return
        raw = (
            self._last_raw
            if sent is self._last
            else self._fixed(ChatOptions()) + sum(estimate_message_tokens(m) for m in sent.messages)
        )
        # A figure far below the estimate is more likely a server that fakes its usage than a tokenizer that
        # packs twice as many characters per token: believed only down to half the estimate, so compaction
        # never stops for want of believing the window is full. Above the estimate it is trusted whole.
        self._offset = max(input_tokens, raw // 2) - raw

    @property
    def last(self) -> PreparedRequest | None:
        """The last prepared request (for showing the window's use)."""
        return self._last

    def window(self, client: ChatClient) -> ContextWindow:
        """The window requests to ``client`` are prepared for."""
        if self.window_override:
            return ContextWindow(self.window_override, "configured")
        return resolve_window(client.capabilities, self.settings.max_context_tokens)

    # -- the cache --------------------------------------------------------------------------------------

    def _sync(self, conversation: Sequence[Message]) -> None:
        known = len(self._source)
        # Only appended to, as a rule: the ends of what is known tell a conversation replaced (restored, cleared)
        # without comparing every message, which would make each request cost more as the session grows.
        if len(conversation) < known or (
            known
            and (conversation[0] is not self._source[0] or conversation[known - 1] is not self._source[-1])
        ):
            self._reset()
            known = 0
        for message in conversation[known:]:
            self._ingest(message)
        if self.settings.enable_observation_masking:
            boundary = mask_boundary(
                self._source,
                protected_turns=self.settings.observation_masking_protected_turns,
                protected_rounds=self.settings.observation_masking_protected_rounds,
                protected_tokens=self.settings.observation_masking_protected_tokens,
            )
            for index in range(self._masked_upto, boundary):
                message = self._source[index]
                if message.role == "tool":
                    masked = mask_message(
                        message, self._calls, self.settings.observation_masking_min_result_length
                    )
                    if masked is not message:
                        self._set_view(index, self._truncated(masked))
            self._masked_upto = max(self._masked_upto, boundary)

    def _ingest(self, message: Message) -> None:
        index = len(self._source)
        self._source.append(message)
        if message.role == "system":
            if index == self._leading:
                self._leading += 1
        else:
            # The goal is the current task: the latest thing the user asked (a new turn's message, or one typed
            # while a turn runs), never the session's first message, which a later turn may have left behind.
            if message.role == "user" and message.text:
                self._goal = message.text
                self._since_goal = 0
            else:
                self._since_goal += 1
        if message.role == "assistant":
            for call in message.tool_calls:
                self._calls[call.id] = call
        view = self._truncated(message)
        tokens = estimate_message_tokens(view)
        self._views.append(view)
        self._tokens.append(tokens)
        self._dropped.append(False)
        self._live += tokens

    def _truncated(self, message: Message) -> Message:
        settings = self.settings
        if not settings.enable_tool_result_compaction or message.role != "tool":
            return message
        parts = list(message.parts)
        changed = False
        for index, part in enumerate(parts):
            if isinstance(part, ToolResultPart) and len(part.content) > settings.max_tool_result_chars:
                content = truncate_tool_result(
                    part.content,
                    settings.max_tool_result_chars,
                    settings.tool_result_keep_head_lines,
                    settings.tool_result_keep_tail_lines,
                )
                parts[index] = ToolResultPart(
                    part.call_id,
                    part.name,
                    content,
                    is_error=part.is_error,
                    refusal=part.refusal,
                    error=part.error,
                    images=part.images,
                )
                changed = True
        return Message(message.role, parts) if changed else message

    def _set_view(self, index: int, view: Message) -> None:
        tokens = estimate_message_tokens(view)
        if not self._dropped[index]:
            self._live += tokens - self._tokens[index]
        self._views[index] = view
        self._tokens[index] = tokens

    def _extras(self) -> list[Message]:
        extras: list[Message] = []
        if self._anchor_message is not None:
            extras.append(self._anchor_message)
        if self._summary is not None:
            extras.append(self._summary)
        if self.settings.goal_reminder and self._goal is not None and self._since_goal >= REMINDER_AFTER:
            extras.append(goal_reminder(self._goal))
        return extras

    def _fixed(self, options: ChatOptions) -> int:
        fixed = CONVERSATION_OVERHEAD + estimate_tool_tokens(options)
        if options.instructions:
            fixed += chars_to_tokens(len(options.instructions))
        return fixed + sum(estimate_message_tokens(m) for m in self._extras())

    def _calibrated(self, raw: int) -> int:
        return max(raw + (self._offset or 0), 0)

    def _body_start(self) -> int:
        """The first message after the leading ones that is not dropped. Compaction drops the oldest messages,
        and a dropped one never comes back, so this only moves forward: what is assembled and compacted is walked
        from here, never from the session's first message."""
        start = max(self._body_from, self._leading)
        while start < len(self._dropped) and self._dropped[start]:
            start += 1
        self._body_from = start
        return start

    def _assemble(self) -> list[Message]:
        views, dropped, leading = self._views, self._dropped, self._leading
        body = [views[i] for i in range(self._body_start(), len(views)) if not dropped[i]]
        messages = views[:leading] + self._extras() + body
        return drop_unpaired(messages) if self._summary is not None else messages

    # -- compaction -------------------------------------------------------------------------------------

    async def _compact(
        self, client: ChatClient, options: ChatOptions, window: int, fixed: int, *, force: bool
    ) -> CompactionReport | None:
        leading = [i for i in range(self._leading) if not self._dropped[i]]
        live = leading + [i for i in range(self._body_start(), len(self._views)) if not self._dropped[i]]
        messages = [self._views[i] for i in live]
        tokens = [self._tokens[i] for i in live]
        offset = self._offset or 0
        before = self._calibrated(fixed + self._live)
        budgets = budgets_for(self.settings, window)
        # The new summary and anchored state replace the old ones, so the old ones' cost is not fixed; the new
        # anchored state may take its whole limit.
        anchored = self.settings.use_anchored_compaction
        replaced = sum(
            estimate_message_tokens(m) for m in (self._summary, self._anchor_message) if m is not None
        )
        reserved = chars_to_tokens(self.settings.max_anchor_state_chars) + MESSAGE_OVERHEAD if anchored else 0
        plan = plan_compaction(
            messages, tokens, self.settings, budgets, fixed=fixed - replaced + reserved + offset, force=force
        )
        if plan is None:
            return None
        pruned = [messages[i] for group in plan.pruned for i in range(group.start, group.end)]
        text = None
        if plan.summary_tokens >= MIN_SUMMARY_TOKENS:
            text = await summarize(
                client,
                pruned,
                limit_tokens=plan.summary_tokens,
                window=window,
                options=options,
                previous=self._summary_text,
                anchored=anchored,
            )
        self._omitted += len(pruned)
        if text is not None:
            self._summary_text = text
            self._summary = summary_message(text)
        elif self._summary_text is not None:
            self._summary = summary_message(f"{self._summary_text}\n{omitted_marker(self._omitted)}")
        else:
            self._summary = system(omitted_marker(self._omitted))
        if anchored:
            self._anchor.update(pruned, goal=self._goal, summary=text)
            self._anchor_message = self._anchor.message(self.settings.max_anchor_state_chars)
        for group in plan.pruned:
            for i in range(group.start, group.end):
                index = live[i]
                self._dropped[index] = True
                self._live -= self._tokens[index]
        return CompactionReport(
            messages_before=len(messages),
            messages_after=len(messages) - len(pruned),
            tokens_before=before,
            tokens_after=self._calibrated(self._fixed(options) + self._live),
            summarized=text is not None,
        )
