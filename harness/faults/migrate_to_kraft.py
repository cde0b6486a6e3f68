"""migrate-to-kraft: Kafka's ZooKeeper-to-KRaft migration (KIP-866), step by step, under load.

Kafka 3.9's operations guide, "ZooKeeper to KRaft Migration", as an operator does it:

1. `controllers` — start a KRaft quorum of dedicated controllers (`cluster.migration_controllers`,
   ids 101..) formatted with the cluster id ZooKeeper holds, in migration mode
   (`zookeeper.metadata.migration.enable`, `zookeeper.connect`);
2. `broker-migrating` — roll every broker with the migration settings (the flag, the quorum's
   voters, the CONTROLLER listener, inter.broker.protocol.version at the software's line); the
   ZooKeeper controller broker last, so ZooKeeper's controllership moves once;
3. `await-migration` — once every broker has registered with the quorum, its leader copies
   ZooKeeper's metadata and logs "Completed migration of metadata from ZooKeeper to KRaft":
   the cluster is in dual-write (the quorum leads, ZooKeeper is kept up to date);
4. `broker-kraft` — roll every broker into KRaft mode (`process.roles=broker`, no ZooKeeper);
   from the last one on the cluster is a KRaft cluster (mode, controller, admin views);
5. `controller-final` — roll the controllers without ZooKeeper (the active one last): done,
   no way back.

Each step is its own `migration-step` window on the timeline (`phase`; a roll's target is its
node, the other steps' `cluster`); after every broker roll the next waits until every
partition has a full ISR again, all within `timeout_s` per step. Other faults may be planned
during it (the active controller killed during dual-write, a broker between rolls).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from harness.common.waiting import wait_until
from harness.errors import ConfigError
from harness.faults.base import Fault, NodeFault
from harness.faults.control import ChaosTarget, Migratable, Node, NodeRef
from harness.faults.kind import (
    CellView,
    FaultKind,
    Mode,
    Needs,
    OperationTimeout,
    Problem,
    TargetStyle,
)
from harness.faults.operation import Operation
from harness.faults.step_trigger import node_words
from harness.nodes.capabilities import PersistentData

MIGRATION_SINCE = (3, 4)  # KIP-866 (production-ready from 3.6; Kafka 3.9 is the last line)


@dataclass(frozen=True)
class Step:
    """One window of the migration: a phase, and the node it rolls (None: the cluster)."""

    phase: str
    node: int | None = None


def last_if_active(ids: Sequence[int], active: int | None) -> list[int]:
    """Ids in order, the active controller last: its role moves once, not at every roll."""
    ordered = sorted(ids)
    return [i for i in ordered if i != active] + [i for i in ordered if i == active]


def plan_steps(
    brokers: Sequence[int], controllers: Sequence[int], zk_controller: int | None
) -> list[Step]:
    """The migration's steps in Kafka's order; the controllers' own order is decided when
    they are rolled (the quorum's leader then goes last)."""
    order = last_if_active(brokers, zk_controller)
    return [
        Step("controllers"),
        *(Step("broker-migrating", b) for b in order),
        Step("await-migration"),
        *(Step("broker-kraft", b) for b in order),
        *(Step("controller-final", c) for c in sorted(controllers)),
    ]


def migration_rules(version: str, controllers: int) -> list[Problem]:
    """What the kind needs of the cell (pure: unit-tested)."""
    out: list[Problem] = []
    major, minor = (int(p) for p in version.split(".")[:2])
    if major != 3 or (major, minor) < MIGRATION_SINCE:
        out.append(
            (
                "kind",
                f"migrate-to-kraft needs cluster.version 3.4 to 3.9 (KIP-866's migration; ideally "
                f"3.9) (got {version})",
            )
        )
    if controllers not in (1, 3, 5):
        out.append(
            (
                "kind",
                "migrate-to-kraft needs cluster.migration_controllers: 1, 3 or 5 (the KRaft "
                f"quorum it migrates onto) (got {controllers})",
            )
        )
    return out


class MigrateToKraft(FaultKind):
    """`{kind: migrate-to-kraft, timeout_s: 300}`: a ZooKeeper cluster migrated to KRaft."""

    name: ClassVar[str] = "migrate-to-kraft"
    changes_cluster: ClassVar[bool] = True  # another mode
    target_style: ClassVar[TargetStyle] = "none"
    operation: ClassVar[bool] = True
    modes: ClassVar[tuple[Mode, ...]] = ("zookeeper",)
    needs: ClassVar[Needs] = (PersistentData,)  # runs nodes on new containers

    timeout_s: OperationTimeout = None  # per step: until it is done (a roll: and every ISR full)

    def step_words(self, cell: CellView) -> tuple[str, ...]:
        """Each step answers to its phase and its node; `broker` / `controller` to the first
        roll of such a node."""
        steps = plan_steps(cell.brokers, cell.migration_controllers, None)
        phases = dict.fromkeys(s.phase for s in steps)
        nodes = node_words(cell.brokers, cell.migration_controllers)
        return (*phases, "broker", "controller", *nodes)

    def rules(self, cell: CellView) -> list[Problem]:
        if cell.mode != "zookeeper" or not cell.version:
            return []  # the mode is the common check's; the version the cluster's rules
        return migration_rules(cell.version, len(cell.migration_controllers))

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        if target is not None:
            raise ConfigError("migrate-to-kraft takes no target (it migrates the whole cluster)")
        if cluster.mode != "zookeeper":
            raise ConfigError(
                f"migrate-to-kraft needs a ZooKeeper-mode cluster (this one is {cluster.mode})"
            )
        if not cluster.migration_controller_ids():
            raise ConfigError("migrate-to-kraft needs KafkaCluster(migration_controllers=1|3|5)")
        brokers = [n.node_id for n in cluster.broker_nodes if n.node_id is not None]
        steps = plan_steps(brokers, cluster.migration_controller_ids(), _active(cluster))
        return MigrationFault(cluster, self, steps)


def _active(cluster: ChaosTarget) -> int | None:
    try:
        return cluster.controller()
    except Exception:  # no answer now: the id order is as good an order
        return None


class StepWindow(Fault):
    """A step on the cluster as a whole (starting the quorum, awaiting the metadata copy)."""

    kind = "migration-step"

    def __init__(
        self, cluster: Migratable, phase: str, step_of: int, nodes: Sequence[Node] = ()
    ) -> None:
        super().__init__(cluster)
        self.phase = phase
        self.step_of = step_of  # the operation's fault id: operation_steps groups by it
        self.nodes = list(nodes)

    def describe(self) -> dict[str, Any]:
        return {
            "fault": self.kind,
            "target": "cluster",
            "step_of": self.step_of,
            "phase": self.phase,
            "level": self.phase,
        }

    def affected_nodes(self) -> list[Node]:
        return self.nodes

    def _inject(self) -> None:
        """The operation does the step between inject and heal."""

    def _heal(self) -> None:
        """Nothing to undo."""


class RollStep(NodeFault):
    """One node's roll: down at inject (controlled shutdown), back with the phase's
    properties and its own log directories at heal."""

    kind = "migration-step"
    captures_on_heal = True  # as a restart: a broker's partitions copied before it rejoins

    def __init__(self, cluster: Migratable, target: NodeRef, phase: str, step_of: int) -> None:
        super().__init__(cluster, target)
        self.ops = cluster
        self.phase = phase
        self.step_of = step_of  # the operation's fault id: operation_steps groups by it

    def describe(self) -> dict[str, Any]:
        # level: the timeline's label
        return {
            **super().describe(),
            "step_of": self.step_of,
            "phase": self.phase,
            "level": self.phase,
        }

    def _inject(self) -> None:
        self.node.stop()

    def _heal(self) -> None:
        self.ops.migration_roll(self.node.name, self.phase)


class MigrationFault(Operation):
    """Outcome: `cluster_id` (ZooKeeper's, the quorum formatted with it), `controllers`,
    `steps` (phase, node, `took_s`; a broker roll also `full_isr_s`; kept as it goes, so a
    timeout tells how far it came), `migrated_s` (from the start until the metadata copy
    was seen), `mode` (kraft once the brokers are)."""

    kind = "migrate-to-kraft"

    def __init__(self, cluster: ChaosTarget, spec: MigrateToKraft, steps: list[Step]) -> None:
        super().__init__(cluster, spec.given(), spec.timeout_s)
        self.target = cluster
        self.steps = steps
        self.outcome["controllers"] = cluster.migration_controller_ids()

    def _inject(self) -> None:
        done: list[dict[str, Any]] = []
        self.outcome.update(steps=done, mode=self.target.mode)
        started = time.monotonic()
        finals = [s for s in self.steps if s.phase == "controller-final"]
        for step in [s for s in self.steps if s.phase != "controller-final"]:
            record: dict[str, Any] = {"phase": step.phase}
            done.append(record)
            if step.phase == "controllers":
                cluster_id = self.target.zookeeper_cluster_id()
                self.outcome["cluster_id"] = cluster_id
                self._window(step.phase, record, partial(self._start_quorum, cluster_id))
            elif step.phase == "await-migration":
                self._window(step.phase, record, self._await_copy)
                self.outcome["migrated_s"] = round(time.monotonic() - started, 3)
            else:
                assert step.node is not None
                self._roll(step.node, step.phase, record)
            if step.phase == "broker-kraft" and step is self._last_broker_step():
                self.target.become_kraft()
                self.outcome["mode"] = self.target.mode
        order = last_if_active([s.node for s in finals if s.node is not None], _active(self.target))
        for node_id in order:
            record = {"phase": "controller-final"}
            done.append(record)
            self._roll(node_id, "controller-final", record)

    def _last_broker_step(self) -> Step:
        return [s for s in self.steps if s.phase == "broker-kraft"][-1]

    def _start_quorum(self, cluster_id: str) -> None:
        self.target.start_migration_controllers(cluster_id)

    def _await_copy(self) -> None:
        wait_until(
            self.target.migration_completed,
            self.timeout_s,
            "the KRaft controller's 'Completed migration of metadata from ZooKeeper to KRaft'",
            retry_on=Exception,
        )

    def _window(self, phase: str, record: dict[str, Any], action: Callable[[], None]) -> None:
        window = StepWindow(self.target, phase, self.id)
        begun = time.monotonic()
        window.inject()
        try:
            action()
        finally:
            window.heal()
            record["took_s"] = round(time.monotonic() - begun, 3)

    def _roll(self, node_id: int, phase: str, record: dict[str, Any]) -> None:
        step = RollStep(self.target, node_id, phase, self.id)
        record["node"] = step.node.name
        begun = time.monotonic()
        step.inject()
        step.heal()
        back = time.monotonic()
        record["took_s"] = round(back - begun, 3)
        if step.node.is_broker:
            record["full_isr_s"] = self.wait_full_isr(f"rolling {step.node.name} ({phase})")
        else:
            wait_until(
                self.target.controller,
                self.timeout_s,
                f"the KRaft quorum led again after rolling {step.node.name}",
                retry_on=Exception,
                done=lambda leader: leader is not None,
            )
