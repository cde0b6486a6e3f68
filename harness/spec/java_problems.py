"""What a `client: java` producer or group member cannot honour, as spec problems.

A setting Kafka's Java client does not know would only be logged as "supplied but isn't a
known config" and dropped; a librdkafka name (message.timeout.ms, queue.buffering.max.ms)
would silently not apply. Both are errors naming the key, with the Java name when one is
close (difflib), checked against the names of the cluster version's clients
(harness.spec.java_settings).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from harness.spec.consumers import GroupConsumerSpec
from harness.spec.java_settings import CONSUMER, PRODUCER
from harness.spec.producer import ProducerSpec

Problem = tuple[str, str]

# Java settings the spec owns through its own keys (or the harness sets).
PRODUCER_OWNED = {
    "acks": "producer.acks",
    "enable.idempotence": "producer.enable_idempotence",
    "bootstrap.servers": "the cluster",
    "client.id": "the harness (ledger-<incarnation>)",
    "key.serializer": "the harness (the ledger's keys)",
    "value.serializer": "the harness (the ledger's values)",
    "transactional.id": "producer.transactions (not yet with client: java)",
}
CONSUMER_OWNED = {
    "group.id": "consumer.group",
    "enable.auto.commit": "consumer.commit",
    "bootstrap.servers": "the cluster",
    "client.id": "the harness (the member's name)",
    "key.deserializer": "the harness",
    "value.deserializer": "the harness",
    "interceptor.classes": "the harness (it reports auto-commits through one)",
}


def _known(table: dict[str, frozenset[str]], version: str) -> tuple[frozenset[str], str]:
    """The names of `version`'s client, else (a version without a table) of every one."""
    if version in table:
        return table[version], f"Kafka {version}"
    return frozenset().union(*table.values()), f"Kafka {', '.join(sorted(table))}"


def _settings_problems(
    blocks: list[tuple[str, Mapping[str, object]]],
    owned: dict[str, str],
    table: dict[str, frozenset[str]],
    version: str,
    role: str,
) -> list[Problem]:
    """Each (key path prefix, settings) block's keys: owned by the spec, or unknown to Java."""
    known, which = _known(table, version)
    out: list[Problem] = []
    for prefix, config in blocks:
        for key in sorted(config):
            if key in owned:
                out.append((f"{prefix}.{key}", f"set through {owned[key]} instead"))
            elif key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                out.append(
                    (f"{prefix}.{key}", f"not a setting of Kafka's Java {role} ({which}){hint}")
                )
    return out


def java_producer_problems(p: ProducerSpec, version: str) -> list[Problem]:
    """A Java producer's settings; a `client_config.java` block is checked whichever client
    runs (a matrix over clients runs it in other cells)."""
    blocks: list[tuple[str, Mapping[str, object]]] = [
        ("producer.client_config.java", p.client_config.java)
    ]
    if p.client != "java":
        return _settings_problems(blocks, PRODUCER_OWNED, PRODUCER, version, "producer")
    out: list[Problem] = []
    if p.transactions is not None:
        out.append(
            (
                "producer.transactions",
                "not supported with producer.client: java yet (use client: librdkafka)",
            )
        )
    owned = {k: v for k, v in PRODUCER_OWNED.items() if k != "transactional.id"}
    if p.transactions is None:
        owned["transactional.id"] = PRODUCER_OWNED["transactional.id"]
    blocks.insert(0, ("producer.config", p.config))
    out += _settings_problems(blocks, owned, PRODUCER, version, "producer")
    return out


def java_group_problems(path: str, c: GroupConsumerSpec, version: str) -> list[Problem]:
    """As java_producer_problems, for a group set at `path` (`consumer`, `consumers[i]`)."""
    owned = {
        k: v.replace("consumer", path, 1) if v.startswith("consumer.") else v
        for k, v in CONSUMER_OWNED.items()
    }
    blocks: list[tuple[str, Mapping[str, object]]] = [
        (f"{path}.client_config.java", c.client_config.java)
    ]
    if c.client == "java":
        blocks.insert(0, (f"{path}.config", c.config))
    return _settings_problems(blocks, owned, CONSUMER, version, "consumer")
