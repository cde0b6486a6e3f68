"""add-broker: start a spare broker (cluster.spare_brokers) and wait until it has registered.

A new broker takes no partitions by itself: what it changes is where the next topic, the
next reassignment or a decommission can put replicas, and what clients must discover.
"""

from __future__ import annotations

import re
from typing import ClassVar

from harness.errors import FaultError
from harness.faults.control import ChaosTarget, NodeRef, Operable
from harness.faults.drawing import Drawing
from harness.faults.kind import CellView, FaultKind, OperationTimeout, Problem, TargetStyle
from harness.faults.operation import Operation
from harness.faults.target_rules import spare_left


class AddBroker(FaultKind):
    """`{kind: add-broker}` (the next spare) or `{kind: add-broker, target: broker:5}`."""

    name: ClassVar[str] = "add-broker"
    changes_cluster: ClassVar[bool] = True  # a member more
    # The next spare broker (target `random`), no options; the rules want spares.
    drawing: ClassVar[Drawing | None] = Drawing(roles=("cluster",))
    target_style: ClassVar[TargetStyle] = "spare"
    operation: ClassVar[bool] = True

    timeout_s: OperationTimeout = None

    def rules(self, cell: CellView) -> list[Problem]:
        why = spare_left(self.kind, self.at_s, cell, len(cell.spares), "broker")
        return [("kind", why)] if why else []

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> AddBrokerFault:
        return AddBrokerFault(cluster, target, self)


class AddBrokerFault(Operation):
    """Target `broker:<id>` (a spare) or None for the lowest spare left.

    Outcome: `broker` (its id), `registered` (listed in the cluster's metadata); the
    Operation adds `completed` and `elapsed_s`.
    """

    kind = "add-broker"

    def __init__(self, cluster: Operable, target: NodeRef | None, spec: AddBroker) -> None:
        super().__init__(cluster, spec.given(), spec.timeout_s)
        self.target = target
        # Resolved when the fault is made, i.e. when it fires: "next" is the next one *now*.
        self.broker_id = _spare_id(target, cluster.spare_ids())

    def target_name(self) -> str:
        return f"broker-{self.broker_id}" if self.broker_id is not None else "spare"

    def _inject(self) -> None:
        spares = self.ops.spare_ids()
        if self.broker_id is None or self.broker_id not in spares:
            wanted = "a spare broker" if self.target is None else repr(self.target)
            raise FaultError(
                f"add-broker: {wanted} is not a spare left to start (spares left: {spares or 'none'})"
            )
        self.outcome.update(broker=self.broker_id, registered=False)
        self.ops.add_broker(self.broker_id)
        self.outcome["registered"] = True  # add_broker returns once the metadata lists it


def _spare_id(target: NodeRef | None, spares: list[int]) -> int | None:
    """The broker id the target names (None when it names none, or no spare is left)."""
    if target is None or target == "":
        return min(spares) if spares else None
    if isinstance(target, int):
        return target
    m = re.fullmatch(r"(?:broker:)?(\d+)", target.strip())
    return int(m[1]) if m else None
