"""`group.protocol: consumer` (KIP-848) in a spec: the classic protocol's settings both
clients refuse under it are errors naming the key, before anything starts."""

from __future__ import annotations

from tests.unit.test_producer_process import problems

BASE = """
name: t
producer: {acks: all, rate: 10, duration_s: 5}
consumer: {kind: group, client: CLIENT, config: CONFIG}
"""


def spec(client: str, config: str) -> str:
    return BASE.replace("CLIENT", client).replace("CONFIG", config)


def test_the_consumer_protocol_with_its_own_settings_is_valid_for_both_clients() -> None:
    for client in ("librdkafka", "java"):
        config = (
            "{group.protocol: consumer, max.poll.interval.ms: 8000, group.remote.assignor: uniform}"
        )
        assert problems(spec(client, config)) == []


def test_the_classic_protocol_keeps_its_session_heartbeat_and_assignor() -> None:
    for client in ("librdkafka", "java"):
        for protocol in ("", "group.protocol: classic, "):
            config = "{" + protocol + "session.timeout.ms: 6000, heartbeat.interval.ms: 1000}"
            assert problems(spec(client, config)) == []


def test_classic_settings_under_the_consumer_protocol_are_errors_naming_each_key() -> None:
    config = (
        "{group.protocol: Consumer, session.timeout.ms: 6000, heartbeat.interval.ms: 1000, "
        "partition.assignment.strategy: PAS}"
    )
    for client, pas in (
        ("librdkafka", "cooperative-sticky"),
        ("java", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"),
    ):
        found = problems(spec(client, config.replace("PAS", pas)))
        for key, instead in (
            ("session.timeout.ms", "group.consumer.session.timeout.ms"),
            ("heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms"),
            ("partition.assignment.strategy", "group.remote.assignor"),
        ):
            assert any(
                f"consumer.config.{key}" in p and "group.protocol: consumer" in p and instead in p
                for p in found
            ), (client, key, found)
        assert len(found) == 3, found


def test_group_protocol_type_is_librdkafkas_own_refusal() -> None:
    config = "{group.protocol: consumer, group.protocol.type: consumer}"
    found = problems(spec("librdkafka", config))
    assert len(found) == 1 and "consumer.config.group.protocol.type" in found[0], found


def test_a_client_config_block_is_named_where_the_refused_key_is_given() -> None:
    text = BASE.replace("CLIENT", "librdkafka").replace(
        "config: CONFIG",
        "config: {group.protocol: consumer}, "
        "client_config: {librdkafka: {session.timeout.ms: 6000}, java: {}}",
    )
    found = problems(text)
    assert len(found) == 1 and "consumer.client_config.librdkafka.session.timeout.ms" in found[0]
    # the other client's block is not what this client is given
    text = text.replace("librdkafka: {session.timeout.ms: 6000}, java: {}", "java: {}")
    assert problems(text) == []


def test_a_pipeline_member_under_the_consumer_protocol_is_checked_too() -> None:
    text = (
        "name: t\nproducer: {acks: all, rate: 10, duration_s: 5}\n"
        "pipeline: {config: {group.protocol: consumer, session.timeout.ms: 6000}}\n"
    )
    found = problems(text)
    assert len(found) == 1 and "pipeline.config.session.timeout.ms" in found[0], found
