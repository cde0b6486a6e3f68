"""STUB: split (to be written)."""

from __future__ import annotations

from harness.faults.control import NodeControl, NodeRef
from harness.faults.options import FaultOptions
from harness.faults.partition import PartitionFault


def split(cluster: NodeControl, target: NodeRef | None, options: FaultOptions) -> PartitionFault:
    raise NotImplementedError("split")
