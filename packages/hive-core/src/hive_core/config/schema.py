"""The known configuration keys: every top-level section, its fields, their types and defaults.

Keys are camelCase as in the seed's ``config.yaml`` (acronym provider sections are lower-case: ``openai``,
``googleai``...). ``local`` is accepted as hive's spelling of ``lmsupply``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

import msgspec

from hive_protocol import REASONING_EFFORTS

__all__ = [
    "PROVIDER_SECTIONS",
    "SCHEMA",
    "SECTION_ALIASES",
    "FieldKind",
    "FieldSpec",
    "SectionSpec",
    "canonical_section",
    "lookup",
]

FieldKind = Literal["str", "bool", "int", "number", "str_list", "mapping_list"]
"""A field's type: text, ``true``/``false``, a whole number, any number, a list of texts or of mappings."""

Default = str | bool | int | float | tuple[str, ...] | None


class FieldSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One known key: a field of a section, or a scalar at the top level."""

    name: str
    """The key as written in YAML (camelCase)."""
    kind: FieldKind
    """The value's type."""
    doc: str
    """What the key sets."""
    default: Default = None
    """The value used when no layer sets it; ``None`` means unset (the feature decides)."""
    positive: bool = False
    """A number that must be greater than zero (no number may be negative)."""
    choices: tuple[str, ...] = ()
    """The values a text field accepts; empty means any text."""


class SectionSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One known top-level section (a mapping of fields)."""

    name: str
    """The key as written in YAML."""
    doc: str
    """What the section configures."""
    fields: tuple[FieldSpec, ...] = ()
    """The known fields, in display order."""
    replace_whole: bool = False
    """A later layer that sets anything in this section replaces the whole section (no field merge)."""
    free_form: bool = False
    """The section's content is validated by its owner (``permissions``), not here: no field is unknown."""

    def field(self, name: str) -> FieldSpec | None:
        """The field called ``name`` (exact spelling), or ``None``."""
        for spec in self.fields:
            if spec.name == name:
                return spec
        return None


def _s(name: str, doc: str, default: str | None = None, *, choices: tuple[str, ...] = ()) -> FieldSpec:
    return FieldSpec(name=name, kind="str", doc=doc, default=default, choices=choices)


def _b(name: str, doc: str, default: bool | None = None) -> FieldSpec:
    return FieldSpec(name=name, kind="bool", doc=doc, default=default)


def _i(name: str, doc: str, default: int | None = None, *, positive: bool = False) -> FieldSpec:
    return FieldSpec(name=name, kind="int", doc=doc, default=default, positive=positive)


def _n(name: str, doc: str, default: float | None = None, *, positive: bool = False) -> FieldSpec:
    return FieldSpec(name=name, kind="number", doc=doc, default=default, positive=positive)


def _l(name: str, doc: str, default: tuple[str, ...] | None = None) -> FieldSpec:
    return FieldSpec(name=name, kind="str_list", doc=doc, default=default)


_API_KEY = _s("apiKey", "The provider's API key.")
_MODEL = _s("model", "The model to use.")
_ENDPOINT = _s("endpoint", "The base URL of the provider's API.")
_IDLE = _n(
    "streamIdleTimeoutSeconds",
    "Seconds a response stream may stay silent before it fails (unset: no limit).",
    positive=True,
)
_IMAGES = _b("carryToolImages", "Pass images returned by tools on to the model.", False)


def _section(
    name: str, doc: str, *fields: FieldSpec, replace_whole: bool = False, free_form: bool = False
) -> SectionSpec:
    return SectionSpec(name=name, doc=doc, fields=fields, replace_whole=replace_whole, free_form=free_form)


_SECTIONS: Final = (
    _section(
        "gpuStack",
        "A GPUStack server (OpenAI-compatible); configured when endpoint, apiKey and model are all set.",
        _ENDPOINT,
        _API_KEY,
        _MODEL,
        _s("embeddingModel", "The embedding model."),
        _s("rerankModel", "The reranking model."),
        _IDLE,
        _IMAGES,
    ),
    _section(
        "openai",
        "OpenAI; configured when apiKey and model are set.",
        _API_KEY,
        _MODEL,
        _s("endpoint", "The base URL of the API.", "https://api.openai.com/v1"),
        _IDLE,
    ),
    _section(
        "anthropic",
        "Anthropic; configured when apiKey and model are set.",
        _API_KEY,
        _MODEL,
        _s("endpoint", "The base URL of the API (unset: the SDK's default)."),
        _IDLE,
    ),
    _section(
        "googleai",
        "Google AI (Gemini); configured when apiKey and model are set.",
        _API_KEY,
        _MODEL,
        _s("endpoint", "The base URL of the API (unset: the SDK's default)."),
        _IDLE,
    ),
    _section(
        "azureopenai",
        "Azure OpenAI; configured when endpoint, apiKey and deploymentName are set.",
        _ENDPOINT,
        _API_KEY,
        _s("deploymentName", "The deployment to call (it names the model)."),
        _s("apiVersion", "The API version to request (unset: the client's default)."),
        _IDLE,
    ),
    _section(
        "xai",
        "xAI (Grok); configured when apiKey and model are set.",
        _API_KEY,
        _MODEL,
        _s("endpoint", "The base URL of the API.", "https://api.x.ai/v1"),
        _IDLE,
    ),
    _section(
        "ollama",
        "A local Ollama server; configured when enabled.",
        _b("enabled", "Use Ollama.", False),
        _s("endpoint", "The server's URL.", "http://localhost:11434"),
        _MODEL,
        _IDLE,
        _IMAGES,
    ),
    _section(
        "lmstudio",
        "A local LM Studio server; configured when enabled.",
        _b("enabled", "Use LM Studio.", False),
        _s("endpoint", "The server's OpenAI-compatible URL.", "http://localhost:1234/v1"),
        _MODEL,
        _IDLE,
        _IMAGES,
    ),
    _section(
        "lmsupply",
        "In-process local inference (llama.cpp); the fallback when no other provider is configured.",
        _b("enabled", "Allow local inference.", True),
        _s("generatorModel", "The chat model: an alias, a Hugging Face id or a GGUF path.", "gguf:auto"),
        _s("embedderModel", "The embedding model.", "auto"),
        _s("rerankerModel", "The reranking model.", "auto"),
        _i(
            "maxContextLength",
            "The context window in tokens (unset: sized from the available memory).",
            positive=True,
        ),
    ),
    _section(
        "permissions",
        "The tool-call permission rules (camelCase keys); used when there is no .hive/permissions.yaml.",
        replace_whole=True,
        free_form=True,
    ),
    _section(
        "compaction",
        "Keeping long conversations inside the model's context window.",
        _b("useTokenBasedCompaction", "Compact by token counts (off: the legacy percentage trigger).", True),
        _i("protectRecentTokens", "The most recent tokens, always kept.", 40_000),
        _i("minimumPruneTokens", "Compact only when at least this many tokens can be pruned.", 20_000),
        _l(
            "protectedToolOutputs",
            "Tools whose results are kept longest.",
            ("read_file", "grep_files", "glob_files"),
        ),
        _n("targetRatio", "Compact down to this fraction of the context window.", 0.70, positive=True),
        _n(
            "thresholdPercentage",
            "The legacy trigger: compact at this fraction of the window.",
            0.92,
            positive=True,
        ),
        _b("enableObservationMasking", "Replace old tool results with placeholders.", True),
        _i("observationMaskingProtectedTurns", "User turns whose tool results are never masked.", 3),
        _i(
            "observationMaskingMinResultLength",
            "Results shorter than this many characters are never masked.",
            200,
        ),
        _i("observationMaskingProtectedRounds", "Recent tool rounds inside a turn that are never masked."),
        _i(
            "observationMaskingProtectedTokens",
            "Tokens of recent tool results inside a turn that are never masked.",
        ),
        _b("enableToolResultCompaction", "Cut long tool results to their head and tail.", True),
        _i(
            "maxToolResultChars",
            "Tool results longer than this many characters are cut.",
            30_000,
            positive=True,
        ),
        _i("toolResultKeepHeadLines", "Lines kept from the start of a cut result.", 50),
        _i("toolResultKeepTailLines", "Lines kept from the end of a cut result.", 20),
        _b("useAnchoredCompaction", "Keep a structured state block across compactions.", False),
        _i("maxAnchorStateChars", "The size limit of the anchored state block.", 2_000),
        _i(
            "maxContextTokens", "The model's window, when the catalog does not know the model.", positive=True
        ),
        _b("compactOnOverflow", "Window unknown: compact when the server reports an overflow.", True),
        _b("goalReminder", "Remind the model of the first user message in long conversations."),
    ),
    _section(
        "webSearch",
        "The web_search and explore_site tools.",
        _b("enabled", "Offer web search (DuckDuckGo needs no key).", True),
        _i("defaultMaxResults", "Results returned when the model does not ask for a number.", 10),
        _i("maxSitemapEntries", "Sitemap entries read when exploring a site.", 50),
        _s("duckDuckGoRegion", "The DuckDuckGo region code."),
        _s("tavilyApiKey", "A Tavily API key (search through Tavily)."),
        _s("searchApiKey", "A SearchApi key (search through SearchApi)."),
        _s("searchApiEngine", "The SearchApi engine.", "google"),
    ),
    _section(
        "deepResearch",
        "The deep_research tool.",
        _b("enabled", "Offer deep research.", False),
        _s("tavilyApiKey", "The Tavily API key it searches with."),
        _i("maxIterations", "Research rounds at most.", 5),
        _s("provider", "The provider of the research model (unset: the working provider)."),
        _s("model", "The research model (unset: the working model)."),
    ),
    _section(
        "chatBehavior",
        "The agent loop of the CLI and the servers.",
        _i("maximumIterationsPerRequest", "Tool rounds per request at most.", 10, positive=True),
        _i(
            "maximumConsecutiveErrorsPerRequest",
            "Back-to-back tool errors before the request stops.",
            3,
            positive=True,
        ),
        _i("maxOutputTokens", "Output tokens per model response at most.", 4096, positive=True),
        _s(
            "reasoningEffort",
            "How hard a reasoning model thinks (unset: the model's default).",
            choices=REASONING_EFFORTS,
        ),
        _n("toolCallTimeoutSeconds", "Seconds a tool call may run (unset: no limit).", positive=True),
    ),
    _section(
        "advisor",
        "The advisor tool: a stronger model the working model can consult; off until model is set.",
        _s("provider", "The advisor's provider (unset: the working provider)."),
        _s("model", "The advisor's model."),
        _i("maxCalls", "Consultations per session at most.", 5),
    ),
    _section(
        "approval",
        "Human approval of tool calls.",
        _n(
            "timeoutSeconds",
            "Seconds an approval request waits for an answer before it is rejected.",
            300,
            positive=True,
        ),
    ),
    _section(
        "budget",
        "Per-session usage limits.",
        _i("maxSessionTokens", "Tokens per session at most (unset: no limit).", positive=True),
        _n("maxSessionCost", "US dollars per session at most (unset: no limit).", positive=True),
        _n("warningThreshold", "Warn at this fraction of a limit.", 0.8, positive=True),
        _b("stopOnLimit", "Stop the session at a limit (off: only warn).", True),
        replace_whole=True,
    ),
    _section(
        "agentsMd",
        "AGENTS.md files from the repository root down to the working directory, added to the instructions.",
        _b("enabled", "Read AGENTS.md files.", True),
        _i("maxCharacters", "Characters of AGENTS.md text at most.", 32_000),
    ),
    _section(
        "toolRetrieval",
        "Offering the model only the tools relevant to the request.",
        _b("enabled", "Select tools by relevance.", False),
        _i("maxTools", "Tools offered at most.", 10),
        _n("minRelevanceScore", "Tools scoring below this are not offered.", 0.3),
        _i("minScoredSlots", "Slots kept for scored tools."),
        _l("alwaysInclude", "Tools always offered."),
        _i("stickyToolLimit", "Recently used tools kept offered.", 0),
        _n("stickyChangeScore", "The score a new tool needs to displace a sticky one.", 0.7),
    ),
    _section(
        "delegation",
        "Subagents offered as tools.",
        _s("agentsDirectory", "The directory of agent definitions (agents/<name>/agent.yaml).", "agents"),
        FieldSpec(
            name="agents",
            kind="mapping_list",
            doc="Agents defined inline: name, provider, model, description, maxToolTurns.",
        ),
        _i("maxDepth", "Delegation depth at most.", 2),
        _i("maxConcurrent", "Subagents running at once at most.", 3, positive=True),
    ),
    _section(
        "skills",
        "SKILL.md skills; off until roots names a directory.",
        _l("roots", "Directories searched for skills, in order (~ expands to the home directory)."),
        _l("enabled", "The skills to offer, in order (unset: all found)."),
        _l("exclude", "Skills never offered."),
        _i("maxMetadataCharacters", "Characters of the skill listing in the instructions at most.", 12_000),
        _b("acceptUnknownFields", "Accept SKILL.md frontmatter with unknown fields (with a warning).", False),
        replace_whole=True,
    ),
)

SCHEMA: Final[Mapping[str, SectionSpec | FieldSpec]] = {
    **{section.name: section for section in _SECTIONS},
    "defaultProvider": _s(
        "defaultProvider", "The provider used when none is named (unset: the first configured, by priority)."
    ),
}
"""Every known top-level key, in display order: the sections, then ``defaultProvider``."""

SECTION_ALIASES: Final[Mapping[str, str]] = {"local": "lmsupply"}
"""Other spellings accepted for a top-level section: alias → canonical name."""

PROVIDER_SECTIONS: Final = (
    "gpuStack",
    "openai",
    "anthropic",
    "googleai",
    "azureopenai",
    "xai",
    "ollama",
    "lmstudio",
    "lmsupply",
)
"""The provider sections, in the order a default provider is chosen among the configured ones."""

_BY_LOWER: Final = {name.lower(): name for name in SCHEMA} | {
    alias: name for alias, name in SECTION_ALIASES.items()
}


def canonical_section(name: str) -> str | None:
    """The canonical top-level key for ``name`` (any case, or an alias), or ``None`` when it is not known."""
    return _BY_LOWER.get(name.lower())


def lookup(key: tuple[str, ...]) -> SectionSpec | FieldSpec | None:
    """The spec of a canonical dotted key (as segments): a section, a field, or ``None`` when not known."""
    if not key:
        return None
    top = SCHEMA.get(key[0])
    if len(key) == 1 or top is None:
        return top
    if isinstance(top, SectionSpec) and len(key) == 2 and not top.free_form:
        return top.field(key[1])
    return None
