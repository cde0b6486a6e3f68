"""A pipeline member SIGKILLed between a commit that landed and its `consumed` lines: its next
process finds the batch in its pending file and writes the lines iff the group's committed
offsets (after its new producer ended the old transaction) are past them. Against a real
single-broker cluster: the member first copies 40 records in transactions; the states a
SIGKILL leaves are then laid out in its files, and the member is started again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from confluent_kafka import Producer

from harness.results.member_files import ConsumedLine, MemberPaths, PendingBatch, parse_consumed
from harness.spec.consumers import PipelineSpec
from harness.workload.member_process import member_command
from harness.workload.pipeline.supervisor import PipelineSupervisor
from harness.workload.records import encode_key, encode_value
from harness.workload.runtime import Runtime
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import wait_until

pytestmark = pytest.mark.docker

ONE_BROKER = {
    "offsets.topic.replication.factor": 1,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    "group.initial.rebalance.delay.ms": 0,
}
RECORDS = 40


def _member(bootstrap: str, directory: Path) -> subprocess.Popen[bytes]:
    spec = PipelineSpec(
        output="out",
        guarantee="exactly-once",
        group="chaos-pipeline",
        transactional_id="chaos-pipeline",  # member 0: chaos-pipeline-0
        timeout_ms=10000,
        config={"session.timeout.ms": 6000},
    )
    runtime = Runtime(bootstrap, "in", directory, max_s=120, seed=0)
    command = member_command(PipelineSupervisor.member_module, spec, runtime, "pipeline/m0")
    with (directory / "stderr.log").open("ab") as err:  # the child keeps its own copy
        return subprocess.Popen(command, stderr=err)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    assert proc.wait(60) == 0


def _lines(paths: MemberPaths) -> list[ConsumedLine]:
    text = paths.consumed.read_text() if paths.consumed.exists() else ""
    return [line for line in map(parse_consumed, text.splitlines()) if line is not None]


def _pending_events(paths: MemberPaths) -> list[dict[str, object]]:
    events = [json.loads(line) for line in paths.events.read_text().splitlines()]
    return [e for e in events if e["kind"] == "consumer.pending"]


def test_a_batch_left_pending_is_consumed_iff_its_commit_landed(
    start_cluster: ClusterFactory, tmp_path: Path
) -> None:
    cluster = start_cluster(mode="kraft", brokers=1, broker_config=ONE_BROKER)
    cluster.create_topic("in", partitions=2, replication_factor=1)
    cluster.create_topic("out", partitions=2, replication_factor=1)
    bootstrap = cluster.bootstrap_servers
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for seq in range(RECORDS):
        producer.produce("in", encode_value(seq, 64), key=encode_key(seq), partition=seq % 2)
    assert producer.flush(60) == 0

    directory = tmp_path / "consumers"
    directory.mkdir()
    paths = MemberPaths(directory, "pipeline/m0")
    proc = _member(bootstrap, directory)
    try:
        wait_until(lambda: len(_lines(paths)) == RECORDS, 90, "every record copied")
    finally:
        _stop(proc)
    lines = _lines(paths)
    assert sorted(ln.seq for ln in lines) == list(range(RECORDS))
    assert not paths.pending.exists()  # cleared after every batch

    # SIGKILLed after its last commit landed, before `consumed` had the last three lines.
    last = lines[-3:]
    paths.consumed.write_text("".join(ln.csv() for ln in lines[:-3]))
    assert _restart_with_pending(bootstrap, paths, last) == (3, True)
    assert _lines(paths) == lines  # each line back once, as it was

    # SIGKILLed after the lines were appended, before the pending file was cleared: the
    # lines are already there and are not written twice.
    assert _restart_with_pending(bootstrap, paths, last) == (3, True)
    assert _lines(paths) == lines

    # SIGKILLed before its commit landed (records past the committed offsets: the new
    # producer aborted the transaction): not consumed.
    ahead = [ConsumedLine(RECORDS + i, 0, RECORDS + i, 1, 9) for i in range(2)]
    assert _restart_with_pending(bootstrap, paths, ahead) == (2, False)
    assert _lines(paths) == lines


def _restart_with_pending(
    bootstrap: str, paths: MemberPaths, pending: list[ConsumedLine]
) -> tuple[object, object]:
    """Leave `pending` in the member's pending file, start it until it has resolved them
    (a new consumer.pending event), stop it: that event's (records, committed)."""
    seen = len(_pending_events(paths))
    PendingBatch(paths.pending).write([ln.csv() for ln in pending])
    proc = _member(bootstrap, paths.directory)
    try:
        wait_until(lambda: len(_pending_events(paths)) > seen, 60, "the pending batch resolved")
    finally:
        _stop(proc)
    assert not paths.pending.exists()
    event = _pending_events(paths)[seen]
    return event["records"], event["committed"]
