"""kill with wipe: which nodes may lose their disk (spec rules and the fault itself), and what
the fault does and records (no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.faults.kill import WIPED, Kill
from harness.faults.registry import make_fault
from harness.nodes.topology import DATA_DIR
from harness.spec import expand_cells, load_spec
from tests.unit.fakes import FakeCluster, FakeNode
from tests.unit.test_spec import errors_of, write


def spec(cluster: str, target: str) -> str:
    return (
        f"name: w\nproducer: {{records: 100}}\ncluster: {cluster}\n"
        f"faults: [{{at_s: 1, kind: kill, target: '{target}', wipe: true, duration_s: 5}}]\n"
    )


@pytest.mark.parametrize(
    ("cluster", "target"),
    [
        ("{mode: zookeeper}", "broker:2"),
        ("{mode: zookeeper}", "controller"),  # a broker in ZooKeeper mode
        ("{mode: zookeeper}", "leader-of:chaos/0"),
        ("{mode: kraft, controllers: 1}", "leader-of:chaos/0"),
        ("{mode: kraft, controllers: 3}", "broker:3"),
    ],
)
def test_wipe_is_valid_on_brokers_without_controller_state(
    tmp_path: Path, cluster: str, target: str
) -> None:
    [cell] = expand_cells(load_spec(write(tmp_path, spec(cluster, target))))
    fault = cell.spec.faults[0]
    assert isinstance(fault, Kill) and fault.wipe is True


@pytest.mark.parametrize(
    ("cluster", "target", "expected"),
    [
        ("{mode: kraft}", "broker:1", "combined nodes every broker is a controller voter"),
        ("{mode: kraft, controllers: 3}", "controller", "dedicated KRaft controller"),
        ("{mode: kraft, controllers: 3}", "broker:101", "dedicated KRaft controller"),
        ("{mode: zookeeper}", "zookeeper", "ZooKeeper's data cannot be wiped"),
    ],
)
def test_wipe_is_refused_where_controller_state_would_go(
    tmp_path: Path, cluster: str, target: str, expected: str
) -> None:
    errors = errors_of(tmp_path, spec(cluster, target))
    assert any("faults[0].wipe" in e and expected in e for e in errors), errors


def test_wipe_is_an_option_of_kill_only(tmp_path: Path) -> None:
    text = "name: w\nproducer: {records: 100}\nfaults: [{at_s: 1, kind: stop, wipe: true}]\n"
    assert any("stop takes no wipe" in e for e in errors_of(tmp_path, text))


def test_wipe_sets_the_data_aside_before_the_kill_and_records_it_at_heal() -> None:
    cluster = FakeCluster(mode="zookeeper")
    node = cluster.node(2)
    node.is_controller = False  # the fake's brokers are KRaft combined nodes in every mode
    fault = make_fault("kill", cluster, 2, {"wipe": True}).inject()  # type: ignore[arg-type]
    aside = [" ".join(c) for c in node.commands]
    # Its contents moved, not the directory renamed (it may be a volume's mount point).
    assert len(aside) == 1 and f"-exec mv -t {DATA_DIR}{WIPED}" in aside[0]
    assert f"find {DATA_DIR} -mindepth 1 -maxdepth 1" in aside[0]
    assert [op for _, op, _ in cluster.ops()] == ["kill"]
    fault.heal()
    assert f"rm -rf {DATA_DIR}{WIPED}" in " ".join(node.commands[-1])
    inject, heal = cluster.history.events
    assert inject.fields["wipe"] is True and heal.fields["wipe"] is True
    assert "disk_wiped" in heal.fields


def test_plain_kill_touches_no_data() -> None:
    cluster = FakeCluster()
    fault = make_fault("kill", cluster, 1).inject()  # type: ignore[arg-type]
    fault.heal()
    assert cluster.node(1).commands == []
    assert "wipe" not in cluster.history.events[-1].fields


def test_the_fault_refuses_a_controller_node() -> None:
    cluster = FakeCluster()  # KRaft combined nodes
    with pytest.raises(ConfigError, match="controller"):
        make_fault("kill", cluster, 1, {"wipe": True})  # type: ignore[arg-type]
    assert isinstance(cluster.node(1), FakeNode)
