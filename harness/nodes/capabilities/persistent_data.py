"""Persistent data: every Kafka node's log directories on volumes that outlive its container.

What a fault that runs a node on a new container (an upgrade, a migration's roll) needs:
the node keeps its data (harness.nodes.disks, plain local volumes). Off, on the container's
own disk. No spec key (a planned fault that replaces nodes turns it on);
`KafkaCluster(persistent_data=True)`, marker key `persistent_data`,
`with_persistent_data()`; `cluster.start` carries `persistent_data: true`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Self, TypedDict

from harness.nodes.capabilities.base import BuilderMethods, NoFields, Problem, Switch, Wiring
from harness.nodes.topology import NodeSpec

KEY = "persistent_data"


class Options(TypedDict, total=False):
    persistent_data: bool


class Builder(BuilderMethods):
    def with_persistent_data(self, on: bool = True) -> Self:
        """Every Kafka node's log directories on volumes that outlive its container: what an
        upgrade (a node replaced on another version with its data) needs."""
        return self._set(persistent_data=on)


class PersistentData(Switch[NoFields], builder=Builder):
    key = KEY
    title = "persistent data"
    doc = "every Kafka node's log directories on Docker volumes that outlive its container"
    missing = "{kind} needs persistent log directories (a cluster with persistent_data=True)"

    @classmethod
    def marker_problems(cls, raw: Mapping[str, Any]) -> list[Problem]:
        """Its marker key, which no spec key checks."""
        value = raw.get(KEY, False)
        if not isinstance(value, bool):
            return [(KEY, f"expected true or false (got {value!r})")]
        return []

    @classmethod
    def from_marker(cls, fields: NoFields, raw: Mapping[str, Any]) -> dict[str, Any]:
        return {KEY: raw.get(KEY, False)}

    def wire(self, node: NodeSpec, nodes: Sequence[NodeSpec], run_id: str) -> Wiring:
        return Wiring(persistent=True) if self.on else Wiring()
