"""Typed experiment spec. Pydantic checks shapes; `harness.spec.problems` checks rules across fields.

Cross-field rules run per matrix cell (a base spec may be completed by its matrix), so a
`Spec` straight from the YAML is typed but not necessarily runnable; cells always are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    TypeAdapter,
    field_validator,
    model_serializer,
    model_validator,
)

from harness.common.spec_base import (
    MAX_PARTITIONS,
    MAX_SECONDS,
    MAX_SEED,
    Name,
    Settings,
    StrictModel,
)
from harness.faults.kind import FaultKind
from harness.faults.registry import ALIASES, PARSE_MODELS, SPEC_WORDS, every_option
from harness.faults.registry import FAULT_KINDS as FAULT_KINDS  # the spec's kinds are these
from harness.nodes.capabilities import (
    AnyCapability,
    Capabilities,
    CapabilityFields,
    CapabilityOptions,
    FakeClock,
    for_cell,
)
from harness.nodes.topology import DEFAULT_VERSION, MAX_BROKERS

# The consumer kinds' models (harness.spec.consumers) and the producer's
# (harness.spec.producer), re-exported: a child process imports only its own part.
from harness.spec.broker_logs import BrokerLogsSpec
from harness.spec.bug import BugSpec
from harness.spec.consumers import CONSUMER_TAGS as CONSUMER_TAGS
from harness.spec.consumers import AnyPipelineSpec as AnyPipelineSpec
from harness.spec.consumers import CommandPipelineSpec as CommandPipelineSpec
from harness.spec.consumers import ConsumerSetSpec as ConsumerSetSpec
from harness.spec.consumers import ConsumerSpec as ConsumerSpec
from harness.spec.consumers import GroupConsumerSpec as GroupConsumerSpec
from harness.spec.consumers import PipelineSpec as PipelineSpec
from harness.spec.consumers import ShareConsumerSpec as ShareConsumerSpec
from harness.spec.consumers import SparkConsumerSpec as SparkConsumerSpec
from harness.spec.expect import Expect
from harness.spec.explore import ExploreSpec
from harness.spec.producer import ProducerSpec as ProducerSpec
from harness.spec.producer import TransactionsSpec as TransactionsSpec


class _ClusterShape(StrictModel):
    mode: Literal["kraft", "zookeeper"] = "kraft"
    version: Annotated[str, StringConstraints(pattern=r"^\d+\.\d+\.\d+$")] = DEFAULT_VERSION
    brokers: int = Field(default=3, ge=1, le=MAX_BROKERS)
    controllers: int = Field(default=0, ge=0, le=MAX_BROKERS)
    # KRaft controllers (101..) a ZooKeeper cluster migrates onto: planned with the cluster,
    # started by a migrate-to-kraft fault (harness.faults.migrate_to_kraft). 1, 3 or 5.
    migration_controllers: int = Field(default=0, ge=0, le=MAX_BROKERS)
    spare_brokers: int = Field(default=0, ge=0, le=MAX_BROKERS)  # declared, started by add-broker
    # KIP-853 (KRaft, Kafka 3.9+): the controllers are a dynamic quorum's initial voters, every
    # node finds them through controller.quorum.bootstrap.servers; spare controllers are
    # declared, started by add-controller (harness.nodes.dynamic_quorum).
    dynamic_quorum: bool = False
    spare_controllers: int = Field(default=0, ge=0, le=MAX_BROKERS)
    broker_config: Settings = {}


class ClusterSpec(CapabilityFields, _ClusterShape):
    """`cluster:`: its shape, then its capabilities' keys (each declared in its own module of
    harness.nodes.capabilities, its keys in the registry's order), then metrics."""

    # Kafka's own metrics: every Kafka node's JVM with the Prometheus JMX exporter agent,
    # scraped about once a second into the cell's metrics.parquet (the summary's `broker`).
    metrics: bool = True


class TopicSpec(StrictModel):
    name: Name = "chaos"
    partitions: int = Field(default=6, ge=1, le=MAX_PARTITIONS)
    replication_factor: int = Field(default=3, ge=1, le=MAX_BROKERS)
    config: Settings = {}


def _fault_tag(value: Any) -> str:
    """The kind whose model parses this fault (an alias folded into its kind), else UNKNOWN."""
    raw = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    if isinstance(raw, str):
        raw = ALIASES.get(raw, raw)
        if raw in PARSE_MODELS:
            return raw
    return UNKNOWN_KIND


UNKNOWN_KIND = "unknown-kind"  # the tag of a fault whose kind is none of the registry's


class _UnknownKind(FaultKind):
    """A fault of no registered kind: parsed like any kind (every key checked), so that
    its errors are the ones a known kind would give, plus the list of allowed words."""

    name: ClassVar[str] = UNKNOWN_KIND

    @field_validator("kind", mode="before")
    @classmethod
    def _unknown(cls, raw: Any) -> Any:
        got = (
            "a mapping"
            if isinstance(raw, dict)
            else "a list"
            if isinstance(raw, list)
            else repr(raw)
        )
        raise ValueError(f"expected one of {', '.join(SPEC_WORDS)} (got {got})")


if TYPE_CHECKING:
    FaultSpec: TypeAlias = FaultKind
else:
    # One planned fault: the model of its kind (harness.faults.registry), chosen by `kind`.
    FaultSpec = Annotated[
        Union[  # noqa: UP007 - built from the registry at import time
            tuple(
                Annotated[model, Tag(tag)]
                for tag, model in (
                    *PARSE_MODELS.items(),
                    (UNKNOWN_KIND, every_option(_UnknownKind)),
                )
            )
        ],
        Discriminator(_fault_tag),
    ]
FAULT_TAGS = (*PARSE_MODELS, UNKNOWN_KIND)  # the model names pydantic puts in error paths
fault_adapter: TypeAdapter[FaultKind] = TypeAdapter(FaultSpec)


def parse_fault(data: Any) -> FaultKind:
    """One fault's mapping as its kind's model (ValidationError as the spec would say it)."""
    return fault_adapter.validate_python(data)


class RecoverySpec(StrictModel):
    timeout_s: float = Field(default=120, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    drain_timeout_s: float = Field(default=120, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    # Keep the raw copies of brokers' segment files (segments/ in the cell folder) after
    # they are decoded into segments.parquet; by default they are deleted (folders stay small).
    keep_segments: bool = False


class WarmUpSpec(StrictModel):
    """Traffic on a topic of its own before the workload, until its ack p99 settles
    (harness.workload.warm_up): at most `max_s` seconds; 0 starts the workload cold."""

    max_s: float = Field(default=30, ge=0, le=300, allow_inf_nan=False)


class Override(StrictModel):
    """Per-cell expectation changes: `when` maps axis paths to a value or a list (any of)."""

    when: dict[str, Any]
    expect: Expect


class Matrix(BaseModel):
    """`matrix:` in YAML is one flat mapping; `expect` and `exclude` are its reserved keys.

    `exclude` lists combinations that cannot exist or are not worth running (ZooKeeper mode
    on 4.x), each a mapping of axes to a value or a list (any of), like an override's `when`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    axes: dict[str, list[Any]] = {}
    expect: list[Override] = []
    exclude: list[dict[str, Any]] = []

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        reserved = ("expect", "exclude")
        out: dict[str, Any] = {"axes": {k: v for k, v in data.items() if k not in reserved}}
        out.update({k: data[k] for k in reserved if k in data})
        return out

    @model_serializer(mode="wrap")
    def _flatten(self, handler: Any) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        flat: dict[str, Any] = dict(dumped["axes"])
        if self.expect:
            flat["expect"] = dumped["expect"]
        if self.exclude:
            flat["exclude"] = dumped["exclude"]
        return flat


class IncidentSpec(StrictModel):
    """An incident's catalogue row (docs/incidents.md, `python -m harness incidents`): the claim as
    people state it, what our runs measured (figures, modes, versions, date), and the
    setting that makes it safe. Written beside the experiment so the two cannot drift."""

    claim: Annotated[str, StringConstraints(min_length=1)]
    measured: str = ""
    safe: str = ""


class Spec(StrictModel):
    name: Name
    description: str = ""
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    cluster: ClusterSpec = ClusterSpec()
    topic: TopicSpec = TopicSpec()
    producer: ProducerSpec = ProducerSpec()
    consumer: ConsumerSpec | None = None
    consumers: list[ConsumerSpec] | None = None
    pipeline: AnyPipelineSpec | None = None  # kind transform (the default) or command
    faults: list[FaultSpec] = []
    recovery: RecoverySpec = RecoverySpec()
    warm_up: WarmUpSpec = WarmUpSpec()
    expect: Expect = {}
    broker_logs: BrokerLogsSpec = BrokerLogsSpec()  # ERROR/FATAL lines the cell expects
    matrix: Matrix | None = None
    incident: IncidentSpec | None = None  # its row in the incident catalogue
    bug: BugSpec | None = None  # a published bug it tests (harness.spec.bug, docs/bugs.md)
    explore: ExploreSpec | None = None  # what `harness explore` may draw (harness.spec.explore)

    def consumer_sets(self) -> list[tuple[str, ConsumerSetSpec]]:
        """Named sets: the kind, or kind + position among its kind ("group", "group2")."""
        if self.consumers is not None:
            specs = list(self.consumers)
        elif self.consumer is not None:
            specs = [self.consumer]
        else:
            specs = [GroupConsumerSpec()]
        seen: dict[str, int] = {}
        out: list[tuple[str, ConsumerSetSpec]] = []
        for c in specs:
            seen[c.kind] = seen.get(c.kind, 0) + 1
            out.append((c.kind if seen[c.kind] == 1 else f"{c.kind}{seen[c.kind]}", c))
        return out

    def clients(self) -> frozenset[str]:
        """The client libraries the cell runs: the producer's and every consumer set's that has
        a `client` (a new consumer kind with one is counted without being listed anywhere, so
        the pre-flight cannot miss its jars again)."""
        sets = (getattr(c, "client", None) for _, c in self.consumer_sets())
        return frozenset({self.producer.client, *(c for c in sets if isinstance(c, str))})

    def pipeline_input(self) -> str:
        return self.topic.name

    @property
    def planned_workload_s(self) -> float:
        """The workload phase as planned: until the producer's planned duration is over and
        every fault window has closed (`at_s + duration_s`; an operation or a fault healed at
        the heal phase: its `at_s`). A fault with `after_step` counts as if its at_s were from
        the workload's start (its step's start is not known before the run)."""
        ends = [f.at_s + (f.duration_s or 0.0) for f in self.faults]
        return max([self.producer.planned_duration_s, *ends])

    def capabilities(self) -> CapabilityOptions:
        """The cell's cluster capabilities, as KafkaCluster's keywords: each as the spec's
        `cluster:` keys say, else on when a planned fault on the cluster needs it."""
        return for_cell(self.cluster, [c for f in self.faults for c in f.cluster_needs()])

    def uses(self, capability: AnyCapability) -> bool:
        """Whether the cell's cluster is built with this capability."""
        return Capabilities(self.capabilities()).has(capability)

    def processes_needing(self, capability: AnyCapability) -> frozenset[str]:
        """The client processes (producer, consumer:<set>/<i>) a planned fault acts on that
        need this capability: only they run with it."""
        return frozenset(
            target
            for f in self.faults
            if capability in f.needs and (target := f.process_target()) is not None
        )

    def skewed_clients(self) -> frozenset[str]:
        """The client processes a planned clock skew acts on: only they run under libfaketime."""
        return self.processes_needing(FakeClock)

    def default_group(self) -> str | None:
        """The group plain `coordinator-of` names: the first group set's."""
        for _, c in self.consumer_sets():
            if isinstance(c, GroupConsumerSpec):
                return c.group
        return None

    def share_groups(self) -> list[str]:
        """The share sets' groups (what share-coordinator-of may name)."""
        return [c.group for _, c in self.consumer_sets() if isinstance(c, ShareConsumerSpec)]

    def consumer_path(self, index: int) -> str:
        return f"consumers[{index}]" if self.consumers is not None else "consumer"
