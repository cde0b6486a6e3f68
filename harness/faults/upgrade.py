"""Upgrade (or downgrade): every Kafka node in turn onto another version, with its data.

Kafka's documented rolling upgrade: one node at a time is shut down, its software replaced,
and it is started again on the same log directories; KRaft controllers first (the active
one last), then the brokers; in ZooKeeper mode the brokers, the controller last. The next
node goes only once every partition has a full ISR again. With `finalize: true` the
features are raised at the end with Kafka's FeatureCommand (`kafka-features.sh upgrade
--release-version X.Y`, before 4.0 `--metadata X.Y`): until then the cluster keeps its old
metadata.version and can still go back. Each node's step is its own window on the timeline
(`upgrade-step`); the operation's heal carries the versions before and after and the final
feature levels.

What Kafka forbids is a spec error here, before anything starts: ZooKeeper mode ends at 3.9
(migrate to KRaft first); a KRaft cluster cannot run software older than its
metadata.version (formatted by X.Y: it can go back only within X.Y); a ZooKeeper-mode
roll needs inter.broker.protocol.version pinned to what every node in the roll speaks.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from harness.errors import ConfigError
from harness.faults.base import Fault, NodeFault
from harness.faults.control import ChaosTarget, NodeRef, Upgradable
from harness.faults.kind import (
    CellView,
    FaultKind,
    Needs,
    OperationTimeout,
    Problem,
    TargetStyle,
)
from harness.faults.operation import Operation
from harness.faults.step_trigger import node_words
from harness.nodes.capabilities import PersistentData

VERSION = re.compile(r"\d+\.\d+\.\d+")
ZOOKEEPER_UNTIL = (3, 9)  # the last line with ZooKeeper mode
KRAFT_UPGRADE_FROM = (3, 3)  # 4.x takes KRaft clusters from 3.3 (production-ready KRaft) on
IBP = "inter.broker.protocol.version"


def line(version: str) -> tuple[int, int]:
    """(major, minor) of X.Y.Z."""
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def release(version: str) -> str:
    """What `kafka-features upgrade` takes for a version: "4.3" for 4.3.1."""
    return "{}.{}".format(*line(version))


def version_problems(
    mode: str, running: str, to: str, finalize: bool, config: dict[str, Any]
) -> list[Problem]:
    """Whether Kafka allows moving a cluster started on `running` to `to` (pure: unit tested)."""
    if not VERSION.fullmatch(to):
        return [("to_version", f"expected a Kafka version X.Y.Z such as 4.3.1 (got {to!r})")]
    if not VERSION.fullmatch(running):
        return []  # the cluster's own version is reported by the cluster's rules
    if to == running:
        return [("to_version", f"the cluster already runs {running}: nothing to upgrade")]
    down = tuple(int(p) for p in to.split(".")) < tuple(int(p) for p in running.split("."))
    if down and finalize:
        return [("finalize", "finalize raises feature levels: a downgrade cannot finalize")]
    if mode == "zookeeper":
        return _zookeeper_problems(running, to, finalize, config)
    if down and line(to) < line(running):
        return [
            (
                "to_version",
                f"a KRaft cluster formatted by {running} has metadata.version {release(running)}; "
                f"Kafka {to} cannot read it (software never goes below the metadata.version): "
                f"a downgrade stays within {release(running)}.x",
            )
        ]
    if line(to) >= (4, 0) and line(running) < KRAFT_UPGRADE_FROM:
        return [("to_version", f"Kafka {to} takes KRaft clusters from 3.3 on, not {running}")]
    return []


def _zookeeper_problems(
    running: str, to: str, finalize: bool, config: dict[str, Any]
) -> list[Problem]:
    if line(to) > ZOOKEEPER_UNTIL:
        return [
            (
                "to_version",
                f"Kafka {to} has no ZooKeeper mode (removed in 4.0): a ZooKeeper cluster is "
                "migrated to KRaft first (kind migrate-to-kraft on 3.9), then upgraded",
            )
        ]
    if finalize:
        return [
            (
                "finalize",
                f"in ZooKeeper mode an upgrade is finalized by raising {IBP} in a second roll, "
                "not by kafka-features: leave finalize out",
            )
        ]
    if line(running) == line(to):
        return []
    oldest = min(line(running), line(to))
    pinned = config.get(IBP)
    spoken = _ibp_line(str(pinned)) if pinned is not None else None
    if spoken is None or spoken > oldest:
        return [
            (
                "to_version",
                f"a ZooKeeper-mode roll between {release(running)} and {release(to)} needs "
                f"cluster.broker_config {IBP} pinned to {'{}.{}'.format(*oldest)} (Kafka's upgrade "
                f"notes: every broker in the roll must speak it; got {pinned!r})",
            )
        ]
    return []


def _ibp_line(value: str) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", value)
    return (int(m[1]), int(m[2])) if m else None


@dataclass(frozen=True)
class NodeInfo:
    """A Kafka node as the step plan sees it."""

    name: str
    node_id: int
    is_broker: bool
    is_controller: bool


def step_order(mode: str, nodes: Sequence[NodeInfo], active_controller: int | None) -> list[str]:
    """The order Kafka's docs roll nodes in: KRaft controllers (dedicated or combined) first,
    the active one last of them so the quorum moves its leader once, then the other brokers;
    ZooKeeper mode: the brokers, the controller broker last. By node id otherwise."""

    def last_if_active(group: list[NodeInfo]) -> list[NodeInfo]:
        ordered = sorted(group, key=lambda n: n.node_id)
        return [n for n in ordered if n.node_id != active_controller] + [
            n for n in ordered if n.node_id == active_controller
        ]

    if mode == "zookeeper":
        return [n.name for n in last_if_active([n for n in nodes if n.is_broker])]
    controllers = last_if_active([n for n in nodes if n.is_controller])
    brokers = sorted((n for n in nodes if not n.is_controller), key=lambda n: n.node_id)
    return [n.name for n in [*controllers, *brokers]]


class Upgrade(FaultKind):
    """`{kind: upgrade, to_version: "4.3.1", finalize: true}`: a rolling upgrade (or a
    downgrade, to a lower version) of every Kafka node."""

    name: ClassVar[str] = "upgrade"
    changes_cluster: ClassVar[bool] = True  # other versions
    target_style: ClassVar[TargetStyle] = "none"
    operation: ClassVar[bool] = True
    needs: ClassVar[Needs] = (PersistentData,)  # runs nodes on new containers

    to_version: str | None = None
    finalize: bool | None = None  # raise the feature levels (metadata.version) at the end
    timeout_s: OperationTimeout = None  # per node: until it is back and every ISR is full

    def step_words(self, cell: CellView) -> tuple[str, ...]:
        """Each node's step answers to its name; `broker` / `controller` to the first one."""
        nodes = node_words(cell.brokers, cell.controllers)
        roles = ("broker", "controller") if cell.controllers else ("broker",)
        return (*roles, *nodes)

    def rules(self, cell: CellView) -> list[Problem]:
        if self.to_version is None:
            return [("to_version", "upgrade needs to_version, the Kafka version to roll to")]
        config = dict(cell.broker_config)
        return version_problems(
            cell.mode, cell.version, self.to_version, bool(self.finalize), config
        )

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        if target is not None:
            raise ConfigError("upgrade takes no target (it rolls every Kafka node)")
        order = step_order(
            cluster.mode,
            [
                NodeInfo(n.name, n.node_id, n.is_broker, n.is_controller)
                for n in cluster.nodes
                if n.node_id is not None
            ],
            _active_controller(cluster),
        )
        return UpgradeFault(cluster, self, order)


def _active_controller(cluster: ChaosTarget) -> int | None:
    try:
        return cluster.controller()
    except Exception:  # no answer now: the plain id order is as good an order
        return None


class UpgradeStep(NodeFault):
    """One node's window: down at inject (controlled shutdown), back on the new version at heal."""

    kind = "upgrade-step"
    captures_on_heal = True  # as a restart: its partitions copied before it rejoins

    def __init__(self, cluster: Upgradable, target: NodeRef, to_version: str, step_of: int) -> None:
        super().__init__(cluster, target)
        self.ops = cluster
        self.to_version = to_version
        self.step_of = step_of  # the operation's fault id: the step check groups by it
        self.from_version = cluster.node_versions().get(self.node.name, cluster.version)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "step_of": self.step_of,
            "from_version": self.from_version,
            "to_version": self.to_version,
        }

    def _inject(self) -> None:
        self.node.stop()

    def _heal(self) -> None:
        self.ops.replace_node(self.node.name, self.to_version)


class UpgradeFault(Operation):
    """Outcome: `from_version`, `to_version`, `steps` (node, seconds down, seconds until
    every ISR was full again; kept as it goes, so a timeout tells how far the roll came),
    `versions` (each node's afterwards) and, when they could be read, `features` and
    `metadata_version` (finalized or not)."""

    kind = "upgrade"

    def __init__(self, cluster: ChaosTarget, spec: Upgrade, order: list[str]) -> None:
        super().__init__(cluster, spec.given(), spec.timeout_s)
        assert spec.to_version is not None
        self.target = cluster
        self.to_version = spec.to_version
        self.finalize = bool(spec.finalize)
        self.order = order
        self.outcome["from_version"] = cluster.version

    def _inject(self) -> None:
        steps: list[dict[str, Any]] = []
        self.outcome.update(order=list(self.order), steps=steps)
        for name in self.order:
            if self.target.node_versions().get(name) == self.to_version:
                continue  # already there (a retried operation)
            step = UpgradeStep(self.target, name, self.to_version, self.id)
            down = time.monotonic()
            step.inject()
            step.heal()
            back = time.monotonic()
            record: dict[str, Any] = {"node": name, "down_s": round(back - down, 3)}
            steps.append(record)
            record["full_isr_s"] = self.wait_full_isr(f"upgrading {name}")
        self.outcome["versions"] = self.target.node_versions()
        if self.finalize:
            features = self.target.finalize_features(release(self.to_version), self.timeout_s)
        else:
            features = self._features()
        if features:
            self.outcome["features"] = features
            self.outcome["metadata_version"] = features.get("metadata.version")

    def _features(self) -> dict[str, str]:
        """The levels as they are (not finalized); none when no broker could tell."""
        try:
            return self.target.features()
        except Exception as exc:  # reading them is a report, not the operation
            self.outcome["features_error"] = str(exc).splitlines()[0]
            return {}
