"""Where each link of a proxied cluster runs: every connection through a Toxiproxy (pure logic).

A cluster started with link proxies (the capability harness.nodes.capabilities.LinkProxies;
a spec that plans a latency, bandwidth or reset fault gets it) runs a Toxiproxy server in
every Kafka node, started by docker/links-entrypoint.sh before Kafka, with the proxies below:

- **between nodes**, in the node that opens the connection: each peer's name resolves, in
  this node's /etc/hosts, to a loopback address of its own (127.0.1.<id>), where a proxy
  listens on the peer's port and forwards to the peer's container. The advertised
  listeners and quorum voters are the usual names, so brokers, controllers and tools all
  follow them through the proxy: nobody can bypass it after a metadata response (the
  advertised-listener trap of proxies beside Kafka).
- **from clients**, in the broker: the published client port is the proxy's; Kafka's own
  client listener moves to 127.0.0.1:CLIENT_BACKEND_PORT behind it, advertised as before.

So each link of a node passes exactly one proxy that the node's name appears in, and a toxic
on it degrades that link alone (harness.faults.links maps a scope to these proxies). Without
link proxies nothing here is used: the cluster is wired as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.common.built_binary import built_binary
from harness.nodes.topology import CONTROLLER_PORT, INTERNAL_PORT, ZOOKEEPER_PORT, NodeSpec

API_PORT = 8474  # Toxiproxy's HTTP API in each proxied node (reached at the node's address)
CLIENT_BACKEND_PORT = 9094  # Kafka's client listener behind the client proxy (loopback only)
CLIENTS = "clients"  # the client proxy's name
LOOPBACK_PREFIX = "127.0.1."
ZOOKEEPER_LOOPBACK = 250  # 127.0.1.250: ZooKeeper has no node id

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "docker" / "links-entrypoint.sh"
SERVER = "toxiproxy-server"

# The listeners a node connects to on a peer: name (in proxy names) -> port.
INTERNAL, CONTROLLER, ZOOKEEPER = "internal", "controller", "zookeeper"
PORTS = {INTERNAL: INTERNAL_PORT, CONTROLLER: CONTROLLER_PORT, ZOOKEEPER: ZOOKEEPER_PORT}


@dataclass(frozen=True)
class Proxy:
    """One Toxiproxy proxy (the server's config-file entry)."""

    name: str
    listen: str
    upstream: str

    def config(self) -> dict[str, object]:
        return {
            "name": self.name,
            "listen": self.listen,
            "upstream": self.upstream,
            "enabled": True,
        }


def loopback(peer: NodeSpec) -> str:
    """The address a peer's name resolves to inside a proxied node."""
    return f"{LOOPBACK_PREFIX}{ZOOKEEPER_LOOPBACK if peer.node_id is None else peer.node_id}"


def listeners_of(node: NodeSpec) -> list[str]:
    """The listeners other nodes connect to on this node."""
    if node.role == "zookeeper":
        return [ZOOKEEPER]
    return ([INTERNAL] if node.is_broker else []) + ([CONTROLLER] if node.is_controller else [])


def proxy_name(peer: str, listener: str) -> str:
    """The proxy, in a connecting node, of its connections to `peer`'s `listener`."""
    return f"{peer}-{listener}"


def container_name(run_id: str, node: str) -> str:
    """The node's container, by the name Docker's DNS resolves on the cluster network."""
    return f"kc-{run_id}-{node}"


def proxies(node: NodeSpec, nodes: list[NodeSpec], run_id: str) -> list[Proxy]:
    """Every proxy of one Kafka node: one per peer listener, and the client proxy of a broker."""
    out: list[Proxy] = []
    for peer in nodes:
        if peer.name == node.name:
            continue
        for listener in listeners_of(peer):
            port = PORTS[listener]
            out.append(
                Proxy(
                    proxy_name(peer.name, listener),
                    f"{loopback(peer)}:{port}",
                    f"{container_name(run_id, peer.name)}:{port}",
                )
            )
    if node.is_broker and node.host_port is not None:
        out.append(Proxy(CLIENTS, f"0.0.0.0:{node.host_port}", f"127.0.0.1:{CLIENT_BACKEND_PORT}"))
    return out


def hosts(node: NodeSpec, nodes: list[NodeSpec]) -> dict[str, str]:
    """/etc/hosts entries of one proxied node: each peer's name at its loopback address."""
    return {peer.name: loopback(peer) for peer in nodes if peer.name != node.name}


def proxies_json(node: NodeSpec, nodes: list[NodeSpec], run_id: str) -> str:
    """Toxiproxy's -config file body for one node."""
    return json.dumps([p.config() for p in proxies(node, nodes, run_id)])


def server_binary() -> Path:
    """The Toxiproxy server `make toxiproxy` built (into the virtualenv's bin)."""
    return built_binary(
        SERVER, "link proxies (the latency, bandwidth and reset faults)", "toxiproxy"
    )
