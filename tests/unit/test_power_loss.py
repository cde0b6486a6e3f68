"""power-loss without Docker: the spec turns plfs on only for cells that plan one, its rules,
the node wiring, and the fault's order of operations and history on fake nodes (a whole site
frozen before any node is rolled back; the nodes killed even when a cut fails)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import ConfigError, FaultError
from harness.faults.power_loss import PowerLoss, discarded_summary, recovery_counts
from harness.nodes.capabilities import Capabilities, PowerLossFs
from harness.nodes.capabilities.base import NEXT_ENTRYPOINT_ENV
from harness.nodes.topology import plan_nodes
from harness.spec import load_spec
from tests.unit.fakes import FakeCluster
from tests.unit.test_spec import errors_of, write

BASE = "name: p\nproducer: {records: 100}\n"
FAULT = "faults: [{at_s: 5, kind: power-loss, target: %s, duration_s: 10}]\n"
REPORT = {
    "fault_id": "1",
    "mounts": [
        {
            "lost_bytes": 4096,
            "files": [
                {"path": "chaos-0/00000000000000000000.log", "lost": [[100, 4196]], "restored": []},
                {"path": "chaos-0/00000000000000000000.index", "lost": [], "restored": []},
            ],
            "entries": [{"op": "create", "path": "chaos-0/leader-epoch-checkpoint.tmp"}],
        }
    ],
}


def test_only_a_cell_that_plans_a_power_loss_runs_on_plfs(tmp_path: Path) -> None:
    assert load_spec(write(tmp_path, BASE)).capabilities()["power_loss_fs"] is False
    spec = load_spec(write(tmp_path, BASE + FAULT % "all", "a.yaml"))
    assert spec.capabilities()["power_loss_fs"] is True
    one = load_spec(write(tmp_path, BASE + FAULT % "broker:2", "b.yaml"))
    assert one.capabilities()["power_loss_fs"] is True


@pytest.mark.parametrize(
    ("extra", "fault", "expected"),
    [
        ("", "{at_s: 5, kind: power-loss, target: all}", "needs a duration_s"),
        ("cluster: {log_dirs: 2}\n", FAULT[9:-2] % "all", "one log directory per node"),
        ("cluster: {power_loss_fs: false}\n", FAULT[9:-2] % "all", "power_loss_fs is false"),
        ("", "{at_s: 5, kind: power-loss, duration_s: 5, writeback_s: -1}", "writeback_s"),
        ("", "{at_s: 5, kind: power-loss, duration_s: 5, target: nowhere}", "target"),
        ("", "{at_s: 5, kind: power-loss, duration_s: 5, unsynced_tail: half}", "unsynced_tail"),
        ("cluster: {log_dir_size_mb: 64}\n", FAULT[9:-2] % "all", "with sized log directories"),
        (
            "cluster: {mode: zookeeper, version: 3.9.2}\n",
            FAULT[9:-2] % "all"
            + ", {at_s: 30, kind: kill, target: broker:1, wipe: true, duration_s: 5}",
            "with kill wipe",
        ),
    ],
)
def test_power_loss_rules(tmp_path: Path, extra: str, fault: str, expected: str) -> None:
    errors = errors_of(tmp_path, BASE + extra + f"faults: [{fault}]\n")
    assert any(expected in e for e in errors), errors


def test_a_node_on_plfs_gets_fuse_the_capability_and_the_entrypoint_chain() -> None:
    caps = Capabilities({"power_loss_fs": True, "fake_clock": True, "link_proxies": False})
    caps.all[-1]._binary = Path("/bin/true")  # type: ignore[attr-defined]  # no make plfs here
    node = plan_nodes("kraft", 1, 0, [31001])[0]
    wiring = caps.wire(node, [node], "r1")
    assert wiring.devices == ("/dev/fuse:/dev/fuse:rwm",) and wiring.cap_add == ("SYS_ADMIN",)
    assert wiring.security_opt == ("apparmor=unconfined",)
    assert [e.path for e in wiring.entrypoints] == [
        "/opt/kafka-chaos-clock/entrypoint",
        "/opt/kafka-chaos-plfs/entrypoint",
    ]
    assert wiring.env["KAFKA_CHAOS_PLFS_DIRS"] == "/var/lib/kafka/data"
    assert NEXT_ENTRYPOINT_ENV not in wiring.env
    assert wiring.archive_dirs == ("/var/lib/kafka-chaos-plfs/0/data",)  # not the FUSE mount
    off = Capabilities({}).wire(node, [node], "r1")
    assert off.devices == () and off.cap_add == ()


def test_a_whole_site_is_frozen_before_any_node_is_rolled_back_then_killed() -> None:
    cluster = FakeCluster(power_loss_fs=True)
    for node in cluster.nodes:
        node.plfs_answer = (0, "plfs: cut\n" + json.dumps(REPORT))
    fault = PowerLoss.of("all", duration_s=10, writeback_s=5).make(cluster, "all")
    fault.inject()
    ops = [op for _, op, _ in cluster.ops()]
    assert ops[:3] == ["SIGSTOP"] * 3 and sorted(ops[3:6]) == ["cut"] * 3
    assert ops[6:] == ["kill"] * 3
    cut = cluster.nodes[0].commands[-1]
    assert "--writeback-s" in cut and cut[cut.index("--writeback-s") + 1] == "5"
    assert "--exit" in cut  # plfs goes with the power: the FUSE connection is aborted
    (event,) = [e.fields for e in cluster.history.events if e.kind == "fault.inject"]
    assert event["target"] == "all" and event["nodes"] == ["broker-1", "broker-2", "broker-3"]
    (cut_event,) = [e.fields for e in cluster.history.events if e.kind == "fault.discarded"]
    dropped = cut_event["discarded"]["broker-2"]
    assert (dropped["files"], dropped["bytes"], dropped["entries"]) == (1, 4096, 1)
    assert dropped["segments"] == ["chaos-0/00000000000000000000.log"]
    for node in cluster.nodes:
        node.log_text += "INFO Recovering unflushed segment 0 in dir /var/lib/kafka/data\n"
    fault.heal()
    (healed,) = [e.fields for e in cluster.history.events if e.kind == "fault.heal"]
    assert healed["came_back"] == {n.name: True for n in cluster.nodes}
    assert healed["recovery"]["broker-1"]["unflushed_segments"] == 1


def test_an_unsynced_tail_of_zeros_reaches_plfs_and_the_history() -> None:
    cluster = FakeCluster(power_loss_fs=True)
    cluster.nodes[1].plfs_answer = (0, json.dumps(REPORT))
    fault = PowerLoss.of("broker:2", duration_s=10, unsynced_tail="zeros").make(cluster, 2)
    fault.inject()
    cut = cluster.nodes[1].commands[-1]
    assert cut[cut.index("--unsynced-tail") + 1] == "zeros"
    (event,) = [e.fields for e in cluster.history.events if e.kind == "fault.inject"]
    assert event["unsynced_tail"] == "zeros"
    plain = FakeCluster(power_loss_fs=True)
    plain.nodes[1].plfs_answer = (0, json.dumps(REPORT))
    PowerLoss.of("broker:2", duration_s=10).make(plain, 2).inject()
    assert "--unsynced-tail" not in plain.nodes[1].commands[-1]  # plfs's default: dropped


def test_a_failed_cut_still_kills_the_node_and_says_why() -> None:
    cluster = FakeCluster(power_loss_fs=True)
    cluster.nodes[1].plfs_answer = (1, "plfs: no control socket")
    fault = PowerLoss.of("broker:2", duration_s=10).make(cluster, 2)
    with pytest.raises(FaultError, match=r"could not cut broker-2.*no control socket"):
        fault.inject()
    assert cluster.nodes[1].state == "exited" and [op for _, op, _ in cluster.ops()] == [
        "SIGSTOP",
        "cut",
        "kill",
    ]


def test_without_plfs_the_fault_says_how_to_get_it() -> None:
    with pytest.raises(ConfigError, match="power_loss_fs=True"):
        PowerLoss.of("broker:1", duration_s=5).make(FakeCluster(), 1)
    assert PowerLossFs in PowerLoss.needs


def test_the_reports_and_the_log_are_read_for_what_they_say() -> None:
    assert discarded_summary({}) == {"files": 0, "bytes": 0, "entries": 0, "segments": []}
    counts = recovery_counts(
        "Recovering unflushed segment 0\nFound invalid messages in log segment\nnoise\n"
    )
    assert counts["unflushed_segments"] == 1 and counts["invalid_bytes_truncated"] == 1
    assert counts["truncations"] == 0
