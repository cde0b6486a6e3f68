"""STUB: lossy (to be written)."""

from __future__ import annotations

from harness.faults.base import NodeFault
from harness.faults.control import NodeControl, NodeRef
from harness.faults.options import FaultOptions


class LossyFault(NodeFault):
    kind = "lossy"

    def __init__(self, cluster: NodeControl, target: NodeRef, options: FaultOptions) -> None:
        super().__init__(cluster, target)
        self.options = options

    def _inject(self) -> None:
        raise NotImplementedError("lossy")

    def _heal(self) -> None:
        raise NotImplementedError("lossy")
