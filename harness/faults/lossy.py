"""A lossy link: a random fraction of the target broker's packets dropped, both directions.

iptables' statistic match in the fault's own chain; no netem on these kernels. Each scope
is a set of filters; every filter gets a rule without a target (it only counts what the
filter matched) followed by the same filter with the random DROP, so the heal can record
how many packets were seen and how many dropped before the chain goes.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.errors import ConfigError, FaultError
from harness.faults import iptables
from harness.faults.base import NodeFault
from harness.faults.control import ChaosTarget, NodeControl, NodeRef
from harness.faults.drawing import Drawing, between, pick
from harness.faults.kind import CellView, FaultKind, Problem, required
from harness.faults.links import Scope

# The links' scope word (one option name means one thing across kinds); lossy takes three.
LossScope = Literal["all", "replication", "clients"]

# Packets on the loopback interface (the node talking to itself) are never dropped.
LOOPBACK = [["-i", "lo", "-j", "RETURN"], ["-o", "lo", "-j", "RETURN"]]


class LossyFault(NodeFault):
    """History: loss, scope; at heal also matched_packets and dropped_packets (None when the
    counters were gone, e.g. the node was restarted meanwhile)."""

    kind = "lossy"
    captures_on_heal = True

    def __init__(
        self,
        cluster: NodeControl,
        target: NodeRef,
        loss: float | None,
        scope: LossScope | None = None,
    ) -> None:
        super().__init__(cluster, target)
        if loss is None or not 0 < loss <= 1:
            raise ConfigError(f"lossy needs loss: a fraction 0 < loss <= 1 (got {loss})")
        if not self.node.is_broker:
            raise ConfigError(f"lossy acts on a broker, not {self.node.name}")
        self.loss: float = loss
        self.scope: LossScope = scope or "all"
        self.counts: dict[str, int | None] = {}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "loss": self.loss, "scope": self.scope, **self.counts}

    def filters(self) -> list[list[str]]:
        """iptables matches of the packets this fault may drop (one rule each way)."""
        if self.scope == "clients":
            port = self.node.host_port
            if port is None:
                raise ConfigError(f"{self.node.name} has no client listener")
            return [["-p", "tcp", "--dport", str(port)], ["-p", "tcp", "--sport", str(port)]]
        if self.scope == "replication":
            peers = [n.ip() for n in self.cluster.broker_nodes if n is not self.node]
            ips = [ip for ip in peers if ip]
            if not ips:
                raise FaultError(
                    f"lossy replication: no other running broker than {self.node.name}"
                )
            return [[addr, ip] for ip in ips for addr in ("-s", "-d")]
        return [[]]  # every packet, loopback excepted (see rules)

    def rules(self) -> list[list[str]]:
        out = list(LOOPBACK) if self.scope == "all" else []
        for match in self.filters():
            out += [match, [*match, *iptables.random_drop(self.loss)]]
        return out

    def _inject(self) -> None:
        iptables.install(self.node, iptables.chain_for(self.id), self.rules())

    def _heal(self) -> None:
        chain = iptables.chain_for(self.id)
        rows = iptables.packet_counts(self.node, chain)
        self.counts = {
            "matched_packets": None if rows is None else sum(n for n, t in rows if not t),
            "dropped_packets": None if rows is None else sum(n for n, t in rows if t == "DROP"),
        }
        iptables.remove(self.node, chain)


class Lossy(FaultKind):
    """`{kind: lossy, target: ..., loss: 0.3, scope: replication}`."""

    name: ClassVar[str] = "lossy"
    drawing: ClassVar[Drawing | None] = Drawing()
    broker_only: ClassVar[bool] = True

    loss: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)  # packets dropped
    scope: Scope | None = None  # all links, only between brokers, only to clients

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """loss: 0.05-0.5 of the packets; scope: clients, replication (two brokers or more)
        or all."""
        scopes: list[LossScope] = ["clients", "replication", "all"]
        if len(cell.brokers) < 2:
            scopes.remove("replication")
        return {"loss": between(rng, 0.05, 0.5, digits=2), "scope": pick(rng, scopes)}

    def rules(self, cell: CellView) -> list[Problem]:
        if self.scope == "controller":
            return [("scope", "lossy takes scope all, replication or clients (not controller)")]
        if self.loss is None:
            return [("loss", "lossy needs loss: the fraction of packets dropped (0 < loss <= 1)")]
        if self.scope == "replication" and len(cell.brokers) < 2:
            return [("scope", "replication needs at least two brokers")]
        return []

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> LossyFault:
        assert self.scope != "controller"  # rules()
        return LossyFault(cluster, required(target), self.loss, self.scope)
