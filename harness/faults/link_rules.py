"""What a link fault's scope needs of its target and its cell (latency, bandwidth, reset)."""

from __future__ import annotations

from harness.faults.kind import CellView, FaultKind, Problem
from harness.faults.targets import Target, with_group
from harness.nodes.topology import CONTROLLER_ID_BASE


def scope_problems(fault: FaultKind, scope: str | None, cell: CellView) -> list[Problem]:
    """Scopes a node has no links in: clients and replication are a broker's; a cluster of
    one broker has no replication links, a single KRaft node no controller links."""
    scope = scope or "all"
    out: list[Problem] = []
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
