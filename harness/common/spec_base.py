"""What every typed spec model shares, below every layer that declares one: the strict base
model, the bounds (docs/spec.md "Bounds") and the Kafka-setting scalar. Fault kinds (harness.faults)
and the workload's sub-models declare their options with these, so no layer above has to be
imported to parse a spec's part."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints

# --- bounds: every number a spec takes has an upper one (docs/spec.md "Bounds"); floats are finite.
# A value past them is a typo or hostile input; refusing it in `validate` beats a cell that
# runs for years, a producer that allocates terabytes or an overflow deep in a check.
MAX_SECONDS = 86_400  # a cell runs at most a day: at_s, duration_s, timeouts
MAX_MS = MAX_SECONDS * 1000  # the same day in ms: processing times, triggers, txn timeouts
MAX_PARTITIONS = 1000  # a laptop cluster of <= 5 brokers; shipped experiments use <= 6
MAX_MEMBERS = 64  # members of one consumer set or pipeline: each is a process on this machine
MAX_RECORDS = 1_000_000_000  # records a producer sends (the soak sends 5e6) and per trigger
MAX_RATE = 1_000_000  # records per second: far above what one producer process reaches
MAX_RECORD_SIZE = 1_048_576  # bytes: the producer's default max.request.size (1 MiB)
MAX_TXN_RECORDS = 1_000_000  # records per transaction: all held until commit or abort
MAX_SEED = 2**63 - 1  # a seed is a 64-bit number (history.parquet stores it as int64)
MAX_SETTING = 2**63 - 1  # a Kafka setting is at most a Java long

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]+$")]


def _setting(value: Any) -> Any:
    """A Kafka setting's number: finite, within a Java long (one message, not one per type)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a finite number (got {value!r})")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SETTING:
        raise ValueError(f"expected an integer within a Java long (+-{MAX_SETTING})")
    return value


Scalar = Annotated[str | int | float | bool, AfterValidator(_setting)]
Settings = dict[str, Scalar]

# The client library a producer or group member runs on: librdkafka (confluent-kafka, in a
# Python process) or Kafka's Java clients (a JVM on the cluster version's jars).
Client = Literal["librdkafka", "java"]


class StrictModel(BaseModel):
    """Unknown keys are errors; no silent coercion (YAML already gives typed values)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ClientSettings(StrictModel):
    """Settings for one client library only, over `config` when that client runs: an
    experiment whose matrix runs both clients gives each its own names (librdkafka's
    `debug`, Java's `request.timeout.ms` bound), and the other's block is not used."""

    librdkafka: Settings = {}
    java: Settings = {}

    def over(self, config: Settings, client: str) -> Settings:
        """`config` with `client`'s own settings over it."""
        own: Settings = self.java if client == "java" else self.librdkafka
        return {**config, **own}
