"""Link proxies: every link of the cluster through a Toxiproxy (harness.nodes.links).

What the latency, bandwidth and reset faults act on. Off, the cluster is wired exactly as
without them. Spec `cluster.link_proxies` (default: on when a planned fault needs it),
`KafkaCluster(link_proxies=True)`, marker key `link_proxies`, `with_link_proxies()`;
`cluster.start` carries `link_proxies: true`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Self, TypedDict

from harness.common.spec_base import StrictModel
from harness.nodes import links
from harness.nodes.capabilities.base import (
    BuilderMethods,
    Entrypoint,
    Problem,
    Shape,
    Switch,
    Wiring,
)
from harness.nodes.topology import NodeSpec

LINKS_DIR = "/opt/kafka-chaos-links"  # the Toxiproxy server and entry point, mounted read-only


class Options(TypedDict, total=False):
    link_proxies: bool


class SpecKeys(StrictModel):
    # Every link through a Toxiproxy (harness.nodes.links). None: when a link fault is planned.
    link_proxies: bool | None = None


class Builder(BuilderMethods):
    def with_link_proxies(self, on: bool = True) -> Self:
        """Every link through a Toxiproxy: what latency, bandwidth and reset faults act on."""
        return self._set(link_proxies=on)


class LinkProxies(Switch[SpecKeys], builder=Builder):
    key = "link_proxies"
    title = "link proxies"
    doc = "every link through a Toxiproxy in the node that opens it, clients' too"
    missing = (
        "{kind} needs link proxies: start the cluster with link_proxies=True "
        "(a spec that plans a link fault gets them)"
    )
    refused = "{kind} acts on link proxies; cluster.link_proxies is false"
    _server: Path | None = None  # the Toxiproxy server (prepare)

    def spec_problems(self, shape: Shape) -> list[Problem]:
        if self.on and shape.migration_controllers:
            return [
                (
                    "link_proxies",
                    "expected off with migration_controllers (the quorum is not proxied)",
                )
            ]
        return []

    def prepare(self) -> None:
        """The Toxiproxy server `make toxiproxy` built (ConfigError naming the fix if none)."""
        if self.on:
            self._server = links.server_binary()

    def wire(self, node: NodeSpec, nodes: Sequence[NodeSpec], run_id: str) -> Wiring:
        """Its proxies and /etc/hosts entries, the server and entry point mounted, and its
        client listener behind the client proxy."""
        if not self.on:
            return Wiring()
        server = self._server or links.server_binary()
        return Wiring(
            env={"KAFKA_CHAOS_PROXIES": links.proxies_json(node, list(nodes), run_id)},
            mounts={
                str(server): f"{LINKS_DIR}/toxiproxy-server",
                str(links.ENTRYPOINT): f"{LINKS_DIR}/entrypoint",
            },
            extra_hosts=links.hosts(node, list(nodes)),
            entrypoints=(Entrypoint(f"{LINKS_DIR}/entrypoint"),),
            client_backend_port=links.CLIENT_BACKEND_PORT,
        )
