"""A fault written in a test as a spec's fault entry, `{"kind": "kill", "target": "leader-of:orders/0"}`,
checked by the spec's own models and kind rules, so a test gets the errors `validate` gives.

A test has no schedule and no workload: `at_s`, `duration_s`, `optional` and `after_step` are
refused (the test injects and heals), so are the kinds the nemesis plays on an experiment's
consumer and producer processes. What a kind's rules read of "the cell" comes from the running cluster
(`ClusterFacts`): its mode and nodes, its settings, the partitions of the topic the target names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.common.spec_base import MAX_PARTITIONS
from harness.errors import ConfigError
from harness.faults.control import NodeControl
from harness.faults.kind import CellView, FaultKind
from harness.faults.registry import KINDS, SPEC_KEYS
from harness.faults.target_rules import TOPIC_TARGET
from harness.faults.targets import Target
from harness.spec.load import validation_problems
from harness.spec.models import FaultSpec

Problem = tuple[str, str]  # (key, what was expected)

REFUSED = {
    "at_s": "a test's fault fires when the test injects it (chaos.inject, a with block)",
    "duration_s": "a test heals its fault itself (handle.heal(), the end of its with block, teardown)",
    "optional": "a test's fault is done or raises; nothing is optional",
    "after_step": "a test's fault fires when the test injects it, not at an operation's step",
}
KEYS = tuple(k for k in SPEC_KEYS if k not in REFUSED)  # what a test's fault takes


class FaultDictError(ConfigError):
    """A test's fault dict is wrong; `problems` are (key, what was expected) pairs."""

    def __init__(self, data: object, problems: list[Problem]) -> None:
        self.problems = problems
        lines = "\n".join(f"  {key}: {why}" for key, why in problems)
        super().__init__(f"fault {data!r}:\n{lines}")


@dataclass(frozen=True)
class ClusterFacts:
    """What the kind rules may read of the cluster a test's fault is done to."""

    mode: str
    brokers: tuple[int, ...]
    controllers: tuple[int, ...] = ()  # dedicated KRaft controllers
    spares: tuple[int, ...] = ()
    broker_config: Mapping[str, str | int | float | bool] = field(default_factory=dict)
    partitions_of: Callable[[str], int | None] = lambda _topic: None  # None: not known
    dynamic_quorum: bool = False  # KIP-853: voters can be added and removed
    spare_controllers: tuple[int, ...] = ()

    @classmethod
    def of(cls, cluster: NodeControl) -> ClusterFacts:
        """From a running cluster (KafkaCluster, or any NodeControl)."""
        ids = [(n.node_id, n.is_broker) for n in cluster.nodes if n.node_id is not None]

        def partitions_of(topic: str) -> int | None:
            states = getattr(cluster, "partition_states", None)
            try:
                return len(states(topic)) if states is not None else None
            except Exception:  # not there (yet): the fault says so when it fires
                return None

        spare_ids = getattr(cluster, "spare_ids", None)
        spare_controller_ids = getattr(cluster, "spare_controller_ids", None)
        return cls(
            mode=cluster.mode,
            brokers=tuple(sorted(i for i, broker in ids if broker)),
            controllers=tuple(sorted(i for i, broker in ids if not broker)),
            spares=tuple(spare_ids()) if spare_ids is not None else (),
            broker_config=dict(getattr(cluster, "broker_config", {})),
            partitions_of=partitions_of,
            dynamic_quorum=bool(getattr(cluster, "dynamic_quorum", False)),
            spare_controllers=(
                tuple(spare_controller_ids()) if spare_controller_ids is not None else ()
            ),
        )


class _OneFault(BaseModel):
    """The spec's `faults:` list with one entry: its error paths and messages are the spec's."""

    model_config = ConfigDict(extra="forbid")
    faults: list[FaultSpec]


def parse_fault(data: object, facts: ClusterFacts) -> FaultKind:
    """The fault's kind model, or FaultDictError listing every problem by key."""
    if not isinstance(data, Mapping):
        raise FaultDictError(
            data,
            [
                (
                    "(fault)",
                    "expected a mapping like {'kind': 'kill', 'target': 'leader-of:<topic>/0'} "
                    f"(got {type(data).__name__})",
                )
            ],
        )
    problems = [(k, f"{why}; no {k}") for k, why in REFUSED.items() if k in data]
    entry = {k: v for k, v in data.items() if k not in REFUSED}
    try:
        fault = _OneFault.model_validate({"faults": [{"at_s": 0, **entry}]}).faults[0]
    except ValidationError as exc:
        raise FaultDictError(data, problems + _spec_problems(exc)) from None
    if fault.plays != "cluster":
        problems.append(
            (
                "kind",
                f"{fault.kind} acts on an experiment's {fault.plays} processes; a test's "
                f"faults are done to the cluster: {', '.join(KINDS)}",
            )
        )
    else:
        problems += _rules(fault, facts)
    if problems:
        raise FaultDictError(data, problems)
    return fault


def _spec_problems(exc: ValidationError) -> list[Problem]:
    out = []
    for path, why in validation_problems(exc):
        key = path.removeprefix("faults[0].").removeprefix("faults[0]")
        if why.startswith("unknown key"):
            why = f"unknown key; allowed: {', '.join(KEYS)}"
        out.append((key or "(fault)", why))
    return out


def _rules(fault: FaultKind, facts: ClusterFacts) -> list[Problem]:
    """The kind's own rules (options of other kinds, modes, wipe, targets...) on this cluster."""
    style = fault.planned_style()
    if style == "topic" and fault.target == "random":
        return [("target", f"{fault.kind} needs a topic: <topic> or <topic>/<partition>")]
    topic, tid, share_group = _named(fault.target, style)
    known = facts.partitions_of(topic) if topic else None
    cell = CellView(
        mode=facts.mode,
        brokers=facts.brokers,
        spares=facts.spares,
        controllers=facts.controllers,
        topic=topic or "",
        partitions=known if known is not None else MAX_PARTITIONS,
        grown_partitions=known if known is not None else MAX_PARTITIONS,
        replication_factor=1,  # per topic, not known here; Kafka refuses what cannot be done
        broker_config=facts.broker_config,
        default_group=None,  # plain coordinator-of: the rule asks for the group's name
        transactional_ids=(tid,) if tid else (),
        share_groups=(share_group,) if share_group else (),
        dynamic_quorum=facts.dynamic_quorum,
        spare_controllers=facts.spare_controllers,
    )
    return fault.problems(cell)


def _named(target: str, style: str) -> tuple[str | None, str | None, str | None]:
    """The topic, the transactional id and the share group a target names (the test's, any
    it likes)."""
    if style == "topic":
        m = TOPIC_TARGET.fullmatch(target)
        return (m["topic"] if m else None), None, None
    try:
        parsed = Target.parse(target)
    except ConfigError:
        return None, None, None  # the kind's target rule says what is wrong
    share_group = parsed.group if parsed.kind == "share-coordinator-of" else None
    return parsed.topic, parsed.transactional_id, share_group
