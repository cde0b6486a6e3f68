"""clock-skew against a real broker and a real client process under libfaketime.

A broker's JVM skewed +1 h stamps LogAppendTime an hour ahead and true time again after the
heal. A confluent-kafka producer process
started the way the harness starts skewed clients, 2 h behind: its records carry a CreateTime
2 h behind, a topic with message.timestamp.before.max.ms = 1 h rejects them
(librdkafka: INVALID_RECORD), and the process's own bookkeeping clock (now_ms) keeps true time;
the brokers' clocks are not touched, so that test runs on the default KRaft cluster, shared
(the plugin's pool), with topics of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from harness import KafkaCluster
from harness.common import faketime
from harness.common.waiting import wait_until
from tests.integration.conftest import ClusterFactory

pytestmark = pytest.mark.docker

HOUR_MS = 3_600_000
TOPIC = "appended"


def stamp_of_a_new_record(cluster: KafkaCluster) -> int:
    """Produce one record to partition 0 and read back its timestamp (LogAppendTime)."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    offsets: list[int] = []
    producer.produce(TOPIC, b"x", partition=0, on_delivery=lambda e, m: offsets.append(m.offset()))
    assert producer.flush(30) == 0 and offsets
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": "t",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(TOPIC, 0, offsets[0])])
        msg = consumer.poll(30)
        assert msg is not None and msg.error() is None
        return int(msg.timestamp()[1])
    finally:
        consumer.close()


def test_a_broker_clock_jumps_ahead_and_back(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=1, fake_clock=True)
    cluster.admin.create_topic(TOPIC, 1, 1, {"message.timestamp.type": "LogAppendTime"})
    assert stamp_of_a_new_record(cluster) < time.time() * 1000 + 600_000

    fault = cluster.clock_skew(1, 3600)
    # The JVM reads its offset file at most once a second: a record stamped after that is
    # an hour ahead.
    wait_until(
        lambda: stamp_of_a_new_record(cluster),
        60,
        "a record stamped an hour ahead",
        done=lambda ts: ts > time.time() * 1000 + 3000_000,
    )
    inject = next(e.fields for e in cluster.history.events if e.kind == "fault.inject")
    assert (inject["fault"], inject["offset_s"], inject["level"]) == ("clock-skew", 3600, "+3600 s")

    fault.heal()
    wait_until(
        lambda: stamp_of_a_new_record(cluster),
        60,
        "a record stamped at true time after the heal",
        done=lambda ts: ts < time.time() * 1000 + 600_000,
        retry_on=Exception,
    )
    heal = next(e.fields for e in cluster.history.events if e.kind == "fault.heal")
    assert heal["offset_s"] == 3600


CLIENT = """
import json, sys, time
from confluent_kafka import Producer
from harness.results.history import now_ms
bootstrap, bounded, free = sys.argv[1:4]
p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "retries": 0})
out = {"now_ms": now_ms(), "time_ms": int(time.time() * 1000), "bounded": [], "free": []}
def report(topic):
    return lambda err, msg: out[topic].append(
        f"{err.name()}: {err.str()}" if err is not None else msg.timestamp()[1]
    )
for _ in range(3):
    p.produce(bounded, b"x", on_delivery=report("bounded"))
    p.produce(free, b"x", on_delivery=report("free"))
p.flush(60)
print(json.dumps(out))
"""


@pytest.mark.kafka_cluster(mode="kraft", shared=True)
def test_a_client_two_hours_behind_is_rejected_by_a_bounded_topic(
    kafka_cluster: KafkaCluster, tmp_path: Path
) -> None:
    cluster, bounded, free = kafka_cluster, "skew-bounded", "skew-free"
    cluster.admin.create_topic(bounded, 1, 1, {"message.timestamp.before.max.ms": str(HOUR_MS)})
    cluster.admin.create_topic(free, 1, 1)
    clock = tmp_path / "clocks" / "producer.offset"
    faketime.write_offset(clock, -7200)
    started_ms = time.time() * 1000
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, cluster.bootstrap_servers, bounded, free],
        env=faketime.environment(clock),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    ended_ms = time.time() * 1000
    # The process's own wall clock is 2 h behind; the harness's clock in it is not.
    assert out["time_ms"] < started_ms - 7000_000
    assert started_ms - 1000 <= out["now_ms"] <= ended_ms + 1000
    # CreateTime from the skewed clock: 2 h behind, and refused where the bound is 1 h.
    assert len(out["free"]) == 3 and all(ts < started_ms - 7000_000 for ts in out["free"])
    # librdkafka names the broker's refusal INVALID_RECORD ("Broker failed to validate record")
    # here; the harness's producer got INVALID_TIMESTAMP ("Broker: Invalid timestamp").
    assert len(out["bounded"]) == 3, out
    assert all(e.split(":")[0] in ("INVALID_RECORD", "INVALID_TIMESTAMP") for e in out["bounded"])
