"""Every fault kind a spec may name, in one place: one line per kind.

A kind is one module in harness/faults that owns everything about it (its options, rules,
flags and the fault it makes: a `harness.faults.kind.FaultKind`); its line here is how
the spec, `validate` and the nemesis learn of it. Everything below the list is derived.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import create_model
from pydantic.fields import FieldInfo

from harness.errors import ConfigError
from harness.faults.add_broker import AddBroker
from harness.faults.add_controller import AddController
from harness.faults.add_partitions import AddPartitions
from harness.faults.bandwidth import Bandwidth
from harness.faults.base import Fault
from harness.faults.clients import CutClients
from harness.faults.clock import ClockSkew
from harness.faults.consumer import ConsumerCrash, PipelineCrash
from harness.faults.control import ChaosTarget, NodeRef
from harness.faults.corrupt import Corrupt
from harness.faults.decommission import Decommission
from harness.faults.disk_full import DiskFull
from harness.faults.kill import Kill
from harness.faults.kind import COMMON_KEYS, FaultKind, listing_rank
from harness.faults.latency import Latency
from harness.faults.lossy import Lossy
from harness.faults.migrate_to_kraft import MigrateToKraft
from harness.faults.partition import CutReplication, CutZookeeper, Isolate
from harness.faults.pause import Pause
from harness.faults.power_loss import PowerLoss
from harness.faults.producer import ProducerCrash, ProducerPause
from harness.faults.quorum import CutQuorum
from harness.faults.reassign import Reassign
from harness.faults.remove_controller import RemoveController
from harness.faults.reset import Reset
from harness.faults.restart import Restart
from harness.faults.rolling_restart import RollingRestart
from harness.faults.split import Split
from harness.faults.stop import Stop
from harness.faults.upgrade import Upgrade
from harness.nodes.capabilities import AnyCapability

# In the order the spec's error message lists them. Faults done to the cluster: to one node
# (its target resolved when the fault fires), to the network between nodes, or operations
# an operator does; then faults the nemesis does to the workload's consumers and producer.
ALL_KINDS: tuple[type[FaultKind], ...] = (
    Kill,
    Stop,
    Restart,
    Pause,
    Isolate,
    CutClients,
    CutReplication,
    CutQuorum,
    CutZookeeper,
    Split,
    Lossy,
    Latency,
    Bandwidth,
    Reset,
    DiskFull,
    PowerLoss,
    Corrupt,
    Reassign,
    AddPartitions,
    AddBroker,
    Decommission,
    AddController,
    RemoveController,
    RollingRestart,
    Upgrade,
    MigrateToKraft,
    ClockSkew,
    ConsumerCrash,
    PipelineCrash,
    ProducerCrash,
    ProducerPause,
)

# --- derived -------------------------------------------------------------------------------
SPEC_KINDS: dict[str, type[FaultKind]] = {k.name: k for k in ALL_KINDS}
KINDS: dict[str, type[FaultKind]] = {k.name: k for k in ALL_KINDS if k.plays == "cluster"}
CONSUMER_FAULTS: tuple[str, ...] = tuple(k.name for k in ALL_KINDS if k.plays == "consumer")
PRODUCER_FAULTS: tuple[str, ...] = tuple(k.name for k in ALL_KINDS if k.plays == "producer")
FAULT_KINDS: tuple[str, ...] = (*KINDS, *CONSUMER_FAULTS, *PRODUCER_FAULTS)
ALIASES: dict[str, str] = {a: k.name for k in ALL_KINDS for a in k.aliases}
# Every word the spec takes as a fault kind, each alias right after its kind.
SPEC_WORDS: tuple[str, ...] = tuple(w for k in ALL_KINDS for w in (k.name, *k.aliases))


def _option_fields() -> dict[str, FieldInfo]:
    """Every kind's options: one name means one thing, whichever kinds take it."""
    out: dict[str, FieldInfo] = {}
    for k in ALL_KINDS:
        for name in k.own_options:
            info = k.model_fields[name]
            seen = out.setdefault(name, info)
            if repr(seen) != repr(info):
                raise TypeError(f"option {name!r} of {k.name} differs from another kind's")
    return {name: out[name] for name in sorted(out, key=listing_rank)}


OPTION_FIELDS = _option_fields()
OPTION_NAMES: tuple[str, ...] = tuple(OPTION_FIELDS)
SPEC_KEYS: tuple[str, ...] = (*COMMON_KEYS, *OPTION_NAMES)  # every key a fault may have


def every_option(kind: type[FaultKind]) -> type[FaultKind]:
    """The kind's model as the spec parses it: it also takes the other kinds' options, typed
    as their kinds type them, so `kind: kill` with `loss: 0.3` is a rule's error naming the
    key ("kill takes no loss (it takes: wipe)") rather than an unknown key."""
    foreign: dict[str, Any] = {
        name: (info.annotation, copy.copy(info))
        for name, info in OPTION_FIELDS.items()
        if name not in kind.model_fields
    }
    model: type[FaultKind] = create_model(
        f"Parsed{kind.__name__}", __base__=kind, __module__=__name__, **foreign
    )
    model.own_options = kind.own_options
    return model


PARSE_MODELS: dict[str, type[FaultKind]] = {k.name: every_option(k) for k in ALL_KINDS}
# Importable by name (harness.faults.registry.ParsedKill...), so a parsed spec pickles.
globals().update({m.__name__: m for m in PARSE_MODELS.values()})


def kinds_needing(capability: AnyCapability) -> tuple[str, ...]:
    """The kinds that need this cluster capability (the docs' capability list names them)."""
    return tuple(k.name for k in ALL_KINDS if capability in k.needs)


def is_consumer_fault(kind: str) -> bool:
    return kind in CONSUMER_FAULTS


def is_producer_fault(kind: str) -> bool:
    return kind in PRODUCER_FAULTS


def is_operation(kind: str) -> bool:
    """Done once when it fires (restart, reassign...): no duration, nothing to heal later."""
    entry = KINDS.get(kind)
    return entry is not None and entry.operation


def kind_of(kind: str) -> type[FaultKind]:
    entry = KINDS.get(kind)
    if entry is None:
        raise ConfigError(
            f"no cluster fault of kind {kind!r}; kinds: {', '.join(KINDS)}"
            + (
                " (a consumer or producer fault: the nemesis plays it)"
                if is_consumer_fault(kind) or is_producer_fault(kind)
                else ""
            )
        )
    return entry


def spec_of(kind: str, **options: Any) -> FaultKind:
    """A kind's spec model with these options (no target, at_s 0), e.g. for a test or a plan."""
    cls = SPEC_KINDS.get(kind) or kind_of(kind)  # kind_of: the error naming the kinds
    return cls.of(**options)


def make_fault(
    kind: str,
    cluster: ChaosTarget,
    target: NodeRef | None,
    options: FaultKind | dict[str, Any] | None = None,
) -> Fault:
    """The (not yet injected) fault of this spec kind on this target; `options` the kind's
    spec model, or its options as a mapping (`{"wipe": True}`)."""
    cls = kind_of(kind)
    spec = options if isinstance(options, FaultKind) else cls.of(**(options or {}))
    return spec.make(cluster, target)
