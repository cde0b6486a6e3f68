"""Graceful stop: SIGTERM, the broker shuts down cleanly (controlled shutdown)."""

from __future__ import annotations

from harness.faults.base import NodeFault


class StopFault(NodeFault):
    kind = "stop"

    def _inject(self) -> None:
        self.node.stop()

    def _heal(self) -> None:
        self._bring_back()
