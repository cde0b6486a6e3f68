"""The spec's `producer` part: what the producer sends, how fast, and in which transactions.

This sub-model crosses the process boundary as it is (its pydantic JSON, the producer
process's `--spec`), so it imports only pydantic and harness.common.spec_base: a producer
process that parses it loads no fault kind (import-linter contract "light-processes").
Cross-field rules (idempotence needs acks=all, a transactional producer needs both) are
harness.spec.problems'; harness.spec.models re-exports both models.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StringConstraints

from harness.common.spec_base import (
    MAX_MS,
    MAX_RATE,
    MAX_RECORD_SIZE,
    MAX_RECORDS,
    MAX_SECONDS,
    MAX_TXN_RECORDS,
    Client,
    ClientSettings,
    Settings,
    StrictModel,
)


def _normalise_acks(raw: Any) -> Any:
    if isinstance(raw, bool):
        return raw  # rejected by the Literal with the list of choices
    text = str(raw).strip().lower()
    if text in ("all", "-1"):
        return "all"
    return text if text in ("0", "1") else raw


class TransactionsSpec(StrictModel):
    """A transactional producer: records in transactions of `records_per_txn`, every
    `abort_every`-th one aborted on purpose (0: none). It runs as its own process."""

    records_per_txn: int = Field(default=10, ge=1, le=MAX_TXN_RECORDS)
    abort_every: int = Field(default=0, ge=0, le=MAX_RECORDS)
    transactional_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]+$")] = "chaos-txn"
    timeout_ms: int = Field(default=60000, ge=1000, le=MAX_MS)  # transaction.timeout.ms


class ProducerSpec(StrictModel):
    client: Client = "librdkafka"
    acks: Annotated[Literal["0", "1", "all"], BeforeValidator(_normalise_acks)] = "all"
    enable_idempotence: bool | None = None
    records: int | None = Field(default=None, ge=1, le=MAX_RECORDS)
    duration_s: float | None = Field(default=None, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    rate: float = Field(default=500, gt=0, le=MAX_RATE, allow_inf_nan=False)
    record_size: int = Field(default=100, ge=24, le=MAX_RECORD_SIZE)
    config: Settings = {}
    client_config: ClientSettings = ClientSettings()
    transactions: TransactionsSpec | None = None

    @property
    def client_settings(self) -> Settings:
        """What the chosen client is given: `config`, its `client_config` block over it."""
        return self.client_config.over(self.config, self.client)

    @property
    def idempotence(self) -> bool:
        """Unset means on exactly when acks=all (librdkafka allows it only there)."""
        if self.enable_idempotence is None:
            return self.acks == "all"
        return self.enable_idempotence

    @property
    def planned_duration_s(self) -> float:
        """When the producer stops: records at the rate, or duration_s, whichever comes first."""
        ends = [self.duration_s] if self.duration_s is not None else []
        if self.records is not None:
            ends.append(self.records / self.rate)
        return min(ends) if ends else 0.0

    @property
    def planned_records(self) -> int:
        """How many records it plans to send (at most: a fault may hold it up)."""
        return math.ceil(self.planned_duration_s * self.rate)
