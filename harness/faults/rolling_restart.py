"""Rolling restart: every broker in turn, as an operator does it for an upgrade or a config change.

Each broker goes through RestartFault (graceful, or SIGKILL with `hard`), so its down window
is its own fault.inject / fault.heal on the timeline; before the next one the operation waits
(timeout_s per broker) until no partition is under-replicated, as the operator's runbook says.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from pydantic import Field

from harness.errors import ConfigError
from harness.faults.control import ChaosTarget, Node, NodeRef, Operable
from harness.faults.drawing import Drawing, pick
from harness.faults.kind import CellView, FaultKind, NodeId, OperationTimeout, Problem, TargetStyle
from harness.faults.operation import Operation
from harness.faults.restart import RestartFault


class RollingRestart(FaultKind):
    """`{kind: rolling-restart, brokers: [3, 1], hard: true}`: every broker (or these) in turn."""

    name: ClassVar[str] = "rolling-restart"
    # Every broker in turn (no target: the role's drawn_target is the default `random`).
    drawing: ClassVar[Drawing | None] = Drawing(roles=("cluster",))
    target_style: ClassVar[TargetStyle] = "none"
    operation: ClassVar[bool] = True

    brokers: list[NodeId] | None = Field(default=None, min_length=1)  # these, in this order
    hard: bool | None = None  # SIGKILL instead of a graceful stop
    timeout_s: OperationTimeout = None  # per broker: until every ISR is full again

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """hard: false (graceful stops) or true (SIGKILLs); every broker, in id order."""
        return {"hard": pick(rng, (False, True))}

    def rules(self, cell: CellView) -> list[Problem]:
        if self.brokers is None:
            return []
        reachable = cell.reachable
        unknown = [b for b in self.brokers if b not in reachable]
        if unknown:
            return [("brokers", f"no broker {unknown}; brokers (spares included): {reachable}")]
        if len(set(self.brokers)) != len(self.brokers):
            return [("brokers", f"a broker is listed twice (got {self.brokers})")]
        return []

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> RollingRestartFault:
        return RollingRestartFault(cluster, target, self)


class RollingRestartFault(Operation):
    """Outcome: `restarted` (broker ids, in order) and `full_isr_s` (seconds from each
    broker's restart until every partition had a full ISR again), kept as it goes, so a
    timeout still tells how far the roll came."""

    kind = "rolling-restart"

    def __init__(self, cluster: Operable, target: NodeRef | None, spec: RollingRestart) -> None:
        super().__init__(cluster, spec.given(), spec.timeout_s)
        self.spec = spec
        if target is not None:
            raise ConfigError("rolling-restart takes no target (brokers: names them in order)")
        self.order: list[Node] = (
            [cluster.node(b) for b in spec.brokers]
            if spec.brokers is not None
            else sorted(cluster.broker_nodes, key=lambda n: n.node_id or 0)
        )
        if not all(n.is_broker for n in self.order):
            raise ConfigError("rolling-restart restarts brokers only")

    def _inject(self) -> None:
        restarted: list[int | None] = []
        waited: list[float] = []
        self.outcome.update(restarted=restarted, full_isr_s=waited)
        for node in self.order:
            RestartFault(self.ops, node.name, hard=bool(self.spec.hard)).inject()
            restarted.append(node.node_id)
            waited.append(self.wait_full_isr(f"restarting {node.name}"))
