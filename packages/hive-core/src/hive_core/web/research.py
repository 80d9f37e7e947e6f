"""``deep_research``: search, read the pages, take notes on each, search again where the notes fall short, and write
a report that cites its sources as ``[n]`` over a numbered list of their URLs.

The research model is a :class:`~hive_core.chat.ChatClient` of its own (the session's, unless configured), asked
without tools. Every page is read through the web rules, one hop at a time; a page they do not allow is skipped and
named in the report's notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Final

from hive_core.chat import ChatClient
from hive_core.chat import ChatOptions
from hive_core.chat import TextUpdate
from hive_core.chat import UsageUpdate
from hive_core.failures import ChatError
from hive_core.messages import system
from hive_core.messages import user

from ._http import PinnedFetcher
from ._http import WebError
from .pages import read_page
from .search import search
from .settings import Depth
from .settings import WebSettings

__all__ = ["DEPTHS", "Depth", "Research", "deep_research"]

DEPTHS: Final[dict[Depth, tuple[int, int]]] = {
    "quick": (1, 2),
    "standard": (2, 3),
    "comprehensive": (100, 4),
}
"""``depth`` → (search rounds, pages read per round); rounds never exceed ``deepResearch.maxIterations``."""

_PAGE_CHARACTERS: Final = 8_000
_DONE: Final = "DONE"

_NOTES_PROMPT: Final = (
    "You take research notes. From the source below, write the facts that bear on the research question as short "
    "bullet points, in your own words. Write NONE if nothing in it does."
)
_FOLLOW_UP_PROMPT: Final = (
    "You plan web research. Given the question and the notes so far, answer with the one web search query that "
    f"would best fill the biggest gap, and nothing else; answer {_DONE} if the notes already answer the question."
)
_REPORT_PROMPT: Final = (
    "You write research reports. Answer the question from the notes alone. After each fact, cite the source it "
    "came from as [n], using the numbers the notes give. Do not invent sources, and do not write a list of "
    "sources: it is added after your report."
)


@dataclass
class Research:
    """The outcome of one research: the report and what the research model used."""

    report: str
    """The report with its numbered source list."""
    sources: list[str] = field(default_factory=list[str])
    """The URLs read, source ``[n]`` at index ``n - 1``."""
    model_calls: int = 0
    """Requests made to the research model."""
    input_tokens: int = 0
    """Input tokens the research model reported."""
    output_tokens: int = 0
    """Output tokens the research model reported."""
    cached_input_tokens: int = 0
    """Input tokens the research model's provider served from its cache."""


async def deep_research(
    query: str,
    depth: Depth,
    *,
    settings: WebSettings,
    max_iterations: int,
    client: ChatClient,
    fetcher: PinnedFetcher,
) -> Research:
    """Research ``query`` as the module describes. Raises :class:`~hive_core.web.WebError` when the search fails
    or the research model does."""
    question = query.strip()
    if not question:
        raise WebError("the research question is empty")
    rounds, per_round = DEPTHS[depth]
    rounds = max(1, min(rounds, max_iterations))
    research = Research(report="")
    notes: list[tuple[int, str]] = []
    skipped: list[str] = []
    seen: set[str] = set()
    next_query = question
    for round_number in range(rounds):
        results = await search(settings, next_query, per_round * 2)
        read = 0
        for result in results:
            if read >= per_round:
                break
            if result.url in seen:
                continue
            seen.add(result.url)
            try:
                page = await read_page(fetcher, result.url, limit=_PAGE_CHARACTERS)
            except WebError as error:
                skipped.append(f"{result.url}: {error}")
                continue
            number = len(research.sources) + 1
            research.sources.append(page.url)
            note = await _ask(
                client,
                research,
                _NOTES_PROMPT,
                f"Research question: {question}\n\nSource [{number}] {page.url}:\n{page.text}",
            )
            notes.append((number, note))
            read += 1
        if round_number + 1 >= rounds:
            break
        follow_up = await _ask(
            client, research, _FOLLOW_UP_PROMPT, f"Question: {question}\n\nNotes:\n{_notes_text(notes)}"
        )
        follow_up = follow_up.strip().strip('"').strip()
        if not follow_up or follow_up.upper().startswith(_DONE):
            break
        next_query = follow_up.splitlines()[0]
    if not research.sources:
        lines = [f"No page could be read for {question!r}, so there is no report."]
        lines += [f"- {line}" for line in skipped]
        research.report = "\n".join(lines)
        return research
    body = await _ask(
        client,
        research,
        _REPORT_PROMPT,
        f"Question: {question}\n\nNotes:\n{_notes_text(notes)}",
    )
    lines = [body.strip(), "", "Sources:"]
    lines += [f"[{number}] {url}" for number, url in enumerate(research.sources, 1)]
    if skipped:
        lines += ["", "Not read:"] + [f"- {line}" for line in skipped]
    research.report = "\n".join(lines)
    return research


def _notes_text(notes: list[tuple[int, str]]) -> str:
    return "\n\n".join(f"[{number}]\n{note.strip()}" for number, note in notes) or "(none yet)"


async def _ask(client: ChatClient, research: Research, instructions: str, prompt: str) -> str:
    """One request to the research model, without tools; its text, its usage added to ``research``."""
    research.model_calls += 1
    pieces: list[str] = []
    try:
        async for update in client.stream([system(instructions), user(prompt)], ChatOptions()):
            if isinstance(update, TextUpdate):
                pieces.append(update.text)
            elif isinstance(update, UsageUpdate):
                research.input_tokens += update.input_tokens
                research.output_tokens += update.output_tokens
                research.cached_input_tokens += update.cached_input_tokens
    except ChatError as error:
        raise WebError(f"the research model failed: {error}") from None
    return "".join(pieces)
