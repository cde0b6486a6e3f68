"""STUB: rolling-restart (to be written)."""

from __future__ import annotations

from harness.faults.control import NodeRef, Operable
from harness.faults.operation import Operation
from harness.faults.options import FaultOptions


class RollingRestartFault(Operation):
    kind = "rolling-restart"

    def __init__(self, cluster: Operable, target: NodeRef | None, options: FaultOptions) -> None:
        super().__init__(cluster, options)
        self.target = target

    def _inject(self) -> None:
        raise NotImplementedError("rolling-restart")
