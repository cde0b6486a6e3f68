"""Hard kill: SIGKILL the JVM; the container stays, so heal restarts it with its data."""

from __future__ import annotations

from harness.faults.base import NodeFault


class KillFault(NodeFault):
    kind = "kill"

    def _inject(self) -> None:
        self.node.kill()

    def _heal(self) -> None:
        self._bring_back()
