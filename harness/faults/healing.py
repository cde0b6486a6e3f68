"""Putting nodes back: heal the active faults, then sweep what a fault may have left behind.

Works on `NodeControl` alone, so the cluster delegates to it and unit tests drive it
with fake nodes. What "registered again" means is the cluster's business: it passes
that wait in.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from harness.errors import HarnessError
from harness.faults import iptables
from harness.faults.base import Fault, refused_nodes
from harness.faults.control import Node, NodeControl, NodeRef
from harness.faults.kill import KillFault
from harness.faults.pause import PauseFault
from harness.faults.stop import StopFault
from harness.nodes import toxiproxy
from harness.nodes.capabilities import LinkProxies

DOWN = ("exited", "created", "dead")


def heal_faults_of(cluster: NodeControl, node: Node, kinds: tuple[type[Fault], ...]) -> None:
    """Heal the active faults of these kinds that touch this node, newest first."""
    for fault in reversed(list(cluster.faults)):
        if isinstance(fault, kinds) and node in fault.affected_nodes():
            fault.heal()


def start(cluster: NodeControl, ref: NodeRef) -> None:
    """Bring back a killed or stopped node (healing its fault) and wait until it has started."""
    node = cluster.node(ref)
    heal_faults_of(cluster, node, (KillFault, StopFault))
    if node.status() != "running":
        node.start()
        node.wait_started(cluster.start_timeout_s)


def unpause(cluster: NodeControl, ref: NodeRef) -> None:
    node = cluster.node(ref)
    heal_faults_of(cluster, node, (PauseFault,))
    if node.status() == "paused":
        node.unpause()


def heal_all(cluster: NodeControl, wait_registered: Callable[[float], None]) -> None:
    """Undo every fault, then sweep: nothing paused, stopped or partitioned remains.

    `wait_registered(deadline)` waits until every broker is registered again (but those
    Kafka refused to start: harness.faults.base.refused_nodes). A heal
    that fails does not stop the others; the sweep runs anyway and the failures are
    raised at the end (after `cluster.healed` is in the history).
    """
    errors: list[str] = []
    for fault in reversed(list(cluster.faults)):
        try:
            fault.heal()
        except Exception as exc:  # keep healing the rest
            errors.append(f"{fault.kind} #{fault.id}: {exc}")
    restarted = []
    proxied = cluster.has(LinkProxies)
    refused = refused_nodes(cluster)  # Kafka would not start them: not again, not waited for
    for node in cluster.nodes:
        status = node.status()
        if status == "paused":
            node.unpause()
        elif status in DOWN and node.name not in refused:
            node.start()
            restarted.append(node)
        iptables.remove_all(node)
        # A toxic whose fault's heal failed goes too (a node started now has fresh proxies).
        address = node.ip() if proxied and node.node_id is not None else None
        if address is not None and node not in restarted:
            try:
                toxiproxy.reset(address)
            except Exception as exc:
                errors.append(f"toxics of {node.name}: {exc}")
    deadline = time.monotonic() + cluster.start_timeout_s
    for node in restarted:
        node.wait_started(max(1.0, deadline - time.monotonic()))
    wait_registered(deadline)
    cluster.history.append("cluster.healed", errors=errors)
    if errors:
        raise HarnessError(
            "heal_all restored the cluster, but some heals failed: " + "; ".join(errors)
        )
