"""decommission: move every replica off a broker with Kafka's reassignment, then retire it.

What an operator does to remove a broker for good: each partition (of every topic,
__consumer_offsets included) with a replica on it gets a new replica list in which the
least-loaded other broker takes its place, the reassignments run to completion, and the
broker is stopped and (KRaft) unregistered. Clients should see a short pause at most.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar, Protocol

from harness.errors import FaultError
from harness.faults.control import ChaosTarget, NodeRef, Operable
from harness.faults.drawing import Drawing
from harness.faults.kind import CellView, FaultKind, OperationTimeout, Problem
from harness.faults.operation import Operation
from harness.faults.reassignment import reassign_and_wait

Assignment = Mapping[str, Mapping[int, Sequence[int]]]  # topic -> partition -> replicas


class Membership(Operable, Protocol):
    """The cluster as decommission needs it: operations plus which brokers run."""

    @property
    def brokers(self) -> list[int]:
        """Ids of the brokers whose container is running."""


def plan_decommission(
    broker: int, assignment: Assignment, candidates: Iterable[int]
) -> dict[str, dict[int, list[int]]]:
    """topic -> partition -> new replicas for every partition that has `broker` as a replica.

    The replacement takes the broker's slot in the list, so every other replica keeps its
    position (the preferred leader stays unless it is the broker itself). It is the
    candidate holding the fewest replicas, counting the moves planned so far, lowest id on
    a tie: the same cluster state always gives the same plan. FaultError names the
    partitions for which no candidate is left outside the replica list (too few brokers).
    """
    pool = sorted(set(candidates) - {broker})
    load = Counter({b: 0 for b in pool})
    for partitions in assignment.values():
        for replicas in partitions.values():
            load.update(r for r in replicas if r in load)
    plan: dict[str, dict[int, list[int]]] = {}
    stuck: list[str] = []
    for topic in sorted(assignment):
        for partition in sorted(assignment[topic]):
            replicas = list(assignment[topic][partition])
            if broker not in replicas:
                continue
            free = [b for b in pool if b not in replicas]
            if not free:
                stuck.append(f"{topic}/{partition} {replicas}")
                continue
            new = min(free, key=lambda b: (load[b], b))
            load[new] += 1
            plan.setdefault(topic, {})[partition] = [new if r == broker else r for r in replicas]
    if stuck:
        more = f" and {len(stuck) - 3} more" if len(stuck) > 3 else ""
        raise FaultError(
            f"cannot move broker {broker}'s replicas: no usable broker outside the replicas of "
            f"{', '.join(stuck[:3])}{more} (usable brokers besides it: {pool or 'none'}); "
            "a decommission needs more running brokers than the replication factor"
        )
    return plan


class DecommissionFault(Operation):
    """Target: a running broker (resolved when the fault fires).

    Outcome: `broker`, `voter` (a KRaft controller too), `moved` (partitions reassigned,
    per topic), `retired`; the Operation adds `completed` and `elapsed_s` (also when it
    failed half-way: `moved` then says what had completed). Replacements are running
    brokers no active fault touches: a cut-off broker could never catch up.
    """

    kind = "decommission"

    def __init__(self, cluster: Membership, target: NodeRef | None, spec: Decommission) -> None:
        super().__init__(cluster, spec.given(), spec.timeout_s)
        self.members = cluster
        self.target = target
        self.broker_id = _broker_id(target)

    def target_name(self) -> str:
        return f"broker-{self.broker_id}" if self.broker_id is not None else str(self.target)

    def _inject(self) -> None:
        broker = self._running_broker()
        # A KRaft combined node is a voter too: retiring it leaves the static quorum one short.
        voter = self.ops.node(broker).is_controller
        self.outcome.update(broker=broker, voter=voter, moved={}, retired=False)
        touched = self.ops.faults.touched()
        usable = [
            b for b in self.members.brokers if b != broker and self.ops.node(b).name not in touched
        ]
        assignment = {
            topic: {p: state.replicas for p, state in self.ops.partition_states(topic).items()}
            for topic in self.ops.topic_names()
        }
        plan = plan_decommission(broker, assignment, usable)
        deadline = time.monotonic() + self.timeout_s
        for topic, moves in plan.items():
            done = reassign_and_wait(self.ops, topic, moves, max(1.0, deadline - time.monotonic()))
            self.outcome["moved"] = {**self.outcome["moved"], topic: done["moved"]}
        self.ops.retire(broker)
        self.outcome["retired"] = True

    def _running_broker(self) -> int:
        if self.broker_id is None:
            raise FaultError(f"decommission takes a broker, not {self.target!r}")
        node = self.ops.node(self.broker_id)
        if not node.is_broker:
            raise FaultError(f"decommission takes a broker, not {node.name}")
        if not node.is_up():
            raise FaultError(
                f"decommission moves replicas off a running broker; {node.name} is {node.status()}"
            )
        return self.broker_id


def _broker_id(target: NodeRef | None) -> int | None:
    if isinstance(target, int):
        return target
    m = re.fullmatch(r"broker:(\d+)", (target or "").strip())
    return int(m[1]) if m else None


class Decommission(FaultKind):
    """`{kind: decommission, target: broker:1}`: every replica moved off, then the broker retired."""

    name: ClassVar[str] = "decommission"
    changes_cluster: ClassVar[bool] = True  # a member less
    # One broker, no options (a cell with fewer brokers than its largest RF + 1: its rules).
    drawing: ClassVar[Drawing | None] = Drawing(roles=("one",))
    operation: ClassVar[bool] = True
    broker_only: ClassVar[bool] = True

    timeout_s: OperationTimeout = None

    def rules(self, cell: CellView) -> list[Problem]:
        rf = max(cell.replication_factor, cell.offsets_rf)
        total = len(cell.reachable)
        if total <= rf:
            return [
                (
                    "kind",
                    "decommission moves every replica of a broker to another one: it needs more "
                    f"brokers (spares included: {total}) than the largest replication factor ({rf})",
                )
            ]
        return []

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> DecommissionFault:
        return DecommissionFault(cluster, target, self)
