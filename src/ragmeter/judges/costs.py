"""Token prices, cost per call and the ``max_cost_usd`` budget.

Prices are US dollars per million tokens. The built-in table covers a few
hosted models and is only a convenience — prices change, so put the ones you
pay under ``judge.prices`` (they win). A model with no known price is
*unpriced*: its calls are counted and their cost reported as unknown, never as
0; a budget cannot be enforced for it, so ``max_cost_usd`` with an unpriced
model is a configuration error.

>>> price = price_for("gpt-4o-mini-2024-07-18")
>>> price.input_per_mtok, price.output_per_mtok
(0.15, 0.6)
>>> call_cost(price, prompt_tokens=1000, completion_tokens=200)
0.00027
>>> price_for("my-local-llama") is None
True
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragmeter.judges.config import Price

PRICE_TABLE_AS_OF = "2025-06"
"""When the built-in prices were last checked against the providers' price pages."""

PRICE_TABLE: dict[str, Price] = {
    "gpt-4o": Price(input_per_mtok=2.5, output_per_mtok=10.0),
    "gpt-4o-mini": Price(input_per_mtok=0.15, output_per_mtok=0.6),
    "gpt-4.1": Price(input_per_mtok=2.0, output_per_mtok=8.0),
    "gpt-4.1-mini": Price(input_per_mtok=0.4, output_per_mtok=1.6),
    "gpt-4.1-nano": Price(input_per_mtok=0.1, output_per_mtok=0.4),
    "gpt-3.5-turbo": Price(input_per_mtok=0.5, output_per_mtok=1.5),
}
"""Built-in prices (USD per million tokens), as of :data:`PRICE_TABLE_AS_OF`."""


def price_for(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``model``: exact name, else the longest ``name-`` prefix (dated snapshots).

    ``overrides`` (``judge.prices``) are searched before the built-in table.
    """
    for table in (overrides or {}, PRICE_TABLE):
        if model in table:
            return table[model]
        prefixes = [name for name in table if model.startswith(name + "-")]
        if prefixes:
            return table[max(prefixes, key=len)]
    return None


def call_cost(price: Price | None, *, prompt_tokens: int, completion_tokens: int) -> float | None:
    """Cost in USD of one call; ``None`` when the model is unpriced."""
    if price is None:
        return None
    return round(
        (prompt_tokens * price.input_per_mtok + completion_tokens * price.output_per_mtok) / 1_000_000, 12
    )


def estimate_prompt_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """A deliberately high estimate of the prompt tokens of ``messages`` (no tokenizer needed).

    One token per 3 characters plus 8 per message: real tokenizers average about
    4 characters per token on English text, so budgets reserve more than they spend.

    >>> estimate_prompt_tokens([{"role": "user", "content": "x" * 30}])
    18
    """
    return sum(math.ceil(len(m.get("content", "")) / 3) + 8 for m in messages)


class BudgetExhaustedError(Exception):
    """A call was not made because it could take the run past ``max_cost_usd``."""


@dataclass
class Reservation:
    """Money set aside for one call before it is made."""

    amount: float


class CostMeter:
    """Tracks spending across threads and stops before ``max_cost_usd`` could be exceeded.

    Before each call the worst case (estimated prompt tokens and the full
    ``max_tokens``) is reserved; after it the real cost replaces the reservation.
    Once one reservation is refused the meter stays exhausted, so a run stops
    cleanly instead of squeezing in smaller calls.

    >>> meter = CostMeter(max_cost_usd=0.001)
    >>> price = Price(input_per_mtok=1.0, output_per_mtok=2.0)
    >>> r = meter.reserve(price, prompt_tokens=100, completion_tokens=200)
    >>> meter.settle(r, price, prompt_tokens=100, completion_tokens=50)
    0.0002
    >>> meter.reserve(price, prompt_tokens=100, completion_tokens=1000)
    Traceback (most recent call last):
    ...
    ragmeter.judges.costs.BudgetExhaustedError: max_cost_usd 0.001 reached: spent 0.0002 USD, the next call could cost up to 0.0021 USD
    """

    def __init__(self, *, max_cost_usd: float | None) -> None:
        self.max_cost_usd = max_cost_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.exhausted = False
        self.message: str | None = None
        self._lock = threading.Lock()

    def reserve(self, price: Price | None, *, prompt_tokens: int, completion_tokens: int) -> Reservation:
        """Set aside the worst-case cost of a call, or raise :class:`BudgetExhaustedError`."""
        worst = call_cost(price, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens) or 0.0
        with self._lock:
            limit = self.max_cost_usd
            if limit is not None and (self.exhausted or self.spent_usd + self.reserved_usd + worst > limit):
                if not self.exhausted:
                    self.exhausted = True
                    self.message = (
                        f"max_cost_usd {limit:g} reached: spent {self.spent_usd:.6g} USD, "
                        f"the next call could cost up to {worst:.6g} USD"
                    )
                raise BudgetExhaustedError(self.message)
            self.reserved_usd += worst
        return Reservation(amount=worst)

    def settle(
        self,
        reservation: Reservation,
        price: Price | None,
        *,
        prompt_tokens: int | None,
        completion_tokens: int | None,
    ) -> float | None:
        """Replace the reservation by the real cost; unknown usage keeps the reserved amount."""
        if prompt_tokens is None or completion_tokens is None:
            cost = reservation.amount if price is not None else None
        else:
            cost = call_cost(price, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        with self._lock:
            self.reserved_usd -= reservation.amount
            self.spent_usd += cost or 0.0
        return cost

    def release(self, reservation: Reservation) -> None:
        """Give back a reservation whose call cost nothing (it failed before an answer)."""
        with self._lock:
            self.reserved_usd -= reservation.amount
