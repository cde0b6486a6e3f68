"""Rules across a spec's fields, checked per matrix cell: `(key path, what was expected)` pairs.

Pydantic checks each field's shape (harness.spec.models); what depends on several fields
(ZooKeeper needs 3.x, a consumer-crash names a member that exists, a setting the spec owns
through its own key) is checked here, once a matrix cell is complete.
"""

from __future__ import annotations

import re

from harness.faults.targets import Target
from harness.nodes.topology import CONTROLLER_ID_BASE, MANAGED_KEYS
from harness.spec.expect import metric_problem
from harness.spec.models import (
    ClusterSpec,
    FaultSpec,
    GroupConsumerSpec,
    ProducerSpec,
    Spec,
)

_CONSUMER_TARGET = re.compile(r"consumer:(?P<set>[A-Za-z0-9._-]+)/(?P<member>\d+)")

# Producer/consumer settings the spec owns through its own keys.
_PRODUCER_OWNED = {
    "acks": "producer.acks",
    "request.required.acks": "producer.acks",
    "enable.idempotence": "producer.enable_idempotence",
    "bootstrap.servers": "the cluster",
}
# Kafka source options a Spark consumer's own keys set (harness.workload.stream_consumer).
_SPARK_OWNED = {
    "kafka.bootstrap.servers": "the cluster",
    "subscribe": "the spec's topic",
    "subscribePattern": "the spec's topic",
    "assign": "the spec's topic",
    "startingOffsets": "consumer.starting_offsets",
    "failOnDataLoss": "consumer.fail_on_data_loss",
    "maxOffsetsPerTrigger": "consumer.max_offsets_per_trigger",
}
_CONSUMER_OWNED = {
    "group.id": "consumer.group",
    "enable.auto.commit": "consumer.commit",
    "bootstrap.servers": "the cluster",
}


Problem = tuple[str, str]  # (key path, what was expected)


def spec_problems(spec: Spec) -> list[Problem]:
    """Rules across fields; every problem names its key path."""
    out: list[Problem] = []
    out += _cluster_problems(spec.cluster)
    c = spec.cluster
    if spec.topic.replication_factor > c.brokers:
        out.append(
            (
                "topic.replication_factor",
                f"expected <= cluster.brokers ({c.brokers}) (got {spec.topic.replication_factor})",
            )
        )
    out += _producer_problems(spec.producer)
    out += _consumer_problems(spec)
    for i, fault in enumerate(spec.faults):
        out += [(f"faults[{i}].{k}", msg) for k, msg in fault_problems(spec, fault)]
    set_names = [name for name, _ in spec.consumer_sets()]
    for metric, bound in spec.expect.items():
        why = metric_problem(metric, bound, set_names)
        if why:
            out.append((f"expect.{metric}", why))
    return out


def _cluster_problems(c: ClusterSpec) -> list[Problem]:
    out: list[Problem] = []
    major = int(c.version.split(".", 1)[0])
    if c.mode == "zookeeper" and major != 3:
        out.append(
            (
                "cluster.version",
                f"expected a 3.x version in zookeeper mode (ZooKeeper was removed in 4.0) (got {c.version})",
            )
        )
    if c.mode == "zookeeper" and c.controllers:
        out.append(("cluster.controllers", f"expected 0 in zookeeper mode (got {c.controllers})"))
    for key in sorted(MANAGED_KEYS & set(c.broker_config)):
        out.append(
            (
                f"cluster.broker_config.{key}",
                "the harness sets this to wire the containers together; remove it",
            )
        )
    return out


def _producer_problems(p: ProducerSpec) -> list[Problem]:
    out: list[Problem] = []
    if p.records is None and p.duration_s is None:
        out.append(("producer", "expected records, duration_s or both (got neither)"))
    if p.enable_idempotence and p.acks != "all":
        out.append(
            (
                "producer.enable_idempotence",
                f"true needs acks=all (librdkafka refuses idempotence otherwise) (got acks={p.acks})",
            )
        )
    for key in sorted(set(p.config) & set(_PRODUCER_OWNED)):
        out.append((f"producer.config.{key}", f"set through {_PRODUCER_OWNED[key]} instead"))
    return out


def _consumer_problems(spec: Spec) -> list[Problem]:
    out: list[Problem] = []
    if spec.consumer is not None and spec.consumers is not None:
        out.append(("consumers", "give either consumer or consumers, not both"))
        return out
    if spec.consumers is not None and not spec.consumers:
        out.append(("consumers", "expected at least one consumer set (got an empty list)"))
    groups: dict[str, str] = {}
    for i, (name, c) in enumerate(spec.consumer_sets()):
        path = spec.consumer_path(i)
        if isinstance(c, GroupConsumerSpec):
            if c.group in groups:
                out.append(
                    (
                        f"{path}.group",
                        f"group {c.group!r} is already used by set {groups[c.group]}; "
                        "give each group set its own group",
                    )
                )
            groups.setdefault(c.group, name)
            for key in sorted(set(c.config) & set(_CONSUMER_OWNED)):
                owner = _CONSUMER_OWNED[key].replace("consumer", path, 1)
                out.append((f"{path}.config.{key}", f"set through {owner} instead"))
        else:
            for key in sorted(set(c.config) & set(_SPARK_OWNED)):
                owner = _SPARK_OWNED[key].replace("consumer", path, 1)
                out.append((f"{path}.config.{key}", f"set through {owner} instead"))
    return out


def fault_problems(spec: Spec, fault: FaultSpec) -> list[Problem]:
    """Problems of one fault, keyed by its field name."""
    out: list[Problem] = []
    if fault.kind == "restart" and fault.duration_s is not None:
        out.append(("duration_s", "restart takes no duration (it stops and starts at once)"))
    if fault.kind == "consumer-crash":
        why = _consumer_target_problem(spec, fault.target)
    else:
        why = _broker_target_problem(spec, fault)
    if why:
        out.append(("target", why))
    return out


def _consumer_target_problem(spec: Spec, text: str) -> str | None:
    if text == "random":
        return None
    m = _CONSUMER_TARGET.fullmatch(text)
    if not m:
        return f"expected consumer:<set>/<member index> or random (got {text!r})"
    sets = dict(spec.consumer_sets())
    consumer = sets.get(m["set"])
    if consumer is None:
        return f"no consumer set named {m['set']!r}; sets: {', '.join(sets)}"
    if int(m["member"]) >= consumer.members:
        return (
            f"set {m['set']!r} has {consumer.members} member(s), indexes 0..{consumer.members - 1} "
            f"(got {m['member']})"
        )
    return None


def _broker_target_problem(spec: Spec, fault: FaultSpec) -> str | None:
    text, c = fault.target, spec.cluster
    if text.startswith("consumer:"):
        return f"{text!r} is a consumer target; only kind consumer-crash takes one"
    if text == "coordinator-of":
        if spec.default_group() is None:
            return "plain coordinator-of needs a group consumer set; name the group: coordinator-of:<group>"
        return None
    try:
        target = Target.parse(text)
    except ValueError:
        return (
            "expected broker:<id> | controller | leader-of:<topic>/<partition> | "
            f"coordinator-of[:<group>] | random | zookeeper (got {text!r})"
        )
    if target.kind == "broker":
        assert target.broker is not None
        ids = list(range(1, c.brokers + 1))
        ids += [CONTROLLER_ID_BASE + i for i in range(1, c.controllers + 1)]
        if target.broker not in ids:
            return f"no node {target.broker}; ids: {', '.join(map(str, ids))} (got {text!r})"
    if target.kind == "leader-of":
        if target.topic != spec.topic.name:
            return f"expected the spec's topic {spec.topic.name!r} (got {target.topic!r})"
        assert target.partition is not None
        if target.partition >= spec.topic.partitions:
            return (
                f"expected a partition below topic.partitions ({spec.topic.partitions}) "
                f"(got {target.partition})"
            )
    if target.kind == "zookeeper":
        if c.mode != "zookeeper":
            return "target zookeeper exists only in mode zookeeper"
        if fault.kind == "cut-clients":
            return "ZooKeeper has no client listener to cut"
        if fault.kind == "cut-replication":
            return "ZooKeeper does not replicate partitions; target a broker"
    return None
