"""Typed experiment spec. Pydantic checks shapes; `spec_problems` checks rules across fields.

Cross-field rules run per matrix cell (a base spec may be completed by its matrix), so a
`Spec` straight from the YAML is typed but not necessarily runnable; cells always are.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    model_serializer,
    model_validator,
)

from harness.faults.targets import Target
from harness.nodes.topology import CONTROLLER_ID_BASE, DEFAULT_VERSION, MANAGED_KEYS, MAX_BROKERS
from harness.spec.expect import Expect, metric_problem

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]+$")]
Scalar = str | int | float | bool
Settings = dict[str, Scalar]

FaultKind = Literal[
    "kill",
    "stop",
    "restart",
    "pause",
    "isolate",
    "partition",
    "cut-clients",
    "cut-replication",
    "consumer-crash",
]
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


class StrictModel(BaseModel):
    """Unknown keys are errors; no silent coercion (YAML already gives typed values)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _normalise_acks(raw: Any) -> Any:
    if isinstance(raw, bool):
        return raw  # rejected by the Literal with the list of choices
    text = str(raw).strip().lower()
    if text in ("all", "-1"):
        return "all"
    return text if text in ("0", "1") else raw


class ClusterSpec(StrictModel):
    mode: Literal["kraft", "zookeeper"] = "kraft"
    version: Annotated[str, StringConstraints(pattern=r"^\d+\.\d+\.\d+$")] = DEFAULT_VERSION
    brokers: int = Field(default=3, ge=1, le=MAX_BROKERS)
    controllers: int = Field(default=0, ge=0, le=MAX_BROKERS)
    broker_config: Settings = {}


class TopicSpec(StrictModel):
    name: Name = "chaos"
    partitions: int = Field(default=6, ge=1)
    replication_factor: int = Field(default=3, ge=1)
    config: Settings = {}


class ProducerSpec(StrictModel):
    acks: Annotated[Literal["0", "1", "all"], BeforeValidator(_normalise_acks)] = "all"
    enable_idempotence: bool | None = None
    records: int | None = Field(default=None, ge=1)
    duration_s: float | None = Field(default=None, gt=0)
    rate: float = Field(default=500, gt=0)
    record_size: int = Field(default=100, ge=24)
    config: Settings = {}

    @property
    def idempotence(self) -> bool:
        """Unset means on exactly when acks=all (librdkafka allows it only there)."""
        if self.enable_idempotence is None:
            return self.acks == "all"
        return self.enable_idempotence

    @property
    def planned_duration_s(self) -> float:
        """When the producer stops: records at the rate, or duration_s, whichever comes first."""
        ends = [self.duration_s] if self.duration_s is not None else []
        if self.records is not None:
            ends.append(self.records / self.rate)
        return min(ends) if ends else 0.0


class GroupConsumerSpec(StrictModel):
    kind: Literal["group"] = "group"
    group: Annotated[str, StringConstraints(min_length=1)] = "chaos-group"
    members: int = Field(default=1, ge=1)
    commit: Literal["auto", "after-process", "before-process"] = "after-process"
    config: Settings = {}


class SparkConsumerSpec(StrictModel):
    """A Structured Streaming query; `config` holds extra Kafka source options
    (`kafka.<client setting>`, `minPartitions`, …)."""

    kind: Literal["spark"] = "spark"
    config: Settings = {}
    trigger_ms: int = Field(default=1000, ge=1)
    max_offsets_per_trigger: int | None = Field(default=None, ge=1)
    fail_on_data_loss: bool = True
    starting_offsets: Literal["earliest", "latest"] = "earliest"

    @property
    def members(self) -> int:
        """One streaming query: member index 0 ("spark/q")."""
        return 1


def _consumer_tag(value: Any) -> str:
    kind = value.get("kind", "group") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if kind in ("group", "spark") else "invalid"


ConsumerSpec = Annotated[
    Annotated[GroupConsumerSpec, Tag("group")] | Annotated[SparkConsumerSpec, Tag("spark")],
    Discriminator(
        _consumer_tag,
        custom_error_type="consumer_kind",
        custom_error_message="expected kind group or spark",
    ),
]
CONSUMER_TAGS = ("group", "spark")


def _normalise_fault_kind(raw: Any) -> Any:
    return "isolate" if raw == "partition" else raw


class FaultSpec(StrictModel):
    at_s: float = Field(ge=0)
    kind: Annotated[FaultKind, BeforeValidator(_normalise_fault_kind)]
    target: str = "random"
    duration_s: float | None = Field(default=None, gt=0)


class RecoverySpec(StrictModel):
    timeout_s: float = Field(default=120, gt=0)
    drain_timeout_s: float = Field(default=120, gt=0)


class Override(StrictModel):
    """Per-cell expectation changes: `when` maps axis paths to a value or a list (any of)."""

    when: dict[str, Any]
    expect: Expect


class Matrix(BaseModel):
    """`matrix:` in YAML is one flat mapping; `expect` is its one reserved key."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    axes: dict[str, list[Any]] = {}
    expect: list[Override] = []

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        axes = {k: v for k, v in data.items() if k != "expect"}
        out: dict[str, Any] = {"axes": axes}
        if "expect" in data:
            out["expect"] = data["expect"]
        return out

    @model_serializer(mode="wrap")
    def _flatten(self, handler: Any) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        flat: dict[str, Any] = dict(dumped["axes"])
        if self.expect:
            flat["expect"] = dumped["expect"]
        return flat


class Spec(StrictModel):
    name: Name
    description: str = ""
    seed: int | None = Field(default=None, ge=0)
    cluster: ClusterSpec = ClusterSpec()
    topic: TopicSpec = TopicSpec()
    producer: ProducerSpec = ProducerSpec()
    consumer: ConsumerSpec | None = None
    consumers: list[ConsumerSpec] | None = None
    faults: list[FaultSpec] = []
    recovery: RecoverySpec = RecoverySpec()
    expect: Expect = {}
    matrix: Matrix | None = None

    def consumer_sets(self) -> list[tuple[str, GroupConsumerSpec | SparkConsumerSpec]]:
        """Named sets: the kind, or kind + position among its kind ("group", "group2")."""
        if self.consumers is not None:
            specs = list(self.consumers)
        elif self.consumer is not None:
            specs = [self.consumer]
        else:
            specs = [GroupConsumerSpec()]
        seen: dict[str, int] = {}
        out: list[tuple[str, GroupConsumerSpec | SparkConsumerSpec]] = []
        for c in specs:
            seen[c.kind] = seen.get(c.kind, 0) + 1
            out.append((c.kind if seen[c.kind] == 1 else f"{c.kind}{seen[c.kind]}", c))
        return out

    def default_group(self) -> str | None:
        """The group plain `coordinator-of` names: the first group set's."""
        for _, c in self.consumer_sets():
            if isinstance(c, GroupConsumerSpec):
                return c.group
        return None

    def consumer_path(self, index: int) -> str:
        return f"consumers[{index}]" if self.consumers is not None else "consumer"


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
