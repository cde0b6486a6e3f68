"""A node's links by scope, and the fault that puts toxics on them (latency, bandwidth, reset).

Each link of a proxied cluster passes one Toxiproxy proxy (harness.nodes.links): a link the
target opens, in the target; a link a peer opens to the target, in that peer; clients, in
the target's client proxy. A scope is a set of those proxies; a toxic goes on both streams
of each, so both directions of every link in scope are degraded, whoever opened it.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.errors import ConfigError, FaultError
from harness.faults.base import NodeFault
from harness.faults.control import Node, NodeControl, NodeRef
from harness.nodes import links as wiring
from harness.nodes import toxiproxy
from harness.nodes.capabilities import LinkProxies

Scope = Literal["all", "clients", "replication", "controller"]
SCOPES: tuple[Scope, ...] = ("all", "clients", "replication", "controller")
STREAMS = ("upstream", "downstream")  # toward the listening side, back from it


@dataclass(frozen=True)
class Link:
    """One proxy, in `node`, that carries links of the target."""

    node: Node
    proxy: str

    @property
    def label(self) -> str:
        return f"{self.node.name}:{self.proxy}"


def links_in_scope(target: Node, nodes: Sequence[Node], mode: str, scope: Scope) -> list[Link]:
    """The proxies carrying the target's links in `scope` (each once, in a stable order)."""
    peers = [n for n in nodes if n.name != target.name]
    out: list[Link] = []
    if scope in ("all", "clients") and target.is_broker:
        out.append(Link(target, wiring.CLIENTS))
    if scope in ("all", "replication") and target.is_broker:
        for peer in (p for p in peers if p.is_broker):
            out.append(Link(target, wiring.proxy_name(peer.name, wiring.INTERNAL)))
            out.append(Link(peer, wiring.proxy_name(target.name, wiring.INTERNAL)))
    if scope in ("all", "controller"):
        out += _controller_links(target, peers, mode)
    return out


def _controller_links(target: Node, peers: list[Node], mode: str) -> list[Link]:
    """KRaft: to and from the controllers' listener; ZooKeeper mode: the brokers' sessions."""
    if mode == "zookeeper":
        zk = wiring.proxy_name("zookeeper", wiring.ZOOKEEPER)
        if target.is_broker:
            return [Link(target, zk)]
        return [Link(p, zk) for p in peers if p.is_broker]  # the target is ZooKeeper
    out: list[Link] = []
    kafka_peers = [p for p in peers if p.node_id is not None]
    for peer in kafka_peers:
        if peer.is_controller:
            out.append(Link(target, wiring.proxy_name(peer.name, wiring.CONTROLLER)))
        if target.is_controller:
            out.append(Link(peer, wiring.proxy_name(target.name, wiring.CONTROLLER)))
    return out


def split(value: int) -> tuple[int, int]:
    """A round-trip figure as two one-way halves (upstream, downstream) that add up to it."""
    return (value + 1) // 2, value // 2


class LinkFault(NodeFault):
    """Toxics on every link of the target in scope, removed at heal.

    History: the kind's parameters, scope, links (node:proxy of each); at heal also
    toxics_removed and toxics_gone (gone: the node restarted meanwhile, which dropped its
    toxics with its proxies) and unreached (nodes that were not running at inject)."""

    toxic: str  # Toxiproxy's toxic type
    captures_on_heal = True
    needs = (LinkProxies,)

    _names = itertools.count(1)

    def __init__(self, cluster: NodeControl, target: NodeRef, scope: Scope | None) -> None:
        super().__init__(cluster, target)
        self.scope: Scope = scope or "all"
        self.links = links_in_scope(self.node, cluster.nodes, cluster.mode, self.scope)
        if not self.links:
            raise ConfigError(f"{self.kind}: {self.node.name} has no {self.scope} links")
        self.placed: list[tuple[Link, str, str]] = []  # link, address, toxic name
        self.counts: dict[str, Any] = {}

    def parameters(self) -> dict[str, Any]:
        """The spec's options as the history records them."""
        return {}

    def attributes(self, stream: str) -> dict[str, int]:
        """The toxic's attributes on one stream."""
        return {}

    @property
    def level(self) -> str:
        """How bad, in a few words (the timeline names the window with it)."""
        return ""

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            **self.parameters(),
            "scope": self.scope,
            "level": self.level,
            "links": [link.label for link in self.links],
            **self.counts,
        }

    def affected_nodes(self) -> list[Node]:
        return list({link.node.name: link.node for link in self.links}.values())

    def _inject(self) -> None:
        self.place()

    def _heal(self) -> None:
        self.counts = self.lift()

    def place(self) -> None:
        """The toxics on every reachable link (the target itself must be running)."""
        if self.node.ip() is None:
            raise FaultError(f"{self.kind}: {self.node.name} is not running")
        unreached: set[str] = set()
        try:
            for link in self.links:
                address = link.node.ip()
                if address is None:
                    unreached.add(link.node.name)
                    continue
                for stream in STREAMS:
                    name = f"kc{self.id}-{next(self._names)}-{stream}"
                    toxiproxy.add_toxic(
                        address, link.proxy, name, self.toxic, stream, self.attributes(stream)
                    )
                    self.placed.append((link, address, name))
        except BaseException:
            with contextlib.suppress(Exception):  # a half-placed fault takes nothing away
                self.lift()
            raise
        if unreached:
            self.counts["unreached"] = sorted(unreached)

    def lift(self) -> dict[str, Any]:
        """Remove every toxic placed; how many were still there."""
        removed = gone = 0
        for link, address, name in self.placed:
            now = link.node.ip()
            if now is None or now != address:  # not running, or a new container: toxics gone
                gone += 1
                continue
            if toxiproxy.remove_toxic(address, link.proxy, name):
                removed += 1
            else:
                gone += 1
        self.placed = []
        return {**self.counts, "toxics_removed": removed, "toxics_gone": gone}
