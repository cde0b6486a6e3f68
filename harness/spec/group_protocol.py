"""Consumer settings KIP-848's group protocol (`group.protocol: consumer`) refuses, as spec
problems.

Under that protocol the broker runs the group: the session timeout and the heartbeat
interval are its settings (`group.consumer.session.timeout.ms`,
`group.consumer.heartbeat.interval.ms`, or per group), and it assigns the partitions itself
(`group.remote.assignor` names one of its assignors). Both clients refuse the classic
protocol's names when the consumer is created (measured with librdkafka 2.16 and Kafka
4.3.1's Java consumer: "`session.timeout.ms` is not supported for `group.protocol=consumer`
... It is defined broker side"; "ConfigException: session.timeout.ms cannot be set when
group.protocol=CONSUMER"), which would crash every member of the cell at run time; here it
is an error naming the key before anything starts.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.spec.consumers import GroupConsumerSpec

Problem = tuple[str, str]

CONSUMER_PROTOCOL = "consumer"
# Refused by both clients under the consumer protocol -> what decides it instead.
REFUSED: dict[str, str] = {
    "session.timeout.ms": "the broker's group.consumer.session.timeout.ms",
    "heartbeat.interval.ms": "the broker's group.consumer.heartbeat.interval.ms",
    "partition.assignment.strategy": "the broker's assignor (group.remote.assignor names one)",
}
# Refused by librdkafka alone (Kafka's Java consumer has no such setting).
REFUSED_LIBRDKAFKA: dict[str, str] = {
    "group.protocol.type": "the protocol itself",
}


def group_protocol(settings: Mapping[str, object]) -> str:
    """The group protocol these client settings choose (`classic` unless they say)."""
    return str(settings.get("group.protocol", "classic")).strip().lower()


def refused_settings(settings: Mapping[str, object], client: str) -> dict[str, str]:
    """Of these settings (what `client` is given), those it refuses because they choose the
    consumer protocol -> what decides each instead; {} under the classic protocol."""
    if group_protocol(settings) != CONSUMER_PROTOCOL:
        return {}
    refused = dict(REFUSED)
    if client == "librdkafka":
        refused.update(REFUSED_LIBRDKAFKA)
    return {key: refused[key] for key in sorted(set(settings) & set(refused))}


def _problem(key_path: str, client: str, instead: str) -> Problem:
    return (
        key_path,
        f"not allowed with group.protocol: consumer ({client} refuses it; {instead} decides it)",
    )


def group_protocol_problems(path: str, c: GroupConsumerSpec) -> list[Problem]:
    """The settings the set's running client refuses under `group.protocol: consumer`, each
    named where it is given (`config` or the client's `client_config` block)."""
    own = c.client_config.java if c.client == "java" else c.client_config.librdkafka
    return [
        _problem(
            f"{path}.{f'client_config.{c.client}' if key in own else 'config'}.{key}",
            c.client,
            instead,
        )
        for key, instead in refused_settings(c.client_settings, c.client).items()
    ]


def pipeline_protocol_problems(config: Mapping[str, object]) -> list[Problem]:
    """The same for a pipeline's members (librdkafka consumers; `pipeline.config`)."""
    return [
        _problem(f"pipeline.config.{key}", "librdkafka", instead)
        for key, instead in refused_settings(config, "librdkafka").items()
    ]
