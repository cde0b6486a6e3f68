"""Pause: freeze every process of the node (cgroup freezer, like SIGSTOP); nothing is closed."""

from __future__ import annotations

from harness.faults.base import NodeFault


class PauseFault(NodeFault):
    kind = "pause"

    def _inject(self) -> None:
        self.node.pause()

    def _heal(self) -> None:
        self.node.unpause()
