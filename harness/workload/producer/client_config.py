"""The producer's librdkafka settings: the harness's defaults under the spec's own (by any of
librdkafka's names for a setting), and what a transactional producer adds."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from harness.spec.producer import ProducerSpec

# Experiments want a record's fate within the run, not librdkafka's 5 minutes; and the
# producer hashes keys over the partition count it knows, so it must learn of partitions
# added during the run (add-partitions) within seconds, not librdkafka's 5 minutes.
# The spec's producer.config overrides any of these.
METADATA_REFRESH_MS = 5000
DEFAULT_CONFIG: dict[str, Any] = {
    "linger.ms": 5,
    "message.timeout.ms": 30000,
    "topic.metadata.refresh.interval.ms": METADATA_REFRESH_MS,
}
# librdkafka's alias pairs: a default gives way to the spec's setting under either name
# (delivery.timeout.ms is what a Java client calls message.timeout.ms).
ALIASES = (
    frozenset({"message.timeout.ms", "delivery.timeout.ms"}),
    frozenset({"linger.ms", "queue.buffering.max.ms"}),
)


def defaults_under(settings: Mapping[str, Any]) -> dict[str, Any]:
    """DEFAULT_CONFIG without the defaults `settings` sets, under any of their names."""
    taken = set(settings)
    for names in ALIASES:
        if names & taken:
            taken |= names
    return {k: v for k, v in DEFAULT_CONFIG.items() if k not in taken}


def client_config(
    spec: ProducerSpec, bootstrap: str, name: str, logger: logging.Logger | None
) -> dict[str, Any]:
    """The client's settings for incarnation `name`; librdkafka's log lines go to `logger`
    (None: stderr)."""
    s, t = spec, spec.transactions
    conf = {
        **defaults_under(s.client_settings),
        **s.client_settings,
        "bootstrap.servers": bootstrap,
        "acks": s.acks,
        "enable.idempotence": s.idempotence,
        "client.id": f"ledger-{name}",
    }
    if logger is not None:
        conf["logger"] = logger
    if t is not None:
        conf["transactional.id"] = t.transactional_id
        conf["transaction.timeout.ms"] = t.timeout_ms
        # librdkafka refuses a message timeout past the transaction's: the harness's
        # default gives way, a message.timeout.ms the spec set stays (and is refused).
        if not ALIASES[0] & set(s.client_settings):
            conf["message.timeout.ms"] = min(int(conf["message.timeout.ms"]), t.timeout_ms)
    return conf
