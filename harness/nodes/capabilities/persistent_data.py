"""Persistent data: every Kafka node's log directories on volumes that outlive its container.

What a fault that runs a node on a new container (an upgrade, a migration's roll) needs:
the node keeps its data (harness.nodes.disks, plain local volumes). Off, on the container's
own disk. No spec key (a planned fault that replaces nodes turns it on);
`KafkaCluster(persistent_data=True)`, marker key `persistent_data`,
`with_persistent_data()`; `cluster.start` carries `persistent_data: true`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self, TypedDict

from harness.nodes.capabilities.base import (
    BuilderMethods,
    Capability,
    NoFields,
    Problem,
    Wiring,
)
from harness.nodes.topology import NodeSpec

KEY = "persistent_data"


class Options(TypedDict, total=False):
    persistent_data: bool


class Builder(BuilderMethods):
    def with_persistent_data(self, on: bool = True) -> Self:
        """Every Kafka node's log directories on volumes that outlive its container: what an
        upgrade (a node replaced on another version with its data) needs."""
        self._raw[KEY] = on
        return self


class PersistentData(Capability[NoFields]):
    title = "persistent data"
    doc = "every Kafka node's log directories on Docker volumes that outlive its container"
    builder = Builder
    defaults: ClassVar[dict[str, Any]] = {KEY: False}
    missing = "{kind} needs persistent log directories (a cluster with persistent_data=True)"

    @classmethod
    def from_spec(cls, fields: NoFields, needed: bool) -> dict[str, Any]:
        return {KEY: needed}

    @classmethod
    def marker_problems(cls, raw: Mapping[str, Any]) -> list[Problem]:
        value = raw.get(KEY, False)
        if not isinstance(value, bool):
            return [(KEY, f"expected true or false (got {value!r})")]
        return []

    @classmethod
    def from_marker(cls, fields: NoFields, raw: Mapping[str, Any]) -> dict[str, Any]:
        return {KEY: raw.get(KEY, False)}

    @property
    def on(self) -> bool:
        return bool(self.values[KEY])

    def record(self) -> dict[str, Any]:
        return {KEY: True} if self.on else {}

    def wire(self, node: NodeSpec, nodes: Sequence[NodeSpec], run_id: str) -> Wiring:
        return Wiring(persistent=True) if self.on else Wiring()
