"""A bandwidth cap on a node's links (Trogdor's rateLimitKbit, Toxiproxy's bandwidth toxic).

Each connection in scope carries at most `rate_kbit` each way. Kafka keeps one connection
per client and broker, and one per replica fetcher (num.replica.fetchers, default 1), so a
connection's cap is the link's: a follower's replication from one leader, a producer's
writes to one broker. Toxiproxy counts in KB/s: the cap is rate_kbit / 8, at least 1 KB/s.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from pydantic import Field

from harness.faults.control import ChaosTarget, NodeControl, NodeRef
from harness.faults.drawing import Drawing, spread
from harness.faults.kind import CellView, FaultKind, Needs, Problem, required
from harness.faults.link_rules import drawn_scope, scope_problems
from harness.faults.links import LinkFault, Scope
from harness.nodes.capabilities import LinkProxies

MIN_RATE_KBIT = 8  # Toxiproxy's smallest cap, 1 KB/s
MAX_RATE_KBIT = 10_000_000


def kilobytes_per_s(rate_kbit: int) -> int:
    return max(1, round(rate_kbit / 8))


class BandwidthFault(LinkFault):
    kind = "bandwidth"
    toxic = "bandwidth"

    def __init__(
        self, cluster: NodeControl, target: NodeRef, rate_kbit: int, scope: Scope | None = None
    ) -> None:
        super().__init__(cluster, target, scope)
        self.rate_kbit = rate_kbit

    def parameters(self) -> dict[str, Any]:
        return {"rate_kbit": self.rate_kbit}

    def attributes(self, stream: str) -> dict[str, int]:
        return {"rate": kilobytes_per_s(self.rate_kbit)}

    @property
    def level(self) -> str:
        return f"{self.rate_kbit} kbit/s {self.scope}"


class Bandwidth(FaultKind):
    """`{kind: bandwidth, target: ..., rate_kbit: 800, scope: replication}`."""

    name: ClassVar[str] = "bandwidth"
    drawing: ClassVar[Drawing | None] = Drawing()
    zookeeper_target: ClassVar[bool] = True
    needs: ClassVar[Needs] = (LinkProxies,)

    rate_kbit: int | None = Field(default=None, ge=MIN_RATE_KBIT, le=MAX_RATE_KBIT)
    scope: Scope | None = None  # all (default), clients, replication, controller

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """rate_kbit: 64-8000, log-uniform (8 KB/s to 1 MB/s per connection: around the
        default producer's 500 records/s of 100 bytes, ~400 kbit/s); scope: clients,
        replication, controller or all (harness.faults.link_rules.drawn_scope)."""
        return {"rate_kbit": spread(rng, 64, 8000), "scope": drawn_scope(rng, cell)}

    def rules(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = []
        if self.rate_kbit is None:
            out.append(("rate_kbit", "bandwidth needs rate_kbit: the cap per connection, each way"))
        return out + scope_problems(self, self.scope, cell)

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> BandwidthFault:
        assert self.rate_kbit is not None  # rules()
        return BandwidthFault(cluster, required(target), self.rate_kbit, self.scope)
