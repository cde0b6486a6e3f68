"""STUB: cut-quorum (to be written)."""

from __future__ import annotations

from harness.faults.base import NodeFault


class QuorumCutFault(NodeFault):
    kind = "cut-quorum"

    def _inject(self) -> None:
        raise NotImplementedError("cut-quorum")

    def _heal(self) -> None:
        raise NotImplementedError("cut-quorum")
