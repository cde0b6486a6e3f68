"""A fault: inject() then heal(), each recorded in the cluster's one history.

A fault acts through `NodeControl` (harness.faults.control), never through the
cluster class: the cluster knows its faults, its faults do not know it.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from harness.errors import ConfigError
from harness.faults.control import Node, NodeControl, NodeRef
from harness.nodes.capabilities import AnyCapability
from harness.nodes.supervised_start import NodeRefusedStart, start_supervised
from harness.results import events as ev

_ids = itertools.count(1)


class Fault(ABC):
    """Subclasses say what inject and heal do; this class keeps the books."""

    kind: ClassVar[str]
    # Booked with the cluster's faults (inject), so the cluster's heal_all undoes it; the
    # nemesis's heal phase leaves it alone (harness.faults.stage.Act).
    healed_by_cluster: ClassVar[bool] = True

    def __init__(self, cluster: NodeControl) -> None:
        self.cluster = cluster
        self.id = next(_ids)
        self.active = False
        # What the nemesis adds to the fault.inject event: the plan's index, at_s, late_s.
        self.planned: dict[str, Any] = {}

    @abstractmethod
    def _inject(self) -> None: ...

    @abstractmethod
    def _heal(self) -> None: ...

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What the history records about this fault (kind, targets)."""

    @abstractmethod
    def affected_nodes(self) -> list[Node]:
        """Nodes whose view of the cluster this fault may make stale or unreachable."""

    def inject(self) -> Fault:
        if self.active:
            return self
        self.cluster.history.append(
            "fault.inject", fault_id=self.id, **self.planned, **self.describe()
        )
        # Booked before it acts: a graceful stop takes seconds, and a node in controlled
        # shutdown must not answer the admin views meanwhile (a target resolved then waited
        # out its unanswered metadata requests, 10 s, and the fault started late).
        self.cluster.faults.add(self)
        try:
            self._inject()
        except BaseException:
            self.cluster.faults.remove(self)
            raise
        self.active = True
        return self

    def rejoining(self) -> list[Node]:
        """Brokers whose log this heal lets rejoin the cluster, where a deposed leader
        truncates what no one else copied: copied aside first (broker forensics)."""
        return []

    def heal(self) -> None:
        if not self.active:
            return
        for node in self.rejoining():
            self.cluster.capture_segments(node, "heal", {"fault": self.kind, "fault_id": self.id})
        self._heal()
        self.active = False
        self.cluster.faults.remove(self)
        self.cluster.history.append("fault.heal", fault_id=self.id, **self.describe())

    def abandon(self, why: str) -> None:
        """Close the fault without its heal: what it acts on has left the cluster for good
        (a controller removed from the quorum while a kill keeps it down; its heal would
        start it). Recorded as its `fault.heal`, with `abandoned` saying why."""
        if not self.active:
            return
        self.active = False
        self.cluster.faults.remove(self)
        self.cluster.history.append(
            "fault.heal", fault_id=self.id, abandoned=why, **self.describe()
        )

    def __enter__(self) -> Fault:
        return self.inject()

    def __exit__(self, *exc: object) -> None:
        self.heal()


class NodeFault(Fault, ABC):
    """A fault done to one node's process or container."""

    # Whether the heal lets the broker rejoin with a log others moved on from (it was down,
    # frozen, cut off or its disk full): its partitions are copied aside first.
    captures_on_heal: ClassVar[bool] = False
    # What every node must be built with for it (ConfigError saying how, if the cluster is not).
    needs: ClassVar[tuple[AnyCapability, ...]] = ()

    def __init__(self, cluster: NodeControl, target: NodeRef) -> None:
        super().__init__(cluster)
        self.node: Node = cluster.node(target)
        for capability in self.needs:
            if not cluster.has(capability):
                raise ConfigError(capability.missing.format(kind=self.kind, title=capability.title))

    def describe(self) -> dict[str, Any]:
        return {"fault": self.kind, "target": self.node.name}

    def affected_nodes(self) -> list[Node]:
        return [self.node]

    def rejoining(self) -> list[Node]:
        """The broker, if this kind takes it out of the cluster (`captures_on_heal`)."""
        return [self.node] if self.captures_on_heal and self.node.is_broker else []

    def _bring_back(self) -> None:
        bring_back(self.cluster, self.node)


def bring_back(cluster: NodeControl, node: Node) -> bool:
    """Start the node again, like a supervisor while it exits early
    (harness.nodes.supervised_start); whether it is up. A node Kafka refuses to start (it
    exits early again and again) is Kafka's outcome: `node.refused_start` in the history,
    False, and no later heal starts it (refused_nodes)."""
    if not node.is_up():  # up: something else (an overlapping fault's heal) started it
        try:
            start_supervised(node, cluster.history, cluster.start_timeout_s)
        except NodeRefusedStart as exc:
            cluster.history.append(ev.NODE_REFUSED_START, node=node.name, error=str(exc)[:500])
    return node.is_up()


def refused_nodes(cluster: NodeControl) -> frozenset[str]:
    """The nodes Kafka refused to start at a heal (bring_back): the cell goes on without them."""
    return frozenset(
        str(e.fields.get("node")) for e in cluster.history.events if e.kind == ev.NODE_REFUSED_START
    )
