"""The cluster pool's decisions without Docker: which faults send the next trial to a fresh
cluster, what is kept, what is removed (a stand-in cluster records its removal). The reuse
itself, on a real cluster: tests/integration/test_explore_reuse.py."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from harness.cluster.kafka_cluster import KafkaCluster
from harness.explore.cluster_pool import ClusterPool, changes_cluster, shared_capabilities
from tests.unit.test_kind_drawings import spec_of


class StandIn:
    def __init__(self) -> None:
        self.closed = 0
        self.logs_dir: Path | None = Path("/somewhere")

    def close(self) -> None:
        self.closed += 1


def stand_in() -> tuple[StandIn, KafkaCluster]:
    s = StandIn()
    return s, cast(KafkaCluster, s)


def test_kinds_that_change_members_versions_or_disks_need_a_fresh_cluster() -> None:
    kill = {"at_s": 5, "kind": "kill", "target": "broker:1", "duration_s": 5}
    cut = {"at_s": 5, "kind": "power-loss", "target": "all", "duration_s": 5}
    assert changes_cluster([kill]) == []
    assert changes_cluster([kill, cut, cut]) == ["power-loss"]
    assert changes_cluster([{**kill, "wipe": True}]) == ["kill"]
    assert changes_cluster([{"at_s": 5, "kind": "decommission", "target": "broker:1"}]) == [
        "decommission"
    ]


def test_a_trial_keeps_its_cluster_unless_it_changed_it() -> None:
    pool = ClusterPool()
    s, cluster = stand_in()
    pool.keep(cluster, [{"at_s": 5, "kind": "pause", "target": "broker:1", "duration_s": 5}], "t0")
    assert pool.kept is cluster and s.closed == 0
    pool.close()
    assert s.closed == 1 and pool.kept is None
    s2, changed = stand_in()
    pool.keep(changed, [{"at_s": 5, "kind": "corrupt", "target": "leader-of:chaos/0"}], "t1")
    assert pool.kept is None and s2.closed == 1
    assert pool.refused == ["after t1: corrupt changed the cluster"]


def test_reuse_off_removes_every_cluster_after_its_trial() -> None:
    pool = ClusterPool(enabled=False)
    s, cluster = stand_in()
    pool.keep(cluster, [], "t0")
    assert pool.kept is None and s.closed == 1 and s.logs_dir is None


def test_ctrl_c_removes_the_running_trials_cluster_too() -> None:
    pool = ClusterPool()
    s, cluster = stand_in()
    pool.current = cluster  # handed to a cell that never returned it
    pool.close()
    assert s.closed == 1 and pool.current is None


def test_trials_share_the_capabilities_their_kinds_need() -> None:
    spec = spec_of(explore={"kinds": ["latency", "clock-skew", "power-loss", "kill"]})
    shared = shared_capabilities(spec).capabilities()
    assert shared["link_proxies"] and shared["fake_clock"]
    assert not shared["power_loss_fs"]  # a power cut changes the disks: a fresh cluster anyway
    plain = spec_of(explore={"kinds": ["kill", "pause"]})
    assert shared_capabilities(plain) == plain
