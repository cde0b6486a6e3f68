"""migrate-to-kraft without Docker: the step plan, each phase's server.properties, the spec's
errors naming the field, and the operation's windows and outcome on a fake cluster."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.errors import WaitTimeout
from harness.faults.migrate_to_kraft import Step, last_if_active, plan_steps
from harness.faults.registry import make_fault
from harness.nodes.capabilities import Capabilities, Shape
from harness.nodes.migration_config import (
    migration_problems,
    migration_properties,
    plan_migration_controllers,
)
from harness.nodes.topology import plan_nodes
from harness.spec import load_spec
from tests.unit.fakes import FakeCluster, FakeNode
from tests.unit.test_spec import errors_of, write

SPEC = """name: x
cluster: {{mode: {mode}, version: {version}, brokers: 3{extra}}}
producer: {{records: 100}}
faults: [{{at_s: 5, kind: migrate-to-kraft{options}}}]
"""


def spec_text(
    mode: str = "zookeeper",
    version: str = "3.9.2",
    extra: str = ", migration_controllers: 3",
    options: str = "",
) -> str:
    return SPEC.format(mode=mode, version=version, extra=extra, options=options)


def test_the_steps_follow_kafkas_guide_with_the_zookeeper_controller_rolled_last() -> None:
    assert plan_steps([1, 2, 3], [101, 102, 103], zk_controller=2) == [
        Step("controllers"),
        Step("broker-migrating", 1),
        Step("broker-migrating", 3),
        Step("broker-migrating", 2),
        Step("await-migration"),
        Step("broker-kraft", 1),
        Step("broker-kraft", 3),
        Step("broker-kraft", 2),
        Step("controller-final", 101),
        Step("controller-final", 102),
        Step("controller-final", 103),
    ]
    assert last_if_active([103, 101, 102], 101) == [102, 103, 101]
    assert last_if_active([2, 1], None) == [1, 2]


def props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line)


def test_each_phase_runs_with_the_settings_kafkas_guide_names() -> None:
    brokers = plan_nodes("zookeeper", 3, 0, [9001, 9002, 9003])[1:]
    controllers = plan_migration_controllers(3)
    config: dict[str, object] = {"min.insync.replicas": 2, "inter.broker.protocol.version": "3.9"}
    voters = "101@controller-101:9093,102@controller-102:9093,103@controller-103:9093"

    def phase(name: str, node_index: int, nodes: str = "brokers") -> dict[str, str]:
        node = (brokers if nodes == "brokers" else controllers)[node_index]
        return props(
            migration_properties(name, node, brokers, controllers, config, "3.9.2")  # type: ignore[arg-type]
        )

    c = phase("controller", 0, "controllers")
    assert c["process.roles"] == "controller" and c["node.id"] == "101"
    assert c["controller.quorum.voters"] == voters
    assert c["zookeeper.metadata.migration.enable"] == "true"
    assert c["zookeeper.connect"] == "zookeeper:2181"
    assert c["inter.broker.listener.name"] == "INTERNAL"  # it sends the brokers their RPCs
    assert "inter.broker.protocol.version" not in c
    b = phase("broker-migrating", 1)
    assert b["broker.id"] == "2" and b["zookeeper.connect"] == "zookeeper:2181"
    assert b["zookeeper.metadata.migration.enable"] == "true"
    assert b["controller.quorum.voters"] == voters
    assert b["controller.listener.names"] == "CONTROLLER"
    assert "CONTROLLER:PLAINTEXT" in b["listener.security.protocol.map"]
    assert b["inter.broker.protocol.version"] == "3.9"
    assert b["min.insync.replicas"] == "2"
    k = phase("broker-kraft", 1)
    assert (k["process.roles"], k["node.id"]) == ("broker", "2")
    assert k["controller.quorum.voters"] == voters
    for gone in ("zookeeper.connect", "zookeeper.metadata.migration.enable", "broker.id"):
        assert gone not in k
    assert "inter.broker.protocol.version" not in k  # KRaft: metadata.version rules
    f = phase("controller-final", 2, "controllers")
    assert f["process.roles"] == "controller" and "zookeeper.connect" not in f
    assert "zookeeper.metadata.migration.enable" not in f


def test_a_spec_that_plans_a_migration_is_valid(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, spec_text(options=", timeout_s: 300")))
    assert spec.cluster.migration_controllers == 3
    assert spec.capabilities()[
        "persistent_data"
    ]  # every node's log directories outlive its container


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            spec_text(mode="kraft", extra=""),
            "faults[0].kind: migrate-to-kraft exists only in mode zookeeper",
        ),
        (
            spec_text(extra=""),
            "faults[0].kind: migrate-to-kraft needs cluster.migration_controllers",
        ),
        (
            spec_text(version="3.3.2"),
            "faults[0].kind: migrate-to-kraft needs cluster.version 3.4 to 3.9",
        ),
        (
            spec_text(extra=", migration_controllers: 2"),
            "cluster.migration_controllers: expected 1, 3 or 5",
        ),
        (
            spec_text(mode="kraft", extra=", migration_controllers: 3"),
            "cluster.migration_controllers: a migration starts from mode zookeeper",
        ),
        (
            spec_text(extra=", migration_controllers: 3, spare_brokers: 1"),
            "cluster.spare_brokers: expected 0 with migration_controllers",
        ),
        (
            spec_text(options=", duration_s: 5"),
            "faults[0].duration_s: migrate-to-kraft takes no duration",
        ),
    ],
)
def test_spec_errors_name_the_field(tmp_path: Path, text: str, expected: str) -> None:
    errors = "\n".join(errors_of(tmp_path, text))
    assert expected in errors, errors


def test_the_cluster_rules_are_pure() -> None:
    assert migration_problems("zookeeper", "3.9.2", 0) == []  # no migration planned
    assert migration_problems("zookeeper", "3.9.2", 3) == []
    proxied = Capabilities({"link_proxies": True}).spec_problems(Shape("zookeeper", "3.9.2", 1))
    assert proxied[0][0] == "link_proxies"  # the link proxies' own rule
    assert migration_problems("zookeeper", "3.3.2", 3)[0][0] == "version"


@dataclass
class MigratingFake(FakeCluster):
    """A ZooKeeper cluster that migrates on paper: each roll is logged, the copy is seen
    after `copy_after` asks."""

    mode: str = "zookeeper"
    version: str = "3.9.2"
    copy_after: int = 2
    rolls: list[tuple[str, str]] = field(default_factory=list)
    asked: int = 0

    def migration_controller_ids(self) -> list[int]:
        return [101, 102, 103]

    def zookeeper_cluster_id(self) -> str:
        return "AAAAAAAAAAAAAAAAAAAAAA"

    def start_migration_controllers(self, cluster_id: str) -> None:
        for i in self.migration_controller_ids():
            self.nodes.append(FakeNode(self, f"controller-{i}", i, "controller"))

    def migration_roll(self, ref: int | str, phase: str) -> None:
        node = self.node(ref)
        node.start()
        self.rolls.append((node.name, phase))

    def migration_completed(self) -> bool:
        self.asked += 1
        return self.asked > self.copy_after

    def become_kraft(self) -> None:
        self.mode = "kraft"
        self.controller_id = 102

    def under_replicated(self) -> list[tuple[str, int]]:
        return []


def test_the_operation_rolls_every_node_in_its_own_window_and_ends_in_kraft() -> None:
    cluster = MigratingFake(controller_id=1)
    cluster.nodes = [n for n in cluster.nodes if n.is_broker] + [cluster.nodes[-1]]
    for n in cluster.broker_nodes:
        n.is_controller = False
    fault = make_fault("migrate-to-kraft", cluster, None, {"timeout_s": 5})  # type: ignore[arg-type]
    fault.inject()
    assert cluster.mode == "kraft"
    assert cluster.rolls == [
        ("broker-2", "broker-migrating"),
        ("broker-3", "broker-migrating"),
        ("broker-1", "broker-migrating"),
        ("broker-2", "broker-kraft"),
        ("broker-3", "broker-kraft"),
        ("broker-1", "broker-kraft"),
        ("controller-101", "controller-final"),
        ("controller-103", "controller-final"),
        ("controller-102", "controller-final"),  # the quorum's leader last
    ]
    events = [e.fields for e in cluster.history.events if e.kind.startswith("fault.")]
    windows = [(e["target"], e["phase"]) for e in events if e["fault"] == "migration-step"]
    assert len(windows) == 2 * 11  # an inject and a heal per step
    assert ("cluster", "await-migration") in windows and ("cluster", "controllers") in windows
    outcome = events[-1]
    assert outcome["fault"] == "migrate-to-kraft" and outcome["completed"] is True
    assert outcome["mode"] == "kraft" and outcome["cluster_id"] == "AAAAAAAAAAAAAAAAAAAAAA"
    assert [s["phase"] for s in outcome["steps"]][:2] == ["controllers", "broker-migrating"]
    assert all("took_s" in s for s in outcome["steps"])
    assert all("full_isr_s" in s for s in outcome["steps"] if s["phase"].startswith("broker"))


def test_a_migration_that_never_completes_is_an_error_that_says_how_far_it_came() -> None:
    cluster = MigratingFake(controller_id=1, copy_after=10**9)
    cluster.nodes = [n for n in cluster.nodes if n.is_broker] + [cluster.nodes[-1]]
    fault = make_fault("migrate-to-kraft", cluster, None, {"timeout_s": 0.3})  # type: ignore[arg-type]
    with pytest.raises(WaitTimeout):
        fault.inject()
    outcome = [e.fields for e in cluster.history.events if e.kind == "fault.heal"][-1]
    assert outcome["completed"] is False and "Completed migration" in outcome["error"]
    assert [s["phase"] for s in outcome["steps"]][-1] == "await-migration"
    assert cluster.mode == "zookeeper"
    # every window closed: the await's too
    injects = [e for e in cluster.history.events if e.kind == "fault.inject"]
    heals = [e for e in cluster.history.events if e.kind == "fault.heal"]
    assert len(injects) == len(heals)
