"""The requirements registry: every rule the kit checks, by id, with its tier and where it comes from.

Ids read ``HIVE-<AREA>-<NNN>``. Some are *structural*: the harness checks them on every stream, whatever the
scenario (the sequence rules of :data:`hive_protocol.RULES`, mapped by :data:`RULE_REQUIREMENTS`, and the
runner's exit, ``HIVE-RUN-001``). The others are exercised by the scenarios that cite them in ``meta.json``.

Tiers: ``mandatory`` for what the protocol requires (the wire protocol and the stdio runner), ``capability`` for
what applies only to a runner that has the named capability, ``advisory`` for what a runner should do (hive's own
guarantees beyond the protocol). Each rule states what hive really does, thresholds and value spellings included.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final
from typing import Literal

import msgspec

__all__ = [
    "CAPABILITIES",
    "REQUIREMENTS",
    "RULE_REQUIREMENTS",
    "TIERS",
    "Capability",
    "Requirement",
    "Tier",
    "requirement",
]

Tier = Literal["mandatory", "capability", "advisory"]
"""How binding a requirement is: a protocol rule, a rule of an optional capability, or a recommendation."""

TIERS: Final[tuple[Tier, ...]] = ("mandatory", "capability", "advisory")
"""Every tier, most binding first."""

Capability = Literal["thinking", "approvals", "mcp_tools", "turn_options", "budgets"]
"""A feature a runner may lack; scenarios that need one are skipped for a runner run without it."""

CAPABILITIES: Final[tuple[Capability, ...]] = (
    "thinking",
    "approvals",
    "mcp_tools",
    "turn_options",
    "budgets",
)
"""The runner capabilities a ``capability`` requirement may name, in a stable order."""

_ID: Final = re.compile(r"HIVE-[A-Z]+-\d{3}")


class Requirement(msgspec.Struct, frozen=True, kw_only=True):
    """One rule a runner is checked against."""

    id: str
    """``HIVE-<AREA>-<NNN>``, e.g. ``HIVE-SEQ-003``."""
    tier: Tier
    """How binding the rule is."""
    rule: str
    """The rule in one sentence."""
    source: str
    """Where the rule comes from, e.g. ``wire protocol, canonical bytes`` or ``hive-protocol sequence rule tool_pairs``."""
    capability: Capability | None = None
    """For tier ``capability``: the capability it belongs to (one of :data:`CAPABILITIES`); otherwise ``None``."""

    def __post_init__(self) -> None:
        """Reject a malformed id, and a capability named without tier ``capability`` or missing with it."""
        if not _ID.fullmatch(self.id):
            raise ValueError(f"requirement id {self.id!r} is not of the form HIVE-<AREA>-<NNN>")
        if (self.tier == "capability") != (self.capability is not None):
            raise ValueError(f"{self.id}: a capability is named exactly when the tier is 'capability'")
        if self.capability is not None and self.capability not in CAPABILITIES:
            raise ValueError(f"{self.id}: unknown capability {self.capability!r}")


def _mandatory(id: str, rule: str, source: str) -> Requirement:
    return Requirement(id=id, tier="mandatory", rule=rule, source=source)


def _advisory(id: str, rule: str, source: str) -> Requirement:
    return Requirement(id=id, tier="advisory", rule=rule, source=source)


def _capability(id: str, capability: Capability, rule: str, source: str) -> Requirement:
    return Requirement(id=id, tier="capability", rule=rule, source=source, capability=capability)


_ALL: Final[tuple[Requirement, ...]] = (
    # Structural: checked on every stream.
    _mandatory(
        "HIVE-WIRE-001",
        "Every line the runner writes is one protocol event, a JSON object whose string type names it and whose "
        "fields fit that type.",
        "wire protocol; hive-protocol sequence rule readable",
    ),
    _mandatory(
        "HIVE-WIRE-002",
        "Every event line is canonical: type first, then the fields in declaration order, no whitespace, unset "
        "optional fields omitted and never null, non-ASCII written as raw UTF-8, floats in shortest round-trip "
        "form, and exactly one \\n at the end.",
        "wire protocol, canonical bytes; hive-protocol sequence rule canonical",
    ),
    _mandatory(
        "HIVE-SESS-001",
        "session_started is the very first line the runner writes, written once and before any request is read.",
        "the stdio runner; hive-protocol sequence rule session_started_first",
    ),
    _mandatory(
        "HIVE-SEQ-001",
        "Every turn ends with exactly one turn_end as its last event, and nothing of a turn follows the "
        "session's last turn_end.",
        "wire protocol, sequence rules; hive-protocol sequence rules turn_end_once and after_last_turn",
    ),
    _mandatory(
        "HIVE-SEQ-002",
        "An error inside a turn is immediately followed by that turn's turn_end.",
        "wire protocol, sequence rules; hive-protocol sequence rule error_then_turn_end",
    ),
    _mandatory(
        "HIVE-SEQ-003",
        "Every tool_start gets exactly one tool_end with the same call_id and tool before its turn's turn_end.",
        "wire protocol, sequence rules; hive-protocol sequence rule tool_pairs",
    ),
    _mandatory(
        "HIVE-SEQ-004",
        "A hitl_request, or a question_request naming a call, sits between that call's tool_start and tool_end.",
        "wire protocol, sequence rules; hive-protocol sequence rule hitl_in_call",
    ),
    _mandatory(
        "HIVE-SEQ-005",
        "A tool_end that carries a refusal has success false.",
        "wire protocol, sequence rules; hive-protocol sequence rule refusal_fails",
    ),
    _mandatory(
        "HIVE-SEQ-006",
        "An addendum comes at most once per turn, after the turn's last text_delta.",
        "wire protocol, sequence rules; hive-protocol sequence rule addendum_last",
    ),
    _mandatory(
        "HIVE-SEQ-007",
        "A turn_end that reports input_tokens, output_tokens and total_tokens has total_tokens equal to "
        "input_tokens plus output_tokens.",
        "hive-protocol sequence rule token_sum",
    ),
    _mandatory(
        "HIVE-RUN-001",
        "The runner exits with status 0 when its input ends or after shutdown, within the harness's timeout, "
        "having ended every queued turn.",
        "the stdio runner",
    ),
    # Wire.
    _mandatory(
        "HIVE-WIRE-003",
        "Non-ASCII text (accents, CJK, emoji) in a request is read without loss, and non-ASCII text from the "
        "model is written in its events unchanged, as raw UTF-8 rather than \\u escapes.",
        "wire protocol, canonical bytes",
    ),
    _mandatory(
        "HIVE-WIRE-004",
        "U+2028 and U+2029 inside a request's JSON string, raw or escaped, are content: only \\n ends a request "
        "line, so the line is read as one request.",
        "wire protocol, framing",
    ),
    _mandatory(
        "HIVE-WIRE-005",
        "U+2028 and U+2029 in the model's text are written raw inside the event's string, and the event stays "
        "one line.",
        "wire protocol, framing and canonical bytes",
    ),
    _mandatory(
        "HIVE-WIRE-006",
        "A request line longer than 1 MiB is read whole and handled like any other request (hive's line cap "
        "defaults to 16 MiB).",
        "wire protocol, framing",
    ),
    _mandatory(
        "HIVE-WIRE-007",
        "A request's fields may come in any order, and fields the runner does not know are ignored.",
        "wire protocol, reading is tolerant",
    ),
    # Session.
    _mandatory(
        "HIVE-SESS-002",
        "Turns run one at a time in the order their user_message requests arrive, each turn's events following "
        "the previous turn's turn_end.",
        "the stdio runner",
    ),
    _mandatory(
        "HIVE-SESS-003",
        "When its input ends the runner stops reading, lets the running turn finish without cancelling it, and "
        "runs every queued turn to its turn_end before it exits.",
        "the stdio runner",
    ),
    _mandatory(
        "HIVE-SESS-004",
        "After shutdown the runner reads no more requests, runs every queued turn to its turn_end and exits on "
        "its own, although its input is still open.",
        "the stdio runner",
    ),
    _mandatory(
        "HIVE-SESS-005",
        "A request line that is not valid JSON is answered with exactly one error of code unreadable_request and "
        "no turn_end, and the session goes on.",
        "wire protocol, reading is tolerant",
    ),
    _mandatory(
        "HIVE-SESS-006",
        "A request line that is JSON null is answered with exactly one error of code unreadable_request and no "
        "turn_end, and the session goes on.",
        "wire protocol, reading is tolerant",
    ),
    _mandatory(
        "HIVE-SESS-007",
        "A request of an unknown type is answered with exactly one error of code unreadable_request and no "
        "turn_end, and the session goes on.",
        "wire protocol, reading is tolerant",
    ),
    _mandatory(
        "HIVE-SESS-008",
        "A context_update is accepted silently: no event answers it, and the next user_message runs as usual.",
        "wire protocol, requests",
    ),
    _advisory(
        "HIVE-SESS-009",
        "A cancel while no turn runs is ignored: no event answers it, and a later turn runs as usual.",
        "hive-protocol CancelRequest",
    ),
    # Text.
    _mandatory(
        "HIVE-TEXT-001",
        "Model text is streamed as one text_delta per non-empty chunk the model sends, in the order received, "
        "each carrying the chunk's text unchanged.",
        "wire protocol, events; hive-core loop",
    ),
    _capability(
        "HIVE-TEXT-002",
        "thinking",
        "Model reasoning is streamed as one thinking_delta per non-empty chunk, in the order received, before "
        "the text that follows it.",
        "wire protocol, events; hive-core loop",
    ),
    # Turn.
    _mandatory(
        "HIVE-TURN-001",
        "turn_end's input_tokens, output_tokens and cached_input_tokens (left out when zero) are the sums over "
        "every model round of the turn, and total_tokens is input_tokens plus output_tokens.",
        "wire protocol, events; hive-core loop",
    ),
    _mandatory(
        "HIVE-TURN-002",
        "A turn whose model finishes normally ends with turn_end stop_reason completed.",
        "wire protocol, value sets; hive-core loop",
    ),
    _mandatory(
        "HIVE-TURN-003",
        "A failed model request ends the turn with an error carrying the failure's code (context_limit for a "
        "request too long for the context window) immediately followed by a turn_end without stop_reason.",
        "wire protocol, sequence rules and value sets; hive-core runners TurnRecorder",
    ),
    _capability(
        "HIVE-TURN-005",
        "budgets",
        "With a session token budget, a turn whose model usage reaches it ends with an addendum naming the "
        "limit and turn_end stop_reason budget_exhausted; a later turn of the session asks the model nothing "
        "and ends the same way.",
        "wire protocol, value sets; hive-core spending",
    ),
    _advisory(
        "HIVE-TURN-004",
        "A model round without tool calls that stops at its output limit ends the turn with stop_reason "
        "output_limit.",
        "agent loop, stop-reason classification; hive-core loop",
    ),
    # Tools.
    _mandatory(
        "HIVE-TOOL-001",
        "A tool call is reported as tool_start with the tool's name, the call's parsed arguments as input and "
        "the model's call_id, then tool_end with success true and the tool's result text as output, after which "
        "the model is asked again within the same turn.",
        "wire protocol, events; hive-core loop",
    ),
    _mandatory(
        "HIVE-TOOL-002",
        "The calls of one model round each get their tool_start, all in the model's call order before any "
        "tool_end, and each its own tool_end with its call_id when it completes.",
        "wire protocol, sequence rules; hive-core loop",
    ),
    _mandatory(
        "HIVE-TOOL-003",
        "A tool that fails gives tool_end success false with the tool's error text as output and no refusal, "
        "and the turn goes on with the model asked again.",
        "agent loop, tool pipeline; hive-core loop",
    ),
    _capability(
        "HIVE-TOOL-004",
        "mcp_tools",
        "The tools of an MCP server are offered to the model and reported in events as mcp__<server>__<tool>.",
        "agent loop, tools; hive-core mcp tool names",
    ),
    _advisory(
        "HIVE-TOOL-005",
        "A call naming a tool that is not offered gets tool_end success false without running anything, and "
        "the turn goes on with the model asked again.",
        "hive-core loop",
    ),
    # Guards.
    _advisory(
        "HIVE-GUARD-001",
        "A call whose argument text is not valid JSON, or not a JSON object, is not run: tool_start carries the "
        "raw argument text as input, tool_end has refusal invalid_arguments, and the turn goes on.",
        "agent loop, tool pipeline; hive-core pipeline ArgumentParseFailureGuard",
    ),
    _advisory(
        "HIVE-GUARD-002",
        "After three successful calls in a row with the same tool and the same arguments, a fourth identical "
        "call is refused with repeated_call, and an identical call right after that refusal is refused with "
        "repeated_call again and ends the turn with stop_reason tool_terminated.",
        "agent loop, tool pipeline; hive-core pipeline RepeatedCallGuard",
    ),
    _advisory(
        "HIVE-GUARD-003",
        "When a tool fails with the same error three times in a row, the third failure's tool_end has refusal "
        "repeated_error and the turn ends with stop_reason tool_terminated.",
        "agent loop, tool pipeline; hive-core pipeline RepeatedErrorGuard",
    ),
    _advisory(
        "HIVE-GUARD-004",
        "A call that runs longer than its per-call timeout (for hive's MCP tools the plugin's timeoutMs, "
        "30000 by default) is stopped, its tool_end has refusal timed_out, and the turn goes on.",
        "agent loop, tool pipeline; hive-core pipeline Timeout",
    ),
    # Approvals.
    _capability(
        "HIVE-HITL-001",
        "approvals",
        "A call of a tool that needs approval sends a hitl_request naming the call (call_id, tool_name, "
        "arguments) after its tool_start, and the call does not run until the request is settled.",
        "wire protocol and agent loop, permissions; hive-core hitl HitlBridge",
    ),
    _capability(
        "HIVE-HITL-002",
        "approvals",
        "A hitl_response with approved true runs the call with its arguments, and its tool_end has success true.",
        "wire protocol, requests; hive-core pipeline ApprovalGate",
    ),
    _capability(
        "HIVE-HITL-003",
        "approvals",
        "A hitl_response with approved false refuses the call with tool_end success false and refusal rejected, "
        "and the turn goes on.",
        "wire protocol, requests; hive-core pipeline ApprovalGate",
    ),
    _capability(
        "HIVE-HITL-004",
        "approvals",
        "An approval carrying modified_arguments runs the call with those arguments replacing the model's key by "
        "key, while tool_start keeps the model's arguments.",
        "wire protocol, requests; hive-core pipeline ApprovalGate",
    ),
    _capability(
        "HIVE-HITL-005",
        "approvals",
        "An approval request that gets no answer within the approval timeout (approval.timeoutSeconds, 300 by "
        "default) fails closed: the call is refused with rejected, and the turn goes on.",
        "agent loop, permissions fail closed; hive-core hitl HitlBridge",
    ),
    _capability(
        "HIVE-HITL-006",
        "approvals",
        "When the input ends or shutdown arrives while a call waits for approval, the call is refused with "
        "rejected, and its turn still runs to its turn_end.",
        "agent loop, permissions fail closed; hive-core runners SessionRunner",
    ),
    _capability(
        "HIVE-HITL-007",
        "approvals",
        "A hitl_response without an id answers the waiting request when exactly one request waits.",
        "hive-protocol HitlResponseRequest; hive-core hitl HitlBridge",
    ),
    # Cancel.
    _mandatory(
        "HIVE-CANCEL-001",
        "A cancel while the model's reply streams ends the turn with turn_end stop_reason cancelled and no error.",
        "wire protocol, sequence rules; the stdio runner",
    ),
    _mandatory(
        "HIVE-CANCEL-002",
        "A cancel while a tool runs gives that call its tool_end with success false, then ends the turn with "
        "stop_reason cancelled.",
        "wire protocol, sequence rules",
    ),
    _mandatory(
        "HIVE-CANCEL-003",
        "A cancel ends only the running turn: a user_message queued behind it or sent after it runs as the next "
        "turn as usual.",
        "the stdio runner",
    ),
    # Turn options.
    _capability(
        "HIVE-OPT-001",
        "turn_options",
        "A user_message with valid options (tool_names of offered tools, tool_mode, reasoning_effort, "
        "temperature, max_output_tokens, instructions) runs its turn as usual, without an error.",
        "wire protocol, TurnOptions",
    ),
    _capability(
        "HIVE-OPT-002",
        "turn_options",
        "Options whose tool_names name a tool the runner does not have are answered with an error of code "
        "request_rejected and a turn_end without stop_reason, the model is not asked, and the session goes on.",
        "wire protocol, TurnOptions; hive-protocol validate_turn_options",
    ),
    _capability(
        "HIVE-OPT-003",
        "turn_options",
        "Options whose tool_mode is not auto, none, require_any or require:<offered tool> are answered with an "
        "error of code request_rejected and a turn_end without stop_reason, and the session goes on.",
        "wire protocol, TurnOptions; hive-protocol validate_tool_mode",
    ),
    _capability(
        "HIVE-OPT-004",
        "turn_options",
        "Options whose reasoning_effort is not none, low, medium, high or extra_high are answered with an error "
        "of code request_rejected and a turn_end without stop_reason, and the session goes on.",
        "wire protocol, TurnOptions; hive-protocol validate_turn_options",
    ),
)

REQUIREMENTS: Final[Mapping[str, Requirement]] = MappingProxyType({item.id: item for item in _ALL})
"""Every requirement by id: the structural ones first, then by area, in a stable order."""

RULE_REQUIREMENTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "readable": "HIVE-WIRE-001",
        "canonical": "HIVE-WIRE-002",
        "session_started_first": "HIVE-SESS-001",
        "turn_end_once": "HIVE-SEQ-001",
        "after_last_turn": "HIVE-SEQ-001",
        "error_then_turn_end": "HIVE-SEQ-002",
        "tool_pairs": "HIVE-SEQ-003",
        "hitl_in_call": "HIVE-SEQ-004",
        "refusal_fails": "HIVE-SEQ-005",
        "addendum_last": "HIVE-SEQ-006",
        "token_sum": "HIVE-SEQ-007",
    }
)
"""Each rule of :data:`hive_protocol.RULES` (the stream verifier's rule ids) to the requirement it checks."""


def requirement(id: str) -> Requirement:
    """The requirement called ``id``; ``KeyError`` naming it when the registry has no such id."""
    try:
        return REQUIREMENTS[id]
    except KeyError:
        raise KeyError(
            f"unknown requirement id {id!r}: ids look like HIVE-<AREA>-<NNN> and must be in "
            "hive_conformance.requirements.REQUIREMENTS"
        ) from None
