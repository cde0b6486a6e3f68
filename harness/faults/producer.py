"""Faults done to the producer process: SIGKILL (`producer-crash`) and SIGSTOP (`producer-pause`).

Booked like cluster faults, so the history shows their window (fault.inject .. fault.heal)
and the heal phase ends them: a killed producer is restarted (a new incarnation, whose
`init_transactions` fences the dead one), a paused one resumed. A paused transactional
producer is the shape of KAFKA-17754: its transaction may time out at the coordinator
while the client, frozen mid-call, still believes in it.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from harness.faults.base import Fault
from harness.faults.control import Node, NodeControl, NodeRef
from harness.faults.drawing import Drawing
from harness.faults.kind import CellView, FaultKind, Plays, Problem
from harness.faults.stage import ProducerControl, Stage

PRODUCER_TARGET = "producer"


class ProducerCrashFault(Fault):
    kind = "producer-crash"

    def __init__(self, cluster: NodeControl, producer: ProducerControl) -> None:
        super().__init__(cluster)
        self.producer = producer

    def _inject(self) -> None:
        self.producer.crash()

    def _heal(self) -> None:
        self.producer.restart()

    def describe(self) -> dict[str, Any]:
        return {"fault": self.kind, "target": PRODUCER_TARGET}

    def affected_nodes(self) -> list[Node]:
        return []


class ProducerPauseFault(ProducerCrashFault):
    kind = "producer-pause"

    def _inject(self) -> None:
        self.producer.pause()

    def _heal(self) -> None:
        self.producer.resume()


class ProducerCrash(FaultKind):
    """`{kind: producer-crash}`: the producer process SIGKILLed, a new one started at heal."""

    name: ClassVar[str] = "producer-crash"
    plays: ClassVar[Plays] = "producer"
    drawing: ClassVar[Drawing | None] = Drawing(roles=("client",))  # the producer, no options
    worker: ClassVar[type[ProducerCrashFault]] = ProducerCrashFault

    def problems(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = [(k, f"{self.kind} takes no {k}") for k in self.options_set()]
        if self.target not in (PRODUCER_TARGET, "random"):
            out.append(("target", f"expected {PRODUCER_TARGET} (got {self.target!r})"))
        return out

    def process_target(self) -> str:
        return PRODUCER_TARGET

    @classmethod
    def drawn_target(cls, rng: random.Random | None, cell: CellView) -> str:
        """`client`: the producer."""
        return PRODUCER_TARGET

    def plan_target(self, cell: CellView, rng: random.Random) -> str:
        return PRODUCER_TARGET

    def resolves_node(self, target: str) -> bool:
        return False

    def unplayable(self, stage: Stage, target: str) -> str | None:
        if stage.producer is None:
            return "the producer is not a process the nemesis can act on"
        return None

    def act(self, stage: Stage, target: NodeRef, index: int) -> Fault:
        """The fault on the producer process (booked with the cluster's like any)."""
        assert stage.producer is not None  # unplayable()
        return self.worker(stage.cluster, stage.producer)


class ProducerPause(ProducerCrash):
    """`{kind: producer-pause}`: the producer process SIGSTOPped, resumed at heal."""

    name: ClassVar[str] = "producer-pause"
    worker: ClassVar[type[ProducerCrashFault]] = ProducerPauseFault
