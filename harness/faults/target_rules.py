"""What a fault's `target` may name in a cell, by the kind's target style (node, topic...).

The node rule reads the kind's flags (broker_only, zookeeper_target); a kind with more to
say about its target overrides `FaultKind.target_problem` and may call these. A fault is read
through `Targeted` (harness.faults.kind, which calls these, is not imported).
"""

from __future__ import annotations

import re
from typing import ClassVar, Protocol

from harness.faults.cell_view import CellView
from harness.faults.targets import Target, names_plain_coordinator, with_group
from harness.nodes.topology import CONTROLLER_ID_BASE

TOPIC_TARGET = re.compile(r"(?P<topic>[A-Za-z0-9._-]+)(/(?P<partition>\d+))?")
NODE_SYNTAX = (
    "broker:<id> | controller | leader-of:<topic>/<partition> | leader-of:<topic>/* | "
    "coordinator-of[:<group>] | txn-coordinator-of:<transactional.id> | "
    "share-coordinator-of:<group>/<topic>/<partition> | random | zookeeper, "
    "optionally followed by "
    "'except <target>[, <target>...]'"
)


class Targeted(Protocol):
    """What the rules read of a fault (a harness.faults.kind.FaultKind): its words and flags."""

    kind: str
    target: str
    broker_only: ClassVar[bool]
    zookeeper_target: ClassVar[bool]


def by_style(fault: Targeted, style: str, cell: CellView) -> str | None:
    """The problem of `fault.target` by its kind's TargetStyle (harness.faults.kind)."""
    if style in ("node", "split"):
        return node_target(fault, cell)
    if style == "topic":
        return topic_target(fault, cell)
    if style == "spare":
        return spare_target(fault, cell)
    return no_target(fault)


def node_target(fault: Targeted, cell: CellView) -> str | None:
    text = fault.target
    if text.startswith("consumer:"):
        return f"{text!r} is a consumer target; only kind consumer-crash takes one"
    if names_plain_coordinator(text) and cell.default_group is None:
        return "plain coordinator-of needs a group consumer set; name the group: coordinator-of:<group>"
    try:
        target = Target.parse(with_group(text, cell.default_group))
    except ValueError as exc:
        said = str(exc)
        return said if said.startswith("'except'") else f"expected {NODE_SYNTAX} (got {text!r})"
    for other in target.excluded:
        why = _target_problem(fault, cell, other, text)
        if why:
            return f"except: {why}"
    return _target_problem(fault, cell, target, text)


def _target_problem(fault: Targeted, cell: CellView, target: Target, text: str) -> str | None:
    if target.kind == "broker":
        assert target.broker is not None
        ids = [*cell.brokers, *cell.controllers]
        if target.broker not in ids:
            return f"no node {target.broker}; ids: {', '.join(map(str, ids))} (got {text!r})"
    if target.kind == "leader-of":
        if target.topic != cell.topic:
            return f"expected the spec's topic {cell.topic!r} (got {target.topic!r})"
        if target.partition is not None and target.partition >= cell.grown_partitions:
            return partition_problem(cell, target.partition)
    if target.kind == "txn-coordinator-of":
        txn_ids = cell.transactional_ids
        if not txn_ids:
            return (
                "txn-coordinator-of needs a transactional producer (producer.transactions) "
                "or a pipeline"
            )
        if target.transactional_id not in txn_ids:
            return (
                f"expected one of the transactional ids {', '.join(txn_ids)} "
                f"(got {target.transactional_id!r})"
            )
    if target.kind == "share-coordinator-of":
        why = _share_coordinator_problem(cell, target)
        if why:
            return why
    if target.kind == "zookeeper":
        if cell.mode != "zookeeper":
            return "target zookeeper exists only in mode zookeeper"
        if not fault.zookeeper_target:
            return f"{fault.kind} acts on a broker; ZooKeeper cannot be its target"
    if target.kind in ("controller", "broker") and fault.broker_only:
        ref = target.broker
        if target.kind == "controller" and cell.controllers:
            return f"{fault.kind} acts on a broker; the controller is a dedicated controller here"
        if ref is not None and ref > CONTROLLER_ID_BASE:
            return f"{fault.kind} acts on a broker; {ref} is a dedicated controller"
    return None


def _share_coordinator_problem(cell: CellView, target: Target) -> str | None:
    if not cell.share_groups:
        return "share-coordinator-of needs a share consumer set (consumer.kind: share)"
    if target.group not in cell.share_groups:
        groups = ", ".join(cell.share_groups)
        return f"expected one of the share groups {groups} (got {target.group!r})"
    if target.topic != cell.topic:
        return f"expected the spec's topic {cell.topic!r} (got {target.topic!r})"
    if target.partition is not None and target.partition >= cell.grown_partitions:
        return partition_problem(cell, target.partition)
    return None


def topic_target(fault: Targeted, cell: CellView) -> str | None:
    if fault.target == "random":
        return None  # the spec's topic
    m = TOPIC_TARGET.fullmatch(fault.target)
    if not m:
        return f"expected <topic> or <topic>/<partition> (got {fault.target!r})"
    partition = int(m["partition"]) if m["partition"] is not None else None
    if m["topic"] == cell.topic and partition is not None and partition >= cell.grown_partitions:
        return partition_problem(cell, partition)
    return None


def partition_problem(cell: CellView, partition: int) -> str:
    limit = cell.grown_partitions
    grown = " once add-partitions ran" if limit > cell.partitions else ""
    return f"expected a partition below topic.partitions ({limit}{grown}) (got {partition})"


def spare_target(fault: Targeted, cell: CellView) -> str | None:
    spares = cell.spares
    if not spares:
        return f"{fault.kind} needs cluster.spare_brokers >= 1 (a declared broker to start)"
    if fault.target == "random":
        return None  # the next spare
    m = re.fullmatch(r"broker:(\d+)", fault.target)
    if not m or int(m[1]) not in spares:
        ids = ", ".join(f"broker:{i}" for i in spares)
        return (
            f"expected a spare broker ({ids}) or no target for the next one (got {fault.target!r})"
        )
    return None


def no_target(fault: Targeted) -> str | None:
    if fault.target != "random":
        return f"{fault.kind} takes no target (got {fault.target!r})"
    return None


def spare_left(kind: str, at_s: float, cell: CellView, spares: int, what: str) -> str | None:
    """Why this add-<what> finds no spare left: more of its kind planned by its time than the
    cluster declares spares (None: one is left, or none is declared, which its target rule
    says)."""
    before = sum(1 for t, k in cell.planned if k == kind and t <= at_s)
    if spares and before > spares:
        return (
            f"no spare {what} left for this {kind}: {before} planned by at_s {at_s:g}, "
            f"cluster.spare_{what}s is {spares}"
        )
    return None
