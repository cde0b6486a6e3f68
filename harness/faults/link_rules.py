"""What a link fault's scope needs of its target and its cell (latency, bandwidth, reset)."""

from __future__ import annotations

import random

from harness.faults.drawing import pick
from harness.faults.kind import CellView, FaultKind, Problem
from harness.faults.links import Scope
from harness.faults.targets import Target, with_group
from harness.nodes.topology import CONTROLLER_ID_BASE


def scope_problems(fault: FaultKind, scope: str | None, cell: CellView) -> list[Problem]:
    """Scopes a node has no links in: clients and replication are a broker's; a cluster of
    one broker has no replication links, a single KRaft node no controller links; a cluster
    that migrates to KRaft none proxied (its quorum is not)."""
    scope = scope or "all"
    out: list[Problem] = []
    if cell.migration_controllers:  # as cluster.link_proxies says, on the fault's own key
        out.append(("kind", f"{fault.kind} cannot act on a cluster that migrates to KRaft"))
    if scope == "replication" and len(cell.brokers) < 2:
        out.append(("scope", "replication needs at least two brokers"))
    if (
        scope == "controller"
        and cell.mode == "kraft"
        and len(cell.brokers) + len(cell.controllers) < 2
    ):
        out.append(("scope", "controller needs at least two KRaft nodes"))
    if scope in ("clients", "replication"):
        try:
            target = Target.parse(with_group(fault.target, cell.default_group))
        except ValueError:
            return out  # the target rule says what is wrong with it
        if target.kind == "zookeeper":
            out.append(("scope", f"ZooKeeper has no {scope} links; its scope is controller"))
        elif target.kind == "controller" and cell.controllers:
            out.append(("scope", f"the controller is a dedicated controller: no {scope} links"))
        elif target.broker is not None and target.broker > CONTROLLER_ID_BASE:
            out.append(("scope", f"{target.broker} is a dedicated controller: no {scope} links"))
    return out


def drawn_scope(rng: random.Random | None, cell: CellView) -> Scope:
    """A drawn link fault's scope: clients, replication, controller or all, each kept only
    where the cell has such links (replication: two brokers; controller in KRaft: two Kafka
    nodes). clients comes first: a probe's, the scope that refuses the most targets (not a
    dedicated controller), so a role passes its probe only if every scope drawn fits it."""
    scopes: list[Scope] = ["clients"]
    if len(cell.brokers) >= 2:
        scopes.append("replication")
    if cell.mode != "kraft" or len(cell.brokers) + len(cell.controllers) >= 2:
        scopes.append("controller")
    scopes.append("all")
    return pick(rng, scopes)
