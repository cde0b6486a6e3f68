"""Latency with jitter on a node's links: slow, not cut (Trogdor's latencyMs, Toxiproxy's latency).

A round trip over a link in scope takes `delay_ms` ± `jitter_ms` longer: half of it each way,
on every proxy that carries the link (harness.faults.links). Each chunk of data is held
from when it arrived, so pipelined requests are delayed, not throttled.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from pydantic import Field

from harness.faults.control import ChaosTarget, NodeControl, NodeRef
from harness.faults.drawing import Drawing, spread, whole
from harness.faults.kind import CellView, FaultKind, Needs, Problem, required
from harness.faults.link_rules import drawn_scope, scope_problems
from harness.faults.links import LinkFault, Scope, split
from harness.nodes.capabilities import LinkProxies

MAX_DELAY_MS = 600_000


class LatencyFault(LinkFault):
    kind = "latency"
    toxic = "latency"

    def __init__(
        self,
        cluster: NodeControl,
        target: NodeRef,
        delay_ms: int,
        jitter_ms: int = 0,
        scope: Scope | None = None,
    ) -> None:
        super().__init__(cluster, target, scope)
        self.delay_ms = delay_ms
        self.jitter_ms = jitter_ms

    def parameters(self) -> dict[str, Any]:
        return {"delay_ms": self.delay_ms, "jitter_ms": self.jitter_ms}

    def attributes(self, stream: str) -> dict[str, int]:
        half = 0 if stream == "upstream" else 1
        return {"latency": split(self.delay_ms)[half], "jitter": split(self.jitter_ms)[half]}

    @property
    def level(self) -> str:
        jitter = f"±{self.jitter_ms}" if self.jitter_ms else ""
        return f"+{self.delay_ms}{jitter} ms {self.scope}"


class Latency(FaultKind):
    """`{kind: latency, target: ..., delay_ms: 200, jitter_ms: 50, scope: clients}`."""

    name: ClassVar[str] = "latency"
    drawing: ClassVar[Drawing | None] = Drawing()
    zookeeper_target: ClassVar[bool] = True
    needs: ClassVar[Needs] = (LinkProxies,)

    delay_ms: int | None = Field(
        default=None, ge=0, le=MAX_DELAY_MS
    )  # added per round trip (0: a control cell)
    jitter_ms: int | None = Field(default=None, ge=0, le=MAX_DELAY_MS)  # ± around it
    scope: Scope | None = None  # all (default), clients, replication, controller

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """delay_ms: 100-3000, log-uniform (past KRaft's 2 s fetch and heartbeat timeouts,
        below the clients' 30 s request timeout); jitter_ms: 0 to half the delay; scope:
        clients, replication, controller or all (harness.faults.link_rules.drawn_scope)."""
        delay = spread(rng, 100, 3000)
        return {
            "delay_ms": delay,
            "jitter_ms": whole(rng, 0, delay // 2),
            "scope": drawn_scope(rng, cell),
        }

    def rules(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = []
        if self.delay_ms is None:
            out.append(
                ("delay_ms", "latency needs delay_ms: the milliseconds added per round trip")
            )
        elif self.jitter_ms is not None and self.jitter_ms > self.delay_ms:
            out.append(("jitter_ms", f"at most delay_ms ({self.delay_ms})"))
        return out + scope_problems(self, self.scope, cell)

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> LatencyFault:
        assert self.delay_ms is not None  # rules()
        return LatencyFault(
            cluster, required(target), self.delay_ms, self.jitter_ms or 0, self.scope
        )
