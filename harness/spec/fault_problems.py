"""Rules for one planned fault against the rest of its cell: the kind's mode, options and target.

What each kind takes comes from harness.faults.registry.KINDS; what a target may name
depends on the cluster, the topic and the consumer sets of the cell.
"""

from __future__ import annotations

import re

from harness.faults.producer import PRODUCER_TARGET
from harness.faults.registry import KINDS, PIPELINE_CRASH, is_consumer_fault, is_producer_fault
from harness.faults.targets import Target, names_plain_coordinator, with_group
from harness.nodes.topology import CONTROLLER_ID_BASE
from harness.results.events import PIPELINE_SET
from harness.spec.models import FaultSpec, Spec

Problem = tuple[str, str]  # (key under the fault, what was expected)

_CONSUMER_TARGET = re.compile(r"consumer:(?P<set>[A-Za-z0-9._-]+)/(?P<member>\d+)")
_TOPIC_TARGET = re.compile(r"(?P<topic>[A-Za-z0-9._-]+)(/(?P<partition>\d+))?")
NODE_SYNTAX = (
    "broker:<id> | controller | leader-of:<topic>/<partition> | leader-of:<topic>/* | "
    "coordinator-of[:<group>] | txn-coordinator-of:<transactional.id> | random | zookeeper, "
    "optionally followed by "
    "'except <target>[, <target>...]'"
)
DEFAULT_OFFSETS_RF = 3  # Kafka's offsets.topic.replication.factor


def fault_problems(spec: Spec, fault: FaultSpec) -> list[Problem]:
    """Problems of one fault, keyed by its field name."""
    if is_consumer_fault(fault.kind):
        out = [(k, f"{fault.kind} takes no {k}") for k in fault.options_set()]
        why = _consumer_target_problem(spec, fault.target)
        if fault.kind == PIPELINE_CRASH:
            why = _pipeline_target_problem(spec, fault.target)
        return out + ([("target", why)] if why else [])
    if is_producer_fault(fault.kind):
        out = [(k, f"{fault.kind} takes no {k}") for k in fault.options_set()]
        if fault.target not in (PRODUCER_TARGET, "random"):
            out.append(("target", f"expected {PRODUCER_TARGET} (got {fault.target!r})"))
        return out
    kind = KINDS[fault.kind]
    out = []
    if spec.cluster.mode not in kind.modes:
        out.append(("kind", f"{fault.kind} exists only in mode {' or '.join(kind.modes)}"))
    for key in fault.options_set():
        if key not in kind.options:
            takes = ", ".join(kind.options) or "no options"
            out.append((key, f"{fault.kind} takes no {key} (it takes: {takes})"))
    if kind.operation and fault.duration_s is not None:
        out.append(
            ("duration_s", f"{fault.kind} takes no duration (it is done once, when it fires)")
        )
    out += _KIND_RULES.get(fault.kind, _no_rules)(spec, fault)
    why = _TARGET_RULES[kind.target](spec, fault)
    if why:
        out.append(("target", why))
    return out


# --- targets, by the style the registry gives each kind ------------------------------------------
def _node_target(spec: Spec, fault: FaultSpec) -> str | None:
    text = fault.target
    if text.startswith("consumer:"):
        return f"{text!r} is a consumer target; only kind consumer-crash takes one"
    if names_plain_coordinator(text) and spec.default_group() is None:
        return "plain coordinator-of needs a group consumer set; name the group: coordinator-of:<group>"
    try:
        target = Target.parse(with_group(text, spec.default_group()))
    except ValueError as exc:
        said = str(exc)
        return said if said.startswith("'except'") else f"expected {NODE_SYNTAX} (got {text!r})"
    for other in target.excluded:
        why = _target_problem(spec, fault, other, text)
        if why:
            return f"except: {why}"
    return _target_problem(spec, fault, target, text)


def _target_problem(spec: Spec, fault: FaultSpec, target: Target, text: str) -> str | None:
    c = spec.cluster
    if target.kind == "broker":
        assert target.broker is not None
        ids = broker_ids(spec) + controller_ids(spec)
        if target.broker not in ids:
            return f"no node {target.broker}; ids: {', '.join(map(str, ids))} (got {text!r})"
    if target.kind == "leader-of":
        if target.topic != spec.topic.name:
            return f"expected the spec's topic {spec.topic.name!r} (got {target.topic!r})"
        if target.partition is not None and target.partition >= grown_partitions(spec):
            return _partition_problem(spec, target.partition)
    if target.kind == "txn-coordinator-of":
        txn_ids = transactional_ids(spec)
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
    if target.kind == "zookeeper":
        if c.mode != "zookeeper":
            return "target zookeeper exists only in mode zookeeper"
        if fault.kind not in ("kill", "stop", "restart", "pause", "isolate"):
            return f"{fault.kind} acts on a broker; ZooKeeper cannot be its target"
    if target.kind in ("controller", "broker") and fault.kind in _BROKER_ONLY:
        ref = target.broker
        if target.kind == "controller" and c.controllers:
            return f"{fault.kind} acts on a broker; the controller is a dedicated controller here"
        if ref is not None and ref > CONTROLLER_ID_BASE:
            return f"{fault.kind} acts on a broker; {ref} is a dedicated controller"
    return None


_BROKER_ONLY = ("cut-clients", "cut-replication", "cut-zookeeper", "lossy", "decommission", "split")


def _split_target(spec: Spec, fault: FaultSpec) -> str | None:
    if fault.sides is not None:
        if fault.target != "random":
            return "give either sides or a target (with side), not both"
        return None
    return _node_target(spec, fault)


def _topic_target(spec: Spec, fault: FaultSpec) -> str | None:
    if fault.target == "random":
        return None  # the spec's topic
    m = _TOPIC_TARGET.fullmatch(fault.target)
    if not m:
        return f"expected <topic> or <topic>/<partition> (got {fault.target!r})"
    partition = int(m["partition"]) if m["partition"] is not None else None
    if (
        m["topic"] == spec.topic.name
        and partition is not None
        and partition >= grown_partitions(spec)
    ):
        return _partition_problem(spec, partition)
    return None


def grown_partitions(spec: Spec) -> int:
    """The most partitions the topic can have during the cell (add-partitions grows it)."""
    counts = [f.count for f in spec.faults if f.kind == "add-partitions" and f.count]
    return max([spec.topic.partitions, *counts])


def _partition_problem(spec: Spec, partition: int) -> str:
    limit = grown_partitions(spec)
    grown = " once add-partitions ran" if limit > spec.topic.partitions else ""
    return f"expected a partition below topic.partitions ({limit}{grown}) (got {partition})"


def _spare_target(spec: Spec, fault: FaultSpec) -> str | None:
    spares = spare_ids(spec)
    if not spares:
        return "add-broker needs cluster.spare_brokers >= 1 (a declared broker to start)"
    if fault.target == "random":
        return None  # the next spare
    m = re.fullmatch(r"broker:(\d+)", fault.target)
    if not m or int(m[1]) not in spares:
        ids = ", ".join(f"broker:{i}" for i in spares)
        return (
            f"expected a spare broker ({ids}) or no target for the next one (got {fault.target!r})"
        )
    return None


def _no_target(spec: Spec, fault: FaultSpec) -> str | None:
    if fault.target != "random":
        return f"{fault.kind} takes no target (got {fault.target!r})"
    return None


_TARGET_RULES = {
    "node": _node_target,
    "split": _split_target,
    "topic": _topic_target,
    "spare": _spare_target,
    "none": _no_target,
}


# --- what each kind needs of its options --------------------------------------------------------
def _no_rules(spec: Spec, fault: FaultSpec) -> list[Problem]:
    return []


def _reassign(spec: Spec, fault: FaultSpec) -> list[Problem]:
    out: list[Problem] = []
    if (fault.to is None) == (fault.replication_factor is None):
        return [("to", "reassign takes either to (one partition's replicas) or replication_factor")]
    m = _TOPIC_TARGET.fullmatch(fault.target)
    partition = m is not None and m["partition"] is not None
    reachable = broker_ids(spec) + spare_ids(spec)
    if fault.to is not None:
        if not partition:
            out.append(
                (
                    "target",
                    f"to moves one partition: expected <topic>/<partition> (got {fault.target!r})",
                )
            )
        if len(set(fault.to)) != len(fault.to):
            out.append(("to", f"a broker is listed twice (got {fault.to})"))
        unknown = [b for b in fault.to if b not in reachable]
        if unknown:
            out.append(("to", f"no broker {unknown}; brokers (spares included): {reachable}"))
    if fault.replication_factor is not None:
        if partition:
            out.append(
                (
                    "target",
                    f"replication_factor applies to a whole topic: expected <topic> (got {fault.target!r})",
                )
            )
        if fault.replication_factor > len(reachable):
            out.append(
                (
                    "replication_factor",
                    f"expected <= the brokers (spares included: {len(reachable)}) (got {fault.replication_factor})",
                )
            )
    return out


def _add_partitions(spec: Spec, fault: FaultSpec) -> list[Problem]:
    if fault.count is None:
        return [("count", "add-partitions needs count: the topic's new partition count")]
    if fault.target not in ("random", spec.topic.name):
        return [
            (
                "target",
                f"add-partitions grows the workload's topic {spec.topic.name!r} (got {fault.target!r})",
            )
        ]
    if fault.count <= spec.topic.partitions:
        return [
            (
                "count",
                f"expected more than topic.partitions ({spec.topic.partitions}) (got {fault.count})",
            )
        ]
    return []


def _decommission(spec: Spec, fault: FaultSpec) -> list[Problem]:
    rf = max(spec.topic.replication_factor, offsets_rf(spec))
    total = len(broker_ids(spec)) + len(spare_ids(spec))
    if total <= rf:
        return [
            (
                "kind",
                f"decommission moves every replica of a broker to another one: it needs more "
                f"brokers (spares included: {total}) than the largest replication factor ({rf})",
            )
        ]
    return []


def _split(spec: Spec, fault: FaultSpec) -> list[Problem]:
    if fault.sides is None:
        if len(broker_ids(spec)) < 2:
            return [("kind", "split needs at least two brokers")]
        return []
    if fault.side is not None:
        return [("side", "give either sides or side (with a target), not both")]
    known: list[int | str] = [*broker_ids(spec), *controller_ids(spec)]
    if spec.cluster.mode == "zookeeper":
        known.append("zookeeper")
    out: list[Problem] = []
    flat = [n for side in fault.sides for n in side]
    if len(fault.sides) < 2 or any(not side for side in fault.sides):
        out.append(("sides", f"expected at least two non-empty sides (got {fault.sides})"))
    if len(set(map(str, flat))) != len(flat):
        out.append(("sides", f"a node is on more than one side (got {fault.sides})"))
    unknown = [n for n in flat if n not in known]
    if unknown:
        out.append(("sides", f"no node {unknown}; nodes: {known}"))
    return out


def _lossy(spec: Spec, fault: FaultSpec) -> list[Problem]:
    if fault.loss is None:
        return [("loss", "lossy needs loss: the fraction of packets dropped (0 < loss <= 1)")]
    if fault.scope == "replication" and len(broker_ids(spec)) < 2:
        return [("scope", "replication needs at least two brokers")]
    return []


def _rolling_restart(spec: Spec, fault: FaultSpec) -> list[Problem]:
    if fault.brokers is None:
        return []
    reachable = broker_ids(spec) + spare_ids(spec)
    unknown = [b for b in fault.brokers if b not in reachable]
    if unknown:
        return [("brokers", f"no broker {unknown}; brokers (spares included): {reachable}")]
    if len(set(fault.brokers)) != len(fault.brokers):
        return [("brokers", f"a broker is listed twice (got {fault.brokers})")]
    return []


def _cut_quorum(spec: Spec, fault: FaultSpec) -> list[Problem]:
    voters = spec.cluster.controllers or spec.cluster.brokers
    if spec.cluster.mode == "kraft" and voters < 2:
        return [("kind", "cut-quorum needs a quorum of at least two controllers")]
    return []


def _kill(spec: Spec, fault: FaultSpec) -> list[Problem]:
    """wipe empties a broker's log directories: only a broker that holds no controller state."""
    if not fault.wipe:
        return []
    why = "wipe empties a broker's log directories"
    if fault.target == "zookeeper":
        return [("wipe", f"{why}; ZooKeeper's data cannot be wiped")]
    if spec.cluster.mode != "kraft":
        return []
    if not spec.cluster.controllers:
        return [
            (
                "wipe",
                f"{why}; in KRaft with combined nodes every broker is a controller voter and its "
                "metadata log would go too: give the cluster dedicated controllers "
                "(cluster.controllers >= 1) or use mode zookeeper",
            )
        ]
    m = re.fullmatch(r"broker:(\d+)", fault.target)
    if fault.target == "controller" or (m is not None and int(m[1]) > CONTROLLER_ID_BASE):
        return [
            ("wipe", f"{why}; a dedicated KRaft controller holds the metadata log, not a broker's")
        ]
    return []


_KIND_RULES = {
    "kill": _kill,
    "reassign": _reassign,
    "add-partitions": _add_partitions,
    "decommission": _decommission,
    "split": _split,
    "lossy": _lossy,
    "rolling-restart": _rolling_restart,
    "cut-quorum": _cut_quorum,
}


# --- the cell's node ids ------------------------------------------------------------------------
def broker_ids(spec: Spec) -> list[int]:
    return list(range(1, spec.cluster.brokers + 1))


def spare_ids(spec: Spec) -> list[int]:
    c = spec.cluster
    return list(range(c.brokers + 1, c.brokers + c.spare_brokers + 1))


def controller_ids(spec: Spec) -> list[int]:
    return [CONTROLLER_ID_BASE + i for i in range(1, spec.cluster.controllers + 1)]


def offsets_rf(spec: Spec) -> int:
    value = spec.cluster.broker_config.get("offsets.topic.replication.factor", DEFAULT_OFFSETS_RF)
    return int(value)


def transactional_ids(spec: Spec) -> list[str]:
    """The transactional ids of the cell's clients: the producer's, each pipeline member's."""
    ids = (
        [] if spec.producer.transactions is None else [spec.producer.transactions.transactional_id]
    )
    p = spec.pipeline
    if p is not None:
        # At-least-once members are not transactional: the id then names the broker that
        # would coordinate it, so the two guarantees of one experiment lose the same broker.
        ids += [p.member_transactional_id(i) for i in range(p.members)]
    return ids


def member_counts(spec: Spec) -> dict[str, int]:
    """Members per consumer set, the pipeline's ("pipeline") included."""
    counts = {name: c.members for name, c in spec.consumer_sets()}
    if spec.pipeline is not None:
        counts[PIPELINE_SET] = spec.pipeline.members
    return counts


def _pipeline_target_problem(spec: Spec, text: str) -> str | None:
    if spec.pipeline is None:
        return f"{PIPELINE_CRASH} needs a pipeline (the spec's pipeline: section)"
    if text != "random" and not text.startswith(f"consumer:{PIPELINE_SET}/"):
        return f"expected consumer:{PIPELINE_SET}/<member index> or random (got {text!r})"
    return _consumer_target_problem(spec, text)


def _consumer_target_problem(spec: Spec, text: str) -> str | None:
    if text == "random":
        return None
    m = _CONSUMER_TARGET.fullmatch(text)
    if not m:
        return f"expected consumer:<set>/<member index> or random (got {text!r})"
    sets = member_counts(spec)
    members = sets.get(m["set"])
    if members is None:
        return f"no consumer set named {m['set']!r}; sets: {', '.join(sets)}"
    if int(m["member"]) >= members:
        return (
            f"set {m['set']!r} has {members} member(s), indexes 0..{members - 1} "
            f"(got {m['member']})"
        )
    return None
