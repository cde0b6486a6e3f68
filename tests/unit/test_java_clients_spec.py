"""`client: java` without Kafka: what a spec may ask of the Java clients, and the command
line each set's members get (Kafka's VerifiableConsumer where it can run the set as the spec
says, our GroupMember otherwise)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.results.member_files import MemberPaths
from harness.results.producer_files import IncarnationPaths
from harness.spec.consumers import GroupConsumerSpec
from harness.spec.producer import ProducerSpec
from harness.workload.java import group, producer
from harness.workload.java.launch import classpath as real_classpath
from harness.workload.java.launch import write_properties
from harness.workload.runtime import Runtime
from tests.unit.test_producer_process import problems

BASE = """
name: t
producer: {client: java, acks: all, rate: 10, duration_s: 5}
consumer: {kind: group, client: java}
"""


@pytest.fixture(autouse=True)
def _no_jars_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command lines are pure: no built Java clients needed to check them."""
    monkeypatch.setattr(
        "harness.workload.java.launch.classpath", lambda version, extra=(): f"cp-{version}"
    )


def runtime(tmp_path: Path) -> Runtime:
    return Runtime("127.0.0.1:9092", "chaos", tmp_path, 600.0, 7, "3.9.2")


def arg(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_a_java_spec_is_valid_and_librdkafka_stays_the_default() -> None:
    assert problems(BASE) == []
    assert ProducerSpec().client == "librdkafka" and GroupConsumerSpec().client == "librdkafka"


def test_a_librdkafka_setting_given_to_the_java_producer_is_an_error_naming_the_java_one() -> None:
    found = problems(
        BASE.replace("duration_s: 5}", "duration_s: 5, config: {message.timeout.ms: 1}}")
    )
    assert any(
        "producer.config.message.timeout.ms" in p and "not a setting of Kafka's Java producer" in p
        for p in found
    ), found
    found = problems(
        BASE.replace("duration_s: 5}", "duration_s: 5, config: {delivery.timeout.ms: 1}}")
    )
    assert found == []


def test_settings_the_spec_owns_and_transactions_are_refused_for_java() -> None:
    found = problems(BASE.replace("duration_s: 5}", "duration_s: 5, config: {acks: 1}}"))
    assert any("producer.config.acks" in p and "producer.acks" in p for p in found), found
    txn = BASE.replace("duration_s: 5}", "duration_s: 5, transactions: {}}")
    assert any("producer.transactions" in p and "client: java" in p for p in problems(txn))
    group_owned = BASE.replace("client: java}", "client: java, config: {group.id: x}}")
    assert any("consumer.config.group.id" in p for p in problems(group_owned))
    rdkafka_key = BASE.replace(
        "client: java}", "client: java, config: {topic.metadata.refresh.interval.ms: 1}}"
    )
    assert any("not a setting of Kafka's Java consumer" in p for p in problems(rdkafka_key))
    # The same key is fine for a librdkafka group.
    assert problems(rdkafka_key.replace("client: java, config", "config")) == []


def test_kafkas_verifiable_consumer_runs_a_set_it_can_express(tmp_path: Path) -> None:
    spec = GroupConsumerSpec(
        client="java", commit="after-process", config={"session.timeout.ms": 6000}
    )
    assert group.uses_verifiable_consumer(spec)
    paths = MemberPaths(tmp_path, "group/m0")
    argv = group.command(spec, runtime(tmp_path), paths)
    assert group.VERIFIABLE_CONSUMER in argv and "--verbose" in argv
    assert "--enable-autocommit" not in argv
    # Its arguments override its properties file: settings it takes as arguments go there.
    assert arg(argv, "--session-timeout") == "6000"
    assert arg(argv, "--assignment-strategy") == group.JAVA_ASSIGNORS
    assert arg(argv, "--reset-policy") == "earliest"
    props = Path(arg(argv, "--consumer.config")).read_text()
    assert "session.timeout.ms" not in props and "metadata.max.age.ms=5000" in props
    # The JVM is bounded by the runner's pid and the runtime's max_s.
    bounded = argv.index("io.kafkachaos.clients.Bounded")
    assert argv[bounded + 2] == "600.0" and argv[bounded + 3] == group.VERIFIABLE_CONSUMER


def test_auto_commit_reports_its_commits_through_the_interceptor(tmp_path: Path) -> None:
    spec = GroupConsumerSpec(client="java", commit="auto")
    argv = group.command(spec, runtime(tmp_path), MemberPaths(tmp_path, "group/m1"))
    assert "--enable-autocommit" in argv and arg(argv, "--session-timeout") == "45000"
    props = Path(arg(argv, "--consumer.config")).read_text()
    assert f"interceptor.classes={group.COMMIT_REPORTER}" in props


def test_what_the_tool_cannot_express_runs_on_our_member(tmp_path: Path) -> None:
    for spec in (
        GroupConsumerSpec(client="java", commit="before-process"),
        GroupConsumerSpec(client="java", processing_ms=50),
        GroupConsumerSpec(client="java", config={"group.protocol": "consumer"}),
    ):
        assert not group.uses_verifiable_consumer(spec)
        argv = group.command(spec, runtime(tmp_path), MemberPaths(tmp_path, "group/m0"))
        assert group.OUR_MEMBER in argv and arg(argv, "--commit") == spec.commit
        assert arg(argv, "--seed") == "7/group/m0"


def test_the_java_producer_command_carries_the_schedule_and_the_spec(tmp_path: Path) -> None:
    spec = ProducerSpec(client="java", acks="all", records=100, rate=50, config={"linger.ms": 20})
    argv = producer.command(spec, runtime(tmp_path), IncarnationPaths(tmp_path, "p1"), 40, 123)
    assert arg(argv, "--acks") == "-1" and arg(argv, "--idempotence") == "true"
    assert (arg(argv, "--first-seq"), arg(argv, "--end-ms"), arg(argv, "--last-seq")) == (
        "40",
        "123",
        "99",
    )
    props = Path(arg(argv, "--config")).read_text().splitlines()
    assert props == ["linger.ms=20", "metadata.max.age.ms=5000"]


def test_properties_are_escaped_as_java_reads_them(tmp_path: Path) -> None:
    path = write_properties(tmp_path / "x.properties", {"a": True, "b:c": "x=y#z", "d": "  v"})
    assert path.read_text().splitlines() == ["a=true", "b\\:c=x\\=y\\#z", "d=\\ \\ v"]


def test_clients_that_were_not_built_are_a_clear_error() -> None:
    from harness.errors import ConfigError

    with pytest.raises(ConfigError, match=r"make java-clients"):
        real_classpath("0.0.1")


def test_a_client_config_block_applies_to_its_client_only() -> None:
    spec = ProducerSpec(
        client="java",
        config={"linger.ms": 5},
        client_config={"java": {"request.timeout.ms": 5000}, "librdkafka": {"debug": "eos"}},
    )
    assert spec.client_settings == {"linger.ms": 5, "request.timeout.ms": 5000}
    rdkafka = spec.model_copy(update={"client": "librdkafka"})
    assert rdkafka.client_settings == {"linger.ms": 5, "debug": "eos"}
    # The Java block is checked in every cell: a matrix over clients runs it in others.
    bad = BASE.replace("client: java, acks", "acks").replace(
        "duration_s: 5}", "duration_s: 5, client_config: {java: {message.timeout.ms: 1}}}"
    )
    assert any("producer.client_config.java.message.timeout.ms" in p for p in problems(bad))


def test_a_librdkafka_default_gives_way_to_the_spec_under_either_alias() -> None:
    from harness.workload.producer.client_config import DEFAULT_CONFIG, defaults_under

    assert defaults_under({}) == DEFAULT_CONFIG
    assert "message.timeout.ms" not in defaults_under({"delivery.timeout.ms": 10000})
    assert "linger.ms" not in defaults_under({"queue.buffering.max.ms": 1})
    assert defaults_under({"debug": "eos"}) == DEFAULT_CONFIG
