"""Disks without Docker: the spec's rules for log_dirs, log_dir_size_mb and disk-full, the
log directories a broker is given, and the disk-full heal's bookkeeping (what Kafka did,
read from its log, and the operator's repair it leads to)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cluster import KafkaCluster
from harness.errors import ConfigError
from harness.faults.disk_full import DiskFullFault, what_kafka_did
from harness.faults.registry import make_fault
from harness.nodes.topology import DATA_DIR, kafka_properties, log_dir_paths, plan_nodes
from harness.spec import load_spec
from tests.unit.fakes import FakeCluster, FakeNode
from tests.unit.test_spec import errors_of, write

BASE = "name: d\nproducer: {records: 100}\n"
OFFLINE = f"WARN Stopping serving logs in dir {DATA_DIR} (kafka.log.LogManager)"
HALT = (
    f"ERROR Shutdown broker because all log dirs in {DATA_DIR} have failed (kafka.log.LogManager)"
)


def test_a_broker_gets_its_log_directories_and_the_first_is_the_old_one() -> None:
    assert log_dir_paths(1) == (DATA_DIR,)
    assert log_dir_paths(3) == (DATA_DIR, f"{DATA_DIR}-1", f"{DATA_DIR}-2")
    node = plan_nodes("zookeeper", 1, 0, [31001])[1]
    text = kafka_properties("zookeeper", node, [node], {}, None, 2)
    assert f"log.dirs={DATA_DIR},{DATA_DIR}-1" in text.splitlines()


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"log_dirs": 4}, "log_dirs must be an integer from 1 to 3"),
        ({"log_dirs": 2, "version": "3.6.2"}, "from Kafka 3.7"),
        ({"log_dir_size_mb": 8}, "log_dir_size_mb must be from 16"),
    ],
)
def test_the_cluster_refuses_disks_it_cannot_have(kwargs: dict[str, object], expected: str) -> None:
    args: dict[str, object] = {"version": "3.9.2", **kwargs}
    with pytest.raises(ConfigError, match=expected):
        KafkaCluster("kraft", 3, str(args.pop("version")), **args)  # type: ignore[arg-type]


def test_zookeeper_mode_has_jbod_on_any_version() -> None:
    KafkaCluster("zookeeper", 3, "3.6.2", log_dirs=3, log_dir_size_mb=64)


def test_disk_full_sizes_the_log_directories_unless_the_spec_does(tmp_path: Path) -> None:
    plain = load_spec(write(tmp_path, BASE))
    assert plain.capabilities()["log_dir_size_mb"] is None  # no disk fault: as today, unbounded
    fill = "faults: [{at_s: 1, kind: disk-full, target: broker:2, duration_s: 5}]\n"
    auto = load_spec(write(tmp_path, BASE + fill, "a.yaml"))
    assert auto.capabilities()["log_dir_size_mb"] == 256
    sized = load_spec(write(tmp_path, BASE + "cluster: {log_dir_size_mb: 64}\n" + fill, "b.yaml"))
    assert sized.capabilities()["log_dir_size_mb"] == 64


@pytest.mark.parametrize(
    ("cluster", "fault", "expected"),
    [
        ("{}", "log_dir: 1", "faults[0].log_dir: expected an index below cluster.log_dirs (1)"),
        ("{log_dirs: 2}", "log_dir: 2", "below cluster.log_dirs (2), 0..1 (got 2)"),
        ("{log_dirs: 2}", "log_dir: -1", "faults[0].log_dir"),
        ("{mode: zookeeper}", "target: zookeeper", "faults[0].target"),
        ("{controllers: 1}", "target: broker:101", "faults[0].target"),
        ("{log_dirs: 2, version: 3.6.2}", "log_dir: 0", "cluster.log_dirs: expected 1 in KRaft"),
        ("{log_dir_size_mb: 10000}", "log_dir: 0", "cluster.log_dir_size_mb"),
        ("{}", "wipe: true", "disk-full takes no wipe"),
    ],
)
def test_disk_full_rules(tmp_path: Path, cluster: str, fault: str, expected: str) -> None:
    text = BASE + f"cluster: {cluster}\nfaults: [{{at_s: 1, kind: disk-full, {fault}}}]\n"
    errors = errors_of(tmp_path, text)
    assert any(expected in e for e in errors), errors


def test_what_kafka_did_is_read_from_its_log() -> None:
    log = "\n".join(
        [
            "ERROR Error while appending records to chaos-0 in dir /var/lib/kafka/data",
            "java.io.IOException: No space left on device",
            OFFLINE,
            f"WARN [ReplicaManager broker=2] Stopping serving replicas in dir {DATA_DIR}",
            HALT,
        ]
    )
    seen = what_kafka_did(log)
    assert seen["offline_dirs"] == [DATA_DIR]
    assert seen["shutdown"] == f"Shutdown broker because all log dirs in {DATA_DIR} have failed"
    assert seen["storage_errors"] == 1
    assert what_kafka_did("INFO all fine") == {
        "offline_dirs": [],
        "shutdown": None,
        "storage_errors": 0,
    }


def _sized_broker(cluster: FakeCluster, size_mb: int, dirs: int = 1, on_fill: str = "") -> FakeNode:
    """Broker 2 with `dirs` log directories of `size_mb` each; `on_fill`: what Kafka logs."""
    node = cluster.node(2)
    node.log_dir_mb = size_mb
    node.log_dirs = log_dir_paths(dirs)
    node.on_fill = [on_fill] if on_fill else []
    return node


def _broker_ops(cluster: FakeCluster) -> list[str]:
    return [op for _, op, name in cluster.ops() if name == "broker-2"]


def _disk_full(cluster: FakeCluster, **options: object) -> DiskFullFault:
    fault = make_fault("disk-full", cluster, 2, options)  # type: ignore[arg-type]
    assert isinstance(fault, DiskFullFault)
    return fault


def test_an_offline_directory_gets_the_broker_restarted_after_the_space_is_freed() -> None:
    cluster = FakeCluster()
    _sized_broker(cluster, 64, dirs=2, on_fill=OFFLINE)
    fault = _disk_full(cluster, log_dir=0).inject()
    fault.heal()
    assert _broker_ops(cluster) == [
        "fill 0",
        "free 0",
        "stop",
        "start",
    ]  # freed first, then restarted
    inject, heal = cluster.history.events
    assert inject.fields["log_dirs"] == [DATA_DIR] and heal.fields["filled_mb"] == 64.0
    assert heal.fields["offline_dirs"] == [DATA_DIR]
    assert heal.fields["restarted"] is True and heal.fields["broker_stopped"] is False
    assert heal.fields["freed_mb"] == 64.0


def test_a_broker_that_halted_is_started_and_every_directory_was_filled() -> None:
    cluster = FakeCluster()
    node = _sized_broker(cluster, 32, dirs=2, on_fill=HALT)
    fault = _disk_full(cluster).inject()
    node.state = "exited"  # Kafka halted
    fault.heal()
    assert _broker_ops(cluster) == ["fill 0", "fill 1", "free 0", "free 1", "start"]
    heal = cluster.history.events[-1].fields
    assert heal["broker_stopped"] is True and heal["restarted"] is True
    assert heal["shutdown"].startswith("Shutdown broker because all log dirs")
    assert heal["log_dirs"] == [DATA_DIR, f"{DATA_DIR}-1"] and heal["freed_mb"] == 64.0


def test_a_full_disk_kafka_never_noticed_is_freed_and_nothing_restarted() -> None:
    cluster = FakeCluster()
    _sized_broker(cluster, 32)
    fault = _disk_full(cluster).inject()
    fault.heal()
    assert _broker_ops(cluster) == ["fill 0", "free 0"]
    heal = cluster.history.events[-1].fields
    assert heal["restarted"] is False and heal["offline_dirs"] == [] and heal["shutdown"] is None


def test_a_broker_down_before_its_disk_filled_is_left_to_the_fault_that_downed_it() -> None:
    cluster = FakeCluster()
    node = _sized_broker(cluster, 32)
    node.state = "exited"  # killed by another fault
    fault = _disk_full(cluster).inject()
    fault.heal()
    assert _broker_ops(cluster) == ["fill 0", "free 0"]  # not started: the kill's heal does that
    heal = cluster.history.events[-1].fields
    assert heal["down_at_inject"] is True and heal["freed_mb"] == 32.0


def test_a_size_command_that_answers_no_number_is_a_fault_error_naming_it() -> None:
    """Seen once under load: a free's exec answered nothing (code 0): an IndexError then, a
    FaultError naming the container and the answer now."""
    from harness.errors import FaultError
    from harness.nodes.disks import NodeDisks

    disks = object.__new__(NodeDisks)
    disks.container = "broker-1"
    assert disks._last_number("1048576\n", "free") == 1048576
    for answer in ("", "\n", "stat: cannot stat\n"):
        with pytest.raises(FaultError, match=r"broker-1: free answered .*expected a size"):
            disks._last_number(answer, "free")
