"""The known configuration keys: sections, their fields, types, defaults and environment variables.

Keys are camelCase as in the seed's ``config.yaml``. :data:`SCHEMA` holds hive-core's own keys (the agent loop,
permissions, compaction...); a host builds the :class:`ConfigSchema` it loads with from those and the sections
of what it adds (hive's provider table puts every model provider's section in front of them), and passes it to
:func:`~hive_core.config.load_config`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Final
from typing import Literal

import msgspec

from hive_core.tool_names import GLOB_FILES
from hive_core.tool_names import GREP_FILES
from hive_core.tool_names import READ_FILE
from hive_protocol import REASONING_EFFORTS

from .errors import ConfigError

__all__ = ["SCHEMA", "ConfigSchema", "EnvVar", "FieldKind", "FieldSpec", "SectionSpec"]

FieldKind = Literal["str", "bool", "int", "number", "str_list", "mapping_list"]
"""A field's type: text, ``true``/``false``, a whole number, any number, a list of texts or of mappings."""

Default = str | bool | int | float | tuple[str, ...] | None

_SEPARATORS: Final = re.compile(r"[_\-\s]+")


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
    maximum: float | None = None
    """The largest value a number may take; ``None``: no bound."""
    choices: tuple[str, ...] = ()
    """The values a text field accepts; empty means any text."""
    env: tuple[str, ...] = ()
    """The environment variables (read from the environment and from ``.env``) that set the key, most specific
    first: within one layer the first one set wins."""
    used: bool = True
    """Whether this version of hive acts on the key; ``False`` for a key of the seed's configuration that is
    accepted (a file written for it loads) but read by nothing yet, which ``config show`` and ``set`` say."""
    items: tuple[FieldSpec, ...] = ()
    """For a list of mappings: the keys each item holds, checked like a section's fields (an unknown one is
    warned about); empty: the items are not checked here."""
    required: bool = False
    """For a key of :attr:`items`: every item must set it."""


class SectionSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One known top-level section (a mapping of fields)."""

    name: str
    """The key as written in YAML."""
    doc: str
    """What the section configures."""
    fields: tuple[FieldSpec, ...] = ()
    """The known fields, in display order."""
    aliases: tuple[str, ...] = ()
    """Other spellings accepted for the section (``local`` for ``lmsupply``)."""
    replace_whole: bool = False
    """A later layer that sets anything in this section replaces the whole section (no field merge)."""
    free_form: bool = False
    """The section's content is validated by its owner (``permissions``), not here: no field is unknown."""
    used: bool = True
    """Whether this version of hive acts on the section; ``False``: none of its fields is read yet."""

    def field(self, name: str) -> FieldSpec | None:
        """The field called ``name`` (exact spelling), or ``None``."""
        for spec in self.fields:
            if spec.name == name:
                return spec
        return None


class EnvVar(msgspec.Struct, frozen=True):
    """One environment variable and the dotted key it sets."""

    name: str
    """The variable's name."""
    key: str
    """The canonical dotted key it sets."""


def _camel(segment: str) -> str:
    parts = [part for part in _SEPARATORS.split(segment) if part]
    if len(parts) <= 1:
        return parts[0] if parts else segment
    first = parts[0].lower() if parts[0].isupper() else parts[0][0].lower() + parts[0][1:]
    rest = [
        part.capitalize() if part.isupper() or part.islower() else part[0].upper() + part[1:]
        for part in parts[1:]
    ]
    return first + "".join(rest)


class ConfigSchema(Mapping[str, SectionSpec | FieldSpec]):
    """Every known top-level key (sections and scalars) by canonical name, in display order.

    Raises ``ValueError`` when two keys (or a key and an alias) share a name.
    """

    __slots__ = ("_aliases", "_by_lower", "_environment", "_keys")

    def __init__(self, keys: Iterable[SectionSpec | FieldSpec]) -> None:
        self._keys: dict[str, SectionSpec | FieldSpec] = {}
        self._aliases: dict[str, str] = {}
        for spec in keys:
            names = (spec.name, *spec.aliases) if isinstance(spec, SectionSpec) else (spec.name,)
            for name in names:
                if name in self._keys or name in self._aliases:
                    raise ValueError(f"the configuration key {name!r} is declared twice")
            self._keys[spec.name] = spec
            self._aliases.update((alias, spec.name) for alias in names[1:])
        self._by_lower = {name.lower(): name for name in self._keys} | {
            alias.lower(): name for alias, name in self._aliases.items()
        }
        self._environment = tuple(
            EnvVar(variable, f"{section.name}.{field.name}")
            for section in self._keys.values()
            if isinstance(section, SectionSpec)
            for field in section.fields
            for variable in field.env
        )

    def __getitem__(self, name: str) -> SectionSpec | FieldSpec:
        return self._keys[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"ConfigSchema({list(self._keys)!r})"

    @property
    def aliases(self) -> Mapping[str, str]:
        """Other spellings of sections, exactly as written: alias → canonical name."""
        return self._aliases

    @property
    def environment(self) -> tuple[EnvVar, ...]:
        """Every environment variable a key reads, in schema order (each key's most specific first)."""
        return self._environment

    def canonical_section(self, name: str) -> str | None:
        """The canonical top-level key for ``name`` (any case, or an alias), or ``None`` when it is not known."""
        return self._by_lower.get(name.lower())

    def lookup(self, key: tuple[str, ...]) -> SectionSpec | FieldSpec | None:
        """The spec of a canonical dotted key (as segments): a section, a field, or ``None`` when not known."""
        if not key:
            return None
        top = self._keys.get(key[0])
        if len(key) == 1 or top is None:
            return top
        if isinstance(top, SectionSpec) and len(key) == 2 and not top.free_form:
            return top.field(key[1])
        return None

    def is_used(self, key: str) -> bool:
        """Whether this version of hive acts on the canonical dotted ``key`` (unknown keys count as used)."""
        segments = tuple(key.split("."))
        top = self._keys.get(segments[0])
        if isinstance(top, SectionSpec) and not top.used:
            return False
        spec = self.lookup(segments[:2])
        return spec.used if isinstance(spec, FieldSpec) else True

    def normalize_key(self, key: str) -> tuple[str, ...]:
        """The canonical segments of a dotted key.

        Segments in snake_case or kebab-case become camelCase (``chat_behavior.max_output_tokens`` →
        ``chatBehavior.maxOutputTokens``); a known section or field matches in any case (``CHATBEHAVIOR``), and
        an alias becomes its canonical section (``local.enabled`` → ``lmsupply.enabled``). Unknown keys keep
        their camelCase spelling. Raises :class:`ConfigError` for an empty key or an empty segment.
        """
        segments = [segment.strip() for segment in key.strip().split(".")]
        if not all(segments):
            raise ConfigError(f"invalid key {key!r}: a key is one or more names separated by dots", key=key)
        names = [_camel(segment) for segment in segments]
        top = self.canonical_section(names[0])
        if top is None:
            return tuple(names)
        spec = self._keys[top]
        if len(names) > 1 and isinstance(spec, SectionSpec) and not spec.free_form:
            known = {field.name.lower(): field.name for field in spec.fields}
            names[1] = known.get(names[1].lower(), names[1])
        return (top, *names[1:])


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


def _section(
    name: str,
    doc: str,
    *fields: FieldSpec,
    replace_whole: bool = False,
    free_form: bool = False,
    used: bool = True,
) -> SectionSpec:
    return SectionSpec(
        name=name, doc=doc, fields=fields, replace_whole=replace_whole, free_form=free_form, used=used
    )


SCHEMA: Final = ConfigSchema(
    (
        _section(
            "permissions",
            "The tool-call permission rules (camelCase keys); used when there is no .hive/permissions.yaml.",
            replace_whole=True,
            free_form=True,
        ),
        _section(
            "compaction",
            "Keeping long conversations inside the model's context window.",
            _b(
                "useTokenBasedCompaction",
                "Compact by token counts (off: the legacy percentage trigger).",
                True,
            ),
            _i("protectRecentTokens", "The most recent tokens, always kept.", 40_000),
            _i("minimumPruneTokens", "Compact only when at least this many tokens can be pruned.", 20_000),
            _l(
                "protectedToolOutputs",
                "Tools whose results are kept longest.",
                (READ_FILE, GREP_FILES, GLOB_FILES),
            ),
            _n(
                "targetRatio",
                "Compact down to this fraction of the context window (at most 20% of the window below the "
                "trigger, so the next requests do not compact again at once).",
                0.70,
                positive=True,
            ),
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
            _i(
                "observationMaskingProtectedRounds", "Recent tool rounds inside a turn that are never masked."
            ),
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
            _b(
                "useAnchoredCompaction",
                "Keep a structured state block (goal, files, errors, decisions) across compactions, beside the "
                "summary.",
                False,
            ),
            _i(
                "maxAnchorStateChars",
                "The anchored state block's size at most, in characters (the oldest entries go first).",
                2_000,
                positive=True,
            ),
            _i(
                "maxContextTokens",
                "The model's window, when the catalog does not know the model.",
                positive=True,
            ),
            _b("compactOnOverflow", "Window unknown: compact when the server reports an overflow.", True),
            _b("goalReminder", "Remind the model of the first user message in long conversations.", True),
        ),
        _section(
            "webSearch",
            "The web tools: web_search, fetch_page and explore_site (the web rules judge the URLs they reach).",
            _b("enabled", "Offer the web tools (DuckDuckGo searches with no key).", True),
            _s(
                "provider",
                "The search service (unset: the first with a key, Tavily then SearchApi, else DuckDuckGo).",
                choices=("duckduckgo", "tavily", "searchapi"),
            ),
            _i(
                "defaultMaxResults",
                "Results returned when the model does not ask for a number.",
                10,
                positive=True,
            ),
            _i("maxSitemapEntries", "Sitemap entries explore_site lists at most.", 50, positive=True),
            _n("timeoutSeconds", "Seconds a search or page request may take.", 15, positive=True),
            _s(
                "duckDuckGoEndpoint",
                "DuckDuckGo's base URL (its HTML search is under /html/).",
                "https://html.duckduckgo.com",
            ),
            _s("duckDuckGoRegion", "The DuckDuckGo region code (unset: us-en)."),
            _s("tavilyApiKey", "A Tavily API key (search through Tavily)."),
            _s("tavilyEndpoint", "Tavily's base URL.", "https://api.tavily.com"),
            _s("searchApiKey", "A SearchApi key (search through SearchApi)."),
            _s("searchApiEngine", "The SearchApi engine.", "google"),
            _s("searchApiEndpoint", "SearchApi's base URL.", "https://www.searchapi.io"),
        ),
        _section(
            "deepResearch",
            "The deep_research tool: search, read the pages, take notes, write a report citing its sources.",
            _b("enabled", "Offer deep research (it searches with the webSearch settings).", False),
            _i("maxIterations", "Search-and-read rounds at most.", 5, positive=True),
            _s("provider", "The provider of the research model (unset: the session's provider)."),
            _s("model", "The research model (unset: the session's model, or the provider's configured one)."),
        ),
        _section(
            "chatBehavior",
            "The agent loop of the CLI and the servers.",
            _i("maximumIterationsPerRequest", "Tool rounds per request at most.", 10, positive=True),
            _i(
                "maximumConsecutiveErrorsPerRequest",
                "Failed tool calls in a row that stop the request (a success starts the count again; calls "
                "the rules or the user refused do not count).",
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
            _n(
                "questionTimeoutSeconds",
                "Seconds an agent's question waits for its answer before it is declined (0: no limit).",
                1800,
            ),
        ),
        _section(
            "advisor",
            "The advisor tool: a stronger model the working model can consult about the conversation so far "
            "(offered by hive's own loop); off until model is set.",
            _s("provider", "The advisor's provider (unset: the working provider)."),
            _s("model", "The advisor's model; setting it offers the advisor tool."),
            _i("maxCalls", "Consultations per session at most.", 5, positive=True),
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
            "sandbox",
            "Confining execute_command: an OS sandbox (bubblewrap on Linux) and the variables commands inherit.",
            _s(
                "mode",
                "workspace-write (the project writable, the rest read-only, credentials hidden), read-only, "
                "off, or auto: workspace-write where bubblewrap works, else off (hive doctor warns). A mode "
                "that needs a sandbox refuses commands where none can run.",
                "auto",
                choices=("auto", "workspace-write", "read-only", "off"),
            ),
            _b("networkAccess", "Let sandboxed commands use the network.", False),
            _l(
                "passVariables",
                "Environment variables commands inherit besides the built-in list (PATH, HOME, LANG...); * "
                "matches any characters. Variables hive reads its keys from are never passed.",
                (),
            ),
            _l(
                "writablePaths",
                "More directories workspace-write commands may write to (a build cache, say; ~ expands).",
                (),
            ),
        ),
        _section(
            "budget",
            "Per-session spending limits: tokens and US dollars over every model request of a session.",
            _i(
                "maxSessionTokens",
                "Input plus output tokens per session at most, resumed sessions included (unset: no limit).",
                positive=True,
            ),
            _n(
                "maxSessionCost",
                "US dollars per session at most, priced from the genai-prices table (unset: no limit).",
                positive=True,
            ),
            FieldSpec(
                name="warnAtPercent",
                kind="number",
                doc="Warn once (as an addendum) when a limit is this many percent used.",
                default=80,
                positive=True,
                maximum=100,
            ),
            _b(
                "stopOnLimit",
                "End the turn at a limit with stop reason budget_exhausted (off: only say so).",
                True,
            ),
            replace_whole=True,
        ),
        _section(
            "agentsMd",
            "AGENTS.md files from the project root down to the working directory (CLAUDE.md in a directory "
            "without one), root first, added to the instructions of hive's own loop.",
            _b("enabled", "Read AGENTS.md files.", True),
            _i(
                "maxCharacters",
                "Characters of AGENTS.md text at most; past it the nearest files are kept and the farthest cut "
                "or left out, with a note saying which.",
                32_000,
                positive=True,
            ),
        ),
        _section(
            "toolRetrieval",
            "Offering the model only the tools relevant to each request, for any model, scored locally on the "
            "words of each tool's name and description (no network).",
            _b("enabled", "Select tools by relevance.", False),
            _i(
                "maxTools",
                "Tools offered at most (alwaysInclude ones count, and are offered even past it).",
                10,
                positive=True,
            ),
            _n(
                "minRelevanceScore",
                "Relevance a tool needs, 0 to 1 (the best match scores 1, a tool sharing no word 0).",
                0.3,
            ),
            _i("minScoredSlots", "Slots the sticky tools leave to relevant tools when there are some.", 0),
            _l("alwaysInclude", "Tools offered every turn."),
            _i("stickyToolLimit", "Tools the conversation called, most recent first, kept offered.", 0),
            _n(
                "stickyChangeScore",
                "Relevance a new tool needs to take the slot of the least recently called sticky tool.",
                0.7,
            ),
        ),
        _section(
            "delegation",
            "Subagents, offered to the model through one delegate(agent, task) tool; off until enabled and an agent "
            "is defined.",
            _b("enabled", "Offer the delegate tool with the agents defined.", False),
            _s(
                "agentsDirectory",
                "The folder of agent definitions (<name>/agent.yaml): one folder's name inside the project's .hive/.",
                "agents",
            ),
            FieldSpec(
                name="agents",
                kind="mapping_list",
                doc="Agents defined inline, each with name, description, instructions, provider and model or "
                "backend (a coding-agent CLI), endpoint, tools.",
            ),
            _i(
                "maxDepth",
                "Levels of delegation at most (1: subagents cannot delegate further).",
                2,
                positive=True,
            ),
            _i(
                "maxConcurrent",
                "Subagents running at once at most; further delegations wait.",
                3,
                positive=True,
            ),
        ),
        _section(
            "skills",
            "SKILL.md skills, listed in the instructions and read with load_skill; off until roots names a "
            "directory (`hive doctor` shows what was found and every problem).",
            _l(
                "roots",
                "Directories whose subdirectories holding a SKILL.md are skills, searched in order (an earlier "
                "root wins a name); ~ expands to the home directory, relative ones start at the project root.",
            ),
            _l("enabled", "The skills to offer, in this order (unset: every skill found)."),
            _l("exclude", "Skills never offered."),
            _i(
                "maxMetadataCharacters",
                "Characters of the skill listing in the instructions at most; skills past it are not listed but "
                "load_skill still loads them.",
                12_000,
            ),
            _b(
                "acceptUnknownFields",
                "Load a skill whose SKILL.md frontmatter has keys the specification does not define, dropping them "
                "(off: such a skill is not loaded).",
                False,
            ),
            replace_whole=True,
        ),
        _section(
            "sessions",
            "Where sessions are kept.",
            FieldSpec(
                name="store",
                kind="str",
                doc="A postgresql:// URL: sessions in that PostgreSQL database, shared by every machine that "
                "names it (unset: the SQLite file sessions.db in the hive home). --store on a command wins.",
                env=("HIVE_SESSION_STORE",),
            ),
        ),
        _section(
            "serve",
            "`hive serve`, the HTTP server.",
            _s(
                "token",
                "The token every client must present (HIVE_SERVE_TOKEN wins; unset: a new one each start).",
            ),
            _s(
                "engine",
                "temporal://HOST:PORT[/NAMESPACE]: run sessions on that engine's workers (`hive worker`), with "
                "sessions.store a postgresql:// URL (unset: sessions run in the server). --engine wins.",
            ),
        ),
        _s(
            "defaultProvider",
            "The provider used when none is named (unset: the first configured, by priority).",
        ),
        FieldSpec(
            name="fallback",
            kind="mapping_list",
            doc="Providers tried in order when the session's own fails (an auth failure, or a server error "
            "after its retries); one found dead is skipped for the rest of the session.",
            items=(
                msgspec.structs.replace(_s("provider", "The provider's name."), required=True),
                _s("model", "The model (unset: the provider's configured one)."),
            ),
        ),
    )
)
"""hive-core's own top-level keys, in display order: its sections, then ``defaultProvider`` and ``fallback``."""
