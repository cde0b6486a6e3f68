"""Rolling restart: every broker in turn, as an operator does it for an upgrade or a config change.

Each broker goes through RestartFault (graceful, or SIGKILL with `hard`), so its down window
is its own fault.inject / fault.heal on the timeline; before the next one the operation waits
(timeout_s per broker) until no partition is under-replicated, as the operator's runbook says.
"""

from __future__ import annotations

import time

from harness.common.waiting import wait_until
from harness.errors import ConfigError
from harness.faults.control import Node, NodeRef, Operable
from harness.faults.operation import Operation
from harness.faults.options import FaultOptions
from harness.faults.restart import RestartFault


class RollingRestartFault(Operation):
    """Outcome: `restarted` (broker ids, in order) and `full_isr_s` (seconds from each
    broker's restart until every partition had a full ISR again), kept as it goes, so a
    timeout still tells how far the roll came."""

    kind = "rolling-restart"

    def __init__(self, cluster: Operable, target: NodeRef | None, options: FaultOptions) -> None:
        super().__init__(cluster, options)
        if target is not None:
            raise ConfigError("rolling-restart takes no target (brokers: names them in order)")
        self.order: list[Node] = (
            [cluster.node(b) for b in options.brokers]
            if options.brokers is not None
            else sorted(cluster.broker_nodes, key=lambda n: n.node_id or 0)
        )
        if not all(n.is_broker for n in self.order):
            raise ConfigError("rolling-restart restarts brokers only")

    def _inject(self) -> None:
        restarted: list[int | None] = []
        waited: list[float] = []
        self.outcome.update(restarted=restarted, full_isr_s=waited)
        for node in self.order:
            RestartFault(self.ops, node.name, hard=bool(self.options.hard)).inject()
            restarted.append(node.node_id)
            back = time.monotonic()
            wait_until(
                self.ops.under_replicated,
                self.options.operation_timeout_s,
                f"every partition's ISR full again after restarting {node.name}",
                done=lambda urp: not urp,
                retry_on=Exception,
            )
            waited.append(round(time.monotonic() - back, 3))
