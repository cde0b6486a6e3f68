"""Every cluster capability, in one place: one module each, one line here.

A capability is what every node of a cluster can be built with, off unless asked for
(harness.nodes.capabilities.base). Its module declares everything about it; what is below
the list is derived from it: the spec's `cluster:` keys (`CapabilityFields`, a base of
harness.spec.models.ClusterSpec), KafkaCluster's keywords (`CapabilityOptions`), the pytest
plugin's marker keys and `with_*` methods (`CAPABILITY_KEYS`, `CapabilityBuilders`), and one
cluster's set of them (`Capabilities`: its rules, history, node wiring). A fault kind names
the capabilities it needs (`FaultKind.needs`); `for_cell` turns them on for a cell.

Adding one: a module like link_proxies.py, then its line in CAPABILITIES and in each of the
three classes below (their bases are how mypy and pydantic see the declarations).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias, cast

from harness.nodes.capabilities import (
    fake_clock,
    link_proxies,
    log_dirs,
    persistent_data,
    power_loss_fs,
)
from harness.nodes.capabilities.base import (
    Capability,
    NoFields,
    Problem,
    Shape,
    Wiring,
    merged,
)
from harness.nodes.capabilities.fake_clock import FakeClock
from harness.nodes.capabilities.link_proxies import LinkProxies
from harness.nodes.capabilities.log_dirs import LogDirs
from harness.nodes.capabilities.persistent_data import PersistentData
from harness.nodes.capabilities.power_loss_fs import PowerLossFs
from harness.nodes.topology import NodeSpec

AnyCapability: TypeAlias = type[Capability[Any]]

# In the order the spec's keys, the marker keys and `cluster.start`'s fields list them.
CAPABILITIES: tuple[AnyCapability, ...] = (
    LinkProxies,
    LogDirs,
    FakeClock,
    PersistentData,
    PowerLossFs,
)


# --- derived: the three classes list the modules' declarations as bases ------------------------
class CapabilityFields(
    power_loss_fs.SpecKeys, fake_clock.SpecKeys, log_dirs.SpecKeys, link_proxies.SpecKeys, NoFields
):
    """Every capability's keys under the spec's `cluster:`. Pydantic takes a later base's fields
    first: the bases are CAPABILITIES backwards (checked below)."""


class CapabilityOptions(
    link_proxies.Options,
    log_dirs.Options,
    fake_clock.Options,
    persistent_data.Options,
    power_loss_fs.Options,
):
    """KafkaCluster's capability keywords (`**capabilities`), typed."""


class CapabilityBuilders(
    link_proxies.Builder,
    log_dirs.Builder,
    fake_clock.Builder,
    persistent_data.Builder,
    power_loss_fs.Builder,
):
    """Every capability's `with_*` methods (the pytest plugin's ClusterBuilder)."""


CAPABILITY_KEYS: tuple[str, ...] = tuple(k for c in CAPABILITIES for k in c.defaults)
SPEC_KEYS: tuple[str, ...] = tuple(k for c in CAPABILITIES for k in c.Fields.model_fields)
MARKER_ONLY_KEYS: tuple[str, ...] = tuple(k for k in CAPABILITY_KEYS if k not in SPEC_KEYS)
DEFAULTS: tuple[tuple[str, Any], ...] = tuple(
    (k, v) for c in CAPABILITIES for k, v in c.defaults.items()
)
if tuple(CapabilityFields.model_fields) != SPEC_KEYS or set(
    CapabilityOptions.__annotations__
) != set(CAPABILITY_KEYS):
    raise TypeError("CapabilityFields / CapabilityOptions do not list CAPABILITIES' declarations")


class Capabilities:
    """One cluster's capabilities, from KafkaCluster's keywords (those not given: off)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        unknown = sorted(set(options) - set(CAPABILITY_KEYS))
        if unknown:
            raise TypeError(f"KafkaCluster() got an unexpected keyword argument {unknown[0]!r}")
        self.all = tuple(c(options) for c in CAPABILITIES)

    def has(self, capability: AnyCapability) -> bool:
        """Whether the cluster is built with it (a fault that needs it can act)."""
        return any(type(c) is capability and c.on for c in self.all)

    def keywords(self) -> CapabilityOptions:
        return cast(CapabilityOptions, {k: v for c in self.all for k, v in c.values.items()})

    def problems(self, shape: Shape) -> list[Problem]:
        """(key, ConfigError text) of every keyword's rule, in this cluster's shape."""
        return [p for c in self.all for p in c.problems(shape)]

    def spec_problems(self, shape: Shape) -> list[Problem]:
        """(key under `cluster:`, what was expected) for a cell's resolved values."""
        return [p for c in self.all for p in c.spec_problems(shape)]

    def prepare(self) -> None:
        for c in self.all:
            c.prepare()

    def record(self) -> dict[str, Any]:
        """`cluster.start`'s fields of the capabilities that are on."""
        return {k: v for c in self.all for k, v in c.record().items()}

    def describe(self) -> str:
        return "".join(c.describe() for c in self.all)

    def wire(self, node: NodeSpec, nodes: Sequence[NodeSpec], run_id: str) -> Wiring:
        """One Kafka node's wiring by every capability."""
        return merged(c.wire(node, nodes, run_id) for c in self.all)


def for_cell(fields: CapabilityFields, needs: Iterable[AnyCapability]) -> CapabilityOptions:
    """A cell's KafkaCluster keywords: each capability as the spec's keys say, else on when a
    planned fault needs it."""
    needed = set(needs)
    out: dict[str, Any] = {}
    for c in CAPABILITIES:
        out |= c.from_spec(fields, c in needed)
    return cast(CapabilityOptions, out)


def from_marker(fields: CapabilityFields, raw: Mapping[str, Any]) -> CapabilityOptions:
    """A pytest marker's capability keywords (its keys checked: `fields` and marker_problems)."""
    out: dict[str, Any] = {}
    for c in CAPABILITIES:
        out |= c.from_marker(fields, raw)
    return cast(CapabilityOptions, out)


def marker_problems(raw: Mapping[str, Any]) -> list[Problem]:
    """The marker keys no spec key checks (persistent_data), checked."""
    return [p for c in CAPABILITIES for p in c.marker_problems(raw)]


__all__ = [
    "CAPABILITIES",
    "CAPABILITY_KEYS",
    "DEFAULTS",
    "MARKER_ONLY_KEYS",
    "AnyCapability",
    "Capabilities",
    "Capability",
    "CapabilityBuilders",
    "CapabilityFields",
    "CapabilityOptions",
    "FakeClock",
    "LinkProxies",
    "LogDirs",
    "PersistentData",
    "PowerLossFs",
    "Shape",
    "Wiring",
    "for_cell",
    "from_marker",
    "marker_problems",
]
