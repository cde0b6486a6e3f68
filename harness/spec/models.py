"""Typed experiment spec. Pydantic checks shapes; `harness.spec.problems` checks rules across fields.

Cross-field rules run per matrix cell (a base spec may be completed by its matrix), so a
`Spec` straight from the YAML is typed but not necessarily runnable; cells always are.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
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
from harness.faults.options import FaultOptions
from harness.faults.registry import FAULT_KINDS
from harness.nodes.topology import CONTROLLER_ID_BASE, DEFAULT_VERSION, MAX_BROKERS

# The consumer kinds' models (harness.spec.consumers), re-exported.
from harness.spec.consumers import CONSUMER_TAGS as CONSUMER_TAGS
from harness.spec.consumers import ConsumerSetSpec as ConsumerSetSpec
from harness.spec.consumers import ConsumerSpec as ConsumerSpec
from harness.spec.consumers import GroupConsumerSpec as GroupConsumerSpec
from harness.spec.consumers import PipelineSpec as PipelineSpec
from harness.spec.consumers import SparkConsumerSpec as SparkConsumerSpec
from harness.spec.expect import Expect
from harness.spec.producer import ProducerSpec as ProducerSpec  # re-exported
from harness.spec.producer import TransactionsSpec as TransactionsSpec  # re-exported

MAX_NODE_ID = CONTROLLER_ID_BASE + MAX_BROKERS  # broker ids 1..5, controllers above the base

# Fault kinds come from harness.faults.registry; these spec words are other names for one.
FAULT_KIND_ALIASES = {"partition": "isolate"}


class ClusterSpec(StrictModel):
    mode: Literal["kraft", "zookeeper"] = "kraft"
    version: Annotated[str, StringConstraints(pattern=r"^\d+\.\d+\.\d+$")] = DEFAULT_VERSION
    brokers: int = Field(default=3, ge=1, le=MAX_BROKERS)
    controllers: int = Field(default=0, ge=0, le=MAX_BROKERS)
    spare_brokers: int = Field(default=0, ge=0, le=MAX_BROKERS)  # declared, started by add-broker
    broker_config: Settings = {}


class TopicSpec(StrictModel):
    name: Name = "chaos"
    partitions: int = Field(default=6, ge=1, le=MAX_PARTITIONS)
    replication_factor: int = Field(default=3, ge=1, le=MAX_BROKERS)
    config: Settings = {}


def _spec_fault_kinds() -> list[str]:
    """Every word the spec takes as a fault kind, each alias right after its kind."""
    aliases = FAULT_KIND_ALIASES.items()
    return [w for k in FAULT_KINDS for w in (k, *(a for a, to in aliases if to == k))]


def _fault_kind(raw: Any) -> str:
    """A registered fault kind (an alias folded into it), else the list of allowed words."""
    if isinstance(raw, str) and raw in FAULT_KIND_ALIASES:
        return FAULT_KIND_ALIASES[raw]
    if isinstance(raw, str) and raw in FAULT_KINDS:
        return raw
    got = "a mapping" if isinstance(raw, dict) else "a list" if isinstance(raw, list) else repr(raw)
    raise ValueError(f"expected one of {', '.join(_spec_fault_kinds())} (got {got})")


class FaultSpec(StrictModel):
    """One planned fault. Besides the four common keys, each kind takes the options the
    registry (harness.faults.registry.KINDS) lists for it; harness.spec.problems says which."""

    at_s: float = Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)
    kind: Annotated[str, BeforeValidator(_fault_kind)]  # a harness.faults.registry kind
    target: str = "random"
    duration_s: float | None = Field(default=None, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    optional: bool = False  # a skipped or failed fault does not make the cell unknown
    # --- options of some kinds (harness.faults.options.FaultOptions) ---
    to: list[Annotated[int, Field(ge=1, le=MAX_NODE_ID)]] | None = Field(default=None, min_length=1)
    replication_factor: int | None = Field(default=None, ge=1, le=MAX_BROKERS)
    count: int | None = Field(default=None, ge=1, le=MAX_PARTITIONS)  # a topic's new partitions
    sides: list[list[Annotated[int, Field(le=MAX_NODE_ID)] | str]] | None = None
    side: Literal["minority", "majority"] | None = None
    zookeeper_side: Literal["minority", "majority"] | None = None
    loss: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    scope: Literal["all", "replication", "clients"] | None = None
    hard: bool | None = None
    brokers: list[Annotated[int, Field(ge=1, le=MAX_NODE_ID)]] | None = Field(
        default=None, min_length=1
    )
    timeout_s: float | None = Field(default=None, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    wipe: bool | None = None

    def options(self) -> FaultOptions:
        return FaultOptions.of(self.model_dump())

    def options_set(self) -> list[str]:
        """Option keys the spec gave (not the four common ones)."""
        names = set(FaultOptions.names())
        return [k for k in type(self).model_fields if k in names and getattr(self, k) is not None]


class RecoverySpec(StrictModel):
    timeout_s: float = Field(default=120, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    drain_timeout_s: float = Field(default=120, gt=0, le=MAX_SECONDS, allow_inf_nan=False)


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
    """An incident's catalogue row (README, `python -m harness incidents`): the claim as
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
    pipeline: PipelineSpec | None = None
    faults: list[FaultSpec] = []
    recovery: RecoverySpec = RecoverySpec()
    expect: Expect = {}
    matrix: Matrix | None = None
    incident: IncidentSpec | None = None  # its row in the incident catalogue

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

    def pipeline_input(self) -> str:
        return self.topic.name

    def default_group(self) -> str | None:
        """The group plain `coordinator-of` names: the first group set's."""
        for _, c in self.consumer_sets():
            if isinstance(c, GroupConsumerSpec):
                return c.group
        return None

    def consumer_path(self, index: int) -> str:
        return f"consumers[{index}]" if self.consumers is not None else "consumer"
