"""Session spending: the tokens and the money a session's model requests have cost, against the ``budget`` limits.

Not to be confused with :mod:`hive_core.budget`, the context-window backstop that refuses one request too big
for the model's window. Here a whole session is counted: every model request's usage (and its price, where the
price table knows the model) adds to the session's :class:`Spent`, which a resumed session gets back from its
stored :class:`RequestSpend` entries, never from a counter of the process that ran it.

The loop asks :class:`SessionSpending` before each model request (by the request's estimated input tokens) and
after it (by the usage the provider reported). At ``warnAtPercent`` of a limit it notes a warning, once per
limit; at the limit, with ``stopOnLimit``, the turn stops with ``stop_reason: budget_exhausted`` after an
``addendum`` naming the limit. Prices come from a :class:`Pricing` the host supplies (hive-providers owns the
table), so the kernel knows no provider.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Final
from typing import Literal
from typing import Protocol
from typing import cast

import msgspec

from .chat import UsageUpdate
from .context.settings import ConfigSections

__all__ = [
    "COST_UNKNOWN",
    "LimitName",
    "Pricing",
    "RequestSpend",
    "SessionSpending",
    "SpendingLimits",
    "Spent",
    "describe_cost",
]


class Pricing(Protocol):
    """The price table a host supplies (hive-providers owns it, so the kernel knows no provider)."""

    def model(self, override: str | None, /) -> str:
        """The ``provider/model`` a request goes to: the turn's model ``override``, else the session's own."""
        ...

    def price(self, model: str, usage: UsageUpdate, /) -> float | None:
        """The price in US dollars of ``usage`` on ``model`` (as :meth:`model` names it), or ``None`` when the
        table does not know the model: never a guess."""
        ...


LimitName = Literal["maxSessionTokens", "maxSessionCost"]
"""A limit, by its configuration key."""

COST_UNKNOWN: Final = "cost unknown"
"""What every surface says instead of a price it does not have."""


def describe_cost(cost: float | None) -> str:
    """``$0.0123`` for a known cost, :data:`COST_UNKNOWN` for ``None``."""
    if cost is None:
        return COST_UNKNOWN
    return f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"


class RequestSpend(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One model request's usage: a session log entry (``spending``), summed again when the session resumes and
    priced when a cost is asked for (loading the price table costs seconds: only a cost limit or a surface
    showing the cost pays for it)."""

    model: str
    """The ``provider/model`` it went to."""
    input_tokens: int = 0
    """Input tokens, as the provider reported them."""
    output_tokens: int = 0
    """Output tokens."""
    cached_input_tokens: int = 0
    """Input tokens served from the provider's cache (part of the input tokens)."""

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass
class Spent:
    """What a session (or a turn) has spent so far: its requests' usage, priced on demand."""

    spends: list[RequestSpend] = field(default_factory=list[RequestSpend])
    """Every request's usage, oldest first."""
    tokens: int = 0
    """Input plus output tokens of every request."""
    _priced: int = 0
    _cost: float | None = 0.0

    def add(self, spend: RequestSpend) -> None:
        """Count one more request."""
        self.spends.append(spend)
        self.tokens += spend.tokens

    def cost(self, pricing: Pricing | None) -> float | None:
        """US dollars spent; ``None`` when one request cannot be priced (a partial sum would understate it)."""
        if pricing is None:
            return None if self.spends else 0.0
        for spend in self.spends[self._priced :]:
            if self._cost is None:
                break
            price = pricing.price(
                spend.model, UsageUpdate(spend.input_tokens, spend.output_tokens, spend.cached_input_tokens)
            )
            self._cost = None if price is None else self._cost + price
        self._priced = len(self.spends)
        return self._cost

    @classmethod
    def of(cls, payloads: Iterable[object]) -> Spent:
        """The sum of the :class:`RequestSpend` items among ``payloads`` (a session's stored entries)."""
        spent = cls()
        for item in payloads:
            if isinstance(item, RequestSpend):
                spent.add(item)
        return spent


class SpendingLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The ``budget`` section: what a session may spend."""

    max_session_tokens: int | None = None
    """Input plus output tokens per session at most; ``None``: no limit."""
    max_session_cost: float | None = None
    """US dollars per session at most; ``None``: no limit."""
    warn_at_percent: float = 80
    """Warn once a limit is this many percent used."""
    stop_on_limit: bool = True
    """End the turn at a limit (``False``: only say it was reached)."""

    @property
    def limited(self) -> bool:
        """Whether any limit is set."""
        return self.max_session_tokens is not None or self.max_session_cost is not None

    @classmethod
    def from_config(cls, loaded: ConfigSections) -> SpendingLimits:
        """From a loaded configuration's ``budget`` section (values already validated at load)."""
        section = loaded.section("budget")
        tokens, cost = section.get("maxSessionTokens"), section.get("maxSessionCost")
        warn, stop = section.get("warnAtPercent"), section.get("stopOnLimit")
        return cls(
            max_session_tokens=int(cast("int", tokens)) if tokens is not None else None,
            max_session_cost=float(cast("float", cost)) if cost is not None else None,
            warn_at_percent=float(cast("float", warn)) if warn is not None else 80,
            stop_on_limit=bool(stop) if stop is not None else True,
        )


@dataclass
class SessionSpending:
    """One session's spending against its limits; the loop asks it before and after each model request."""

    limits: SpendingLimits = field(default_factory=SpendingLimits)
    """The limits."""
    pricing: Pricing | None = None
    """Prices requests; ``None``: every cost is unknown."""
    spent: Spent = field(default_factory=Spent)
    """Spent so far, resumed sessions included (see :meth:`Spent.of`)."""
    turn: Spent = field(default_factory=Spent)
    """Spent by the current (or last) turn."""
    listeners: list[Callable[[RequestSpend], object]] = field(
        default_factory=list[Callable[[RequestSpend], object]]
    )
    """Told of every request's spend as it is counted (the session recorder writes it to the log)."""
    _warned: set[LimitName] = field(default_factory=set[LimitName])
    _reached: set[LimitName] = field(default_factory=set[LimitName])

    def cost(self) -> float | None:
        """US dollars the session has spent; ``None`` when unknown."""
        return self.spent.cost(self.pricing)

    def turn_cost(self) -> float | None:
        """US dollars the current (or last) turn spent; ``None`` when unknown."""
        return self.turn.cost(self.pricing)

    def start_turn(self) -> None:
        """A turn begins: :attr:`turn` counts from zero."""
        self.turn = Spent()

    def before(self, model: str | None, estimate: Callable[[], int], notes: list[str]) -> bool:
        """Whether a request of ``estimate()`` input tokens may be sent: ``False`` (a note added to ``notes``)
        when, with ``stopOnLimit``, it would take the session to a limit. ``estimate`` is called only when a limit
        is set (estimating walks the whole conversation)."""
        limits = self.limits
        if not limits.limited or not limits.stop_on_limit:
            return True
        estimated_input = estimate()
        tokens = limits.max_session_tokens
        if tokens is not None and self.spent.tokens + estimated_input >= tokens:
            notes.append(self._stop_note("maxSessionTokens", before=True))
            return False
        cost = limits.max_session_cost
        spent = self.cost() if cost is not None else None
        if cost is not None and spent is not None and self.pricing is not None:
            price = self.pricing.price(self.pricing.model(model), UsageUpdate(input_tokens=estimated_input))
            if spent + (price or 0.0) >= cost:
                notes.append(self._stop_note("maxSessionCost", before=True))
                return False
        return True

    def after(self, model: str | None, usage: UsageUpdate, notes: list[str]) -> bool:
        """Count one request's ``usage``; ``False`` (a note added) when, with ``stopOnLimit``, the session has
        reached a limit. Warnings and, without ``stopOnLimit``, a limit reached are noted once per limit."""
        spend = RequestSpend(
            model=self.pricing.model(model) if self.pricing is not None else model or "",
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_input_tokens=usage.cached_input_tokens,
        )
        self.spent.add(spend)
        self.turn.add(spend)
        for listener in self.listeners:
            listener(spend)
        go_on = True
        limits = self.limits
        names: tuple[LimitName, ...] = ("maxSessionTokens", "maxSessionCost")
        for name in names:
            limit = limits.max_session_tokens if name == "maxSessionTokens" else limits.max_session_cost
            if limit is None:
                continue
            used = self.spent.tokens if name == "maxSessionTokens" else self.cost()
            if used is None:
                continue
            if used >= limit:
                if limits.stop_on_limit:
                    notes.append(self._stop_note(name, before=False))
                    go_on = False
                elif name not in self._reached:
                    self._reached.add(name)
                    notes.append(f"{self._used(name)}: the session reached its budget (stopOnLimit is off)")
            elif used >= limit * limits.warn_at_percent / 100 and name not in self._warned:
                self._warned.add(name)
                notes.append(
                    f"{self._used(name)}: the session has used {limits.warn_at_percent:g}% of its budget"
                )
        return go_on

    def _used(self, name: LimitName) -> str:
        limits = self.limits
        if name == "maxSessionTokens":
            return f"budget.maxSessionTokens: {self.spent.tokens} of {limits.max_session_tokens} tokens used"
        return (
            f"budget.maxSessionCost: {describe_cost(self.cost())} of "
            f"{describe_cost(cast('float', limits.max_session_cost))} spent"
        )

    def _stop_note(self, name: LimitName, *, before: bool) -> str:
        if before:
            return f"{self._used(name)}; the next model request would reach the limit, so it was not sent"
        return f"{self._used(name)}; the session reached its budget and the turn stopped"
