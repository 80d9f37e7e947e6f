"""Model prices from the maintained ``genai-prices`` table: the cost of a request from its usage.

The table knows the big providers' models (OpenAI, Anthropic, Google, Azure OpenAI, xAI), each provider named
once in :data:`~hive_providers.table.PROVIDERS` (``prices_as``). A model it does not know, and every model of a
provider it does not cover (a local server, in-process llama.cpp), has an unknown cost, never a made-up 0.

Loading the table takes seconds (the package and its data), so it is imported when a price is first asked for:
by a ``budget.maxSessionCost`` check or a surface showing the cost, never by a session that asks neither.
"""

from __future__ import annotations

from hive_core.chat import UsageUpdate

from .registry import UnknownProviderError
from .registry import provider_spec
from .settings import ProviderSettings

__all__ = ["PriceTable"]


class PriceTable:
    """The :class:`~hive_core.spending.Pricing` of a session on ``settings``' provider and model."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        """The session's provider and model."""
        self._prices: dict[tuple[str, UsageUpdate], float | None] = {}

    def model(self, override: str | None, /) -> str:
        """``provider/model``: the turn's ``override``, else the session's model (``default`` when unset)."""
        return f"{self.settings.provider}/{override or self.settings.model or 'default'}"

    def price(self, model: str, usage: UsageUpdate, /) -> float | None:
        """US dollars for ``usage`` on ``model`` (``provider/model``); ``None`` when the table does not know it."""
        key = (model, usage)
        if key not in self._prices:
            self._prices[key] = _price(model, usage)
        return self._prices[key]


def _price(model: str, usage: UsageUpdate) -> float | None:
    provider, _, name = model.partition("/")
    try:
        table_id = provider_spec(provider).prices_as
    except UnknownProviderError:
        return None
    if table_id is None or not name:
        return None
    from genai_prices import Usage
    from genai_prices import calc_price

    priced = Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cached_input_tokens or None,
    )
    try:
        return float(calc_price(priced, name, provider_id=table_id).total_price)
    except LookupError:
        return None
