"""What a fault kind is in a spec: one typed model per kind, owning its options, rules and flags.

A kind module (kill.py, lossy.py...) declares a subclass of `FaultKind`: the pydantic fields
are its options (`wipe`, `loss`...), the class variables its flags (what the target names,
broker-only, ZooKeeper as a target, an operation, the modes it exists in), `rules()` what it
needs of the rest of the cell, `make()` the fault it builds (Trogdor's spec-builds-its-worker).
`harness.faults.registry` lists the kinds; the spec (a layer above) parses a fault into the
kind's model and asks it for its problems through `CellView`, the narrow view of the cell a
rule may read, so nothing here imports harness.spec.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, field_validator

from harness.common.spec_base import MAX_SECONDS, StrictModel
from harness.errors import ConfigError
from harness.faults import target_rules
from harness.faults.base import Fault
from harness.faults.cell_view import CellView as CellView  # re-exported: docs/adding-a-fault.md
from harness.faults.control import ChaosTarget, NodeRef
from harness.faults.drawing import Drawing
from harness.faults.stage import Act, Stage
from harness.faults.targets import with_group
from harness.nodes.capabilities import AnyCapability
from harness.nodes.topology import CONTROLLER_ID_BASE, MAX_BROKERS

if TYPE_CHECKING:
    import random

Problem = tuple[str, str]  # (key under the fault, what was expected)

# What a kind's `target` names:
#   node   - a node, resolved when the fault fires (broker:<id>, leader-of:..., random, ...)
#   split  - a node as `node`, or none at all when the spec gives `sides`
#   topic  - <topic> or <topic>/<partition> (the spec's topic when not given)
#   spare  - broker:<id> of a spare broker, or none for the next spare
#   none   - nothing (the kind's options say what it acts on)
TargetStyle = Literal["node", "split", "topic", "spare", "none"]
# Who plays the fault: the cluster (a Fault from make()), or the nemesis on a workload process.
Plays = Literal["cluster", "consumer", "producer"]
Mode = Literal["kraft", "zookeeper"]
Needs = tuple[AnyCapability, ...]  # what a kind's target must be built with

MAX_NODE_ID = CONTROLLER_ID_BASE + MAX_BROKERS  # broker ids 1..5, controllers above the base
NodeId = Annotated[int, Field(ge=1, le=MAX_NODE_ID)]
# An operation's bound on waiting for completion; past it the operation is a fault.error.
OperationTimeout = Annotated[float | None, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]
DEFAULT_OPERATION_TIMEOUT_S = 180.0

COMMON_KEYS = ("at_s", "kind", "target", "duration_s", "optional", "after_step")

# The order option keys are listed in wherever several kinds' options appear together (the
# "unknown key; allowed:" message, `validate`'s options column, the history, the expanded
# spec), as it was before the options moved into their kinds; options of kinds added since
# come after these, in registry order. Adding a kind never needs an entry here.
LISTING_ORDER = (
    "to",
    "replication_factor",
    "count",
    "sides",
    "side",
    "zookeeper_side",
    "loss",
    "scope",
    "hard",
    "brokers",
    "timeout_s",
    "wipe",
)


def listing_rank(name: str) -> int:
    return LISTING_ORDER.index(name) if name in LISTING_ORDER else len(LISTING_ORDER)


class FaultKind(StrictModel):
    """One planned fault of one kind. The six common keys are here; a subclass adds its
    options as fields and says its flags in class variables."""

    name: ClassVar[str]  # the spec's word for the kind
    aliases: ClassVar[tuple[str, ...]] = ()  # other words the spec takes for it
    plays: ClassVar[Plays] = "cluster"  # the cluster (make()), else the nemesis on that process
    target_style: ClassVar[TargetStyle] = "node"  # `target` is a node, split, topic, spare or none
    operation: ClassVar[bool] = False  # done once when it fires: takes no duration_s
    modes: ClassVar[tuple[Mode, ...]] = ("kraft", "zookeeper")  # the cluster modes it exists in
    broker_only: ClassVar[bool] = False  # a node target must be a broker, not a controller
    zookeeper_target: ClassVar[bool] = False  # may target ZooKeeper (mode zookeeper)
    needs: ClassVar[Needs] = ()  # capabilities its target is built with (the spec turns them on)
    own_options: ClassVar[tuple[str, ...]] = ()  # set from the fields the kind declares
    drawing: ClassVar[Drawing | None] = None  # how explore draws it (None: never drawn)
    # Explore runs the next trial on a fresh cluster after it (harness.explore.cluster_pool).
    changes_cluster: ClassVar[bool] = False  # leaves members, versions or disks changed

    at_s: float = Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)
    kind: str
    target: str = "random"
    duration_s: float | None = Field(default=None, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    optional: bool = False  # a skipped or failed fault does not make the cell unknown
    # at_s counts from the start of the first step of an operation that answers to this word
    # (a migration phase, a node's name, `broker` or `controller`), not from the workload's:
    # a fault meant for a step meets it on a fast machine and a slow one alike.
    after_step: str | None = Field(default=None, min_length=1)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "own_options" not in cls.__dict__:  # the spec's parse model keeps its kind's
            cls.own_options = tuple(k for k in cls.model_fields if k not in COMMON_KEYS)

    @field_validator("kind", mode="before")
    @classmethod
    def _fold_alias(cls, raw: Any) -> Any:
        return cls.name if isinstance(raw, str) and raw in cls.aliases else raw

    @field_validator("kind")
    @classmethod
    def _is_this_kind(cls, value: str) -> str:
        if value != cls.name:
            raise ValueError(f"expected kind {cls.name} (got {value!r})")
        return value

    # --- options ---------------------------------------------------------------------------
    def options_set(self) -> list[str]:
        """Option keys the spec gave (not the common ones), the kind's or not."""
        names = [k for k in type(self).model_fields if k not in COMMON_KEYS]
        given = [k for k in names if getattr(self, k) is not None]
        return sorted(given, key=listing_rank)

    def given(self) -> dict[str, Any]:
        """The options set, for the history and `validate` (lists as the spec wrote them)."""
        return {k: copy.deepcopy(getattr(self, k)) for k in self.options_set()}

    # --- rules -----------------------------------------------------------------------------
    def problems(self, cell: CellView) -> list[Problem]:
        """Problems of this fault in this cell, keyed by its field name."""
        out: list[Problem] = []
        if cell.mode not in self.modes:
            out.append(("kind", f"{self.kind} exists only in mode {' or '.join(self.modes)}"))
        takes = ", ".join(self.own_options) or "no options"
        for key in self.options_set():
            if key not in self.own_options:
                out.append((key, f"{self.kind} takes no {key} (it takes: {takes})"))
        if self.operation and self.duration_s is not None:
            out.append(
                ("duration_s", f"{self.kind} takes no duration (it is done once, when it fires)")
            )
        out += self.rules(cell)
        why = self.target_problem(cell)
        if why:
            out.append(("target", why))
        return out

    def rules(self, cell: CellView) -> list[Problem]:
        """What the kind needs of its options and of the cell, beyond the common checks."""
        return []

    def target_problem(self, cell: CellView) -> str | None:
        """What is wrong with `target` for this kind in this cell (by its target style)."""
        return target_rules.by_style(self, self.target_style, cell)

    def planned_style(self) -> TargetStyle:
        """The style the nemesis resolves `target` by (split without a node: none)."""
        return self.target_style

    def step_words(self, cell: CellView) -> tuple[str, ...]:
        """What this operation's steps answer to for `after_step` (none: it has no steps)."""
        return ()

    def grown_partitions(self) -> int | None:
        """The topic's partition count after this fault (add-partitions), else None."""
        return None

    def cluster_needs(self) -> Needs:
        """What the cluster must be built with for this fault (none when it acts on a client)."""
        return self.needs if self.process_target() is None else ()

    def process_target(self) -> str | None:
        """The client process it acts on (producer, consumer:<set>/<i>); None: the cluster."""
        return None

    def leaves_changed(self) -> bool:
        """Whether the cluster differs from a fresh one after this fault healed."""
        return self.changes_cluster

    # --- how explore draws it (harness.faults.drawing) -------------------------------------
    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """A drawn entry's options, each from the range the kind documents (docs/exploring.md);
        rng None: a probe's, the mildest value of each. {}: none (the defaults)."""
        return {}

    @classmethod
    def drawn_target(cls, rng: random.Random | None, cell: CellView) -> str:
        """The target of an entry drawn on the `client` or `cluster` role (a probe: the first)."""
        return "random"

    # --- how the nemesis plays it (harness.faults.stage: one protocol for every kind) ------
    def plan_target(self, cell: CellView, rng: random.Random) -> str:
        """The target the schedule fixes before the run: `random` drawn here from the seeded
        `rng`, a symbolic one (leader-of...) kept for the nemesis to resolve when it fires."""
        style, target = self.planned_style(), self.target
        if style == "topic":
            return cell.topic if target == "random" else target
        if style in ("spare", "none"):
            return "" if target == "random" else target  # "": the next spare / no target
        if target == "random":
            return f"broker:{rng.randint(1, len(cell.brokers))}"
        return with_group(target, cell.default_group)

    def resolves_node(self, target: str) -> bool:
        """Whether the nemesis resolves the planned `target` to a node when the fault fires
        (else it is used as planned: a topic, a spare, none, a client process)."""
        return self.target_style not in ("topic", "spare", "none")

    def takes_turns(self) -> bool:
        """Whether it waits for the operations planned before it (else: for faults on its node)."""
        return self.operation

    def unplayable(self, stage: Stage, target: str) -> str | None:
        """Why the nemesis cannot play it on this stage (it is then skipped); None: it can."""
        return None

    def act(self, stage: Stage, target: NodeRef, index: int) -> Act:
        """What the nemesis injects and heals, on the resolved `target` ("" for none): by
        default the cluster fault make() builds. `index`: its place in the plan."""
        return self.make(stage.cluster, target or None)

    # --- the fault -------------------------------------------------------------------------
    @classmethod
    def of(cls, target: str = "random", **options: Any) -> Self:
        """This kind with these options (at_s 0), e.g. for make_fault and tests."""
        return cls.model_validate({"at_s": 0, "kind": cls.name, "target": target, **options})

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        """The (not yet injected) fault this spec describes, on the resolved target."""
        raise ConfigError(f"{self.kind} is not a cluster fault")


def required(target: NodeRef | None) -> NodeRef:
    if target is None:
        raise ConfigError("this fault kind needs a target")
    return target
