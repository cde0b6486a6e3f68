"""Restart: down and straight back up (graceful by default, SIGKILL with hard=True)."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from harness.faults.base import Fault, NodeFault
from harness.faults.control import ChaosTarget, NodeControl, NodeRef
from harness.faults.drawing import Drawing, pick
from harness.faults.kind import CellView, FaultKind, required


class RestartFault(NodeFault):
    """inject() returns with the node back up; the history shows the down window."""

    kind = "restart"
    captures_on_heal = True

    def __init__(self, cluster: NodeControl, target: NodeRef, hard: bool = False) -> None:
        super().__init__(cluster, target)
        self.hard = hard

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "hard": self.hard}

    def inject(self) -> Fault:
        super().inject()
        self.heal()
        return self

    def _inject(self) -> None:
        if self.hard:
            self.node.kill()
        else:
            self.node.stop()

    def _heal(self) -> None:
        self._bring_back()


class Restart(FaultKind):
    """`{kind: restart, target: ..., hard: true}`: down and back up at once (an operation)."""

    name: ClassVar[str] = "restart"
    drawing: ClassVar[Drawing | None] = Drawing()
    operation: ClassVar[bool] = True
    zookeeper_target: ClassVar[bool] = True

    hard: bool | None = None  # SIGKILL instead of a graceful stop

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """hard: false (a graceful stop) or true (SIGKILL)."""
        return {"hard": pick(rng, (False, True))}

    def takes_turns(self) -> bool:
        """A one-node restart waits only for the faults on its node, as a kill does."""
        return False

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return RestartFault(cluster, required(target), hard=bool(self.hard))
