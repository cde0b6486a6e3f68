"""add-partitions: grow the workload's topic to `count` partitions, as an operator would.

Done once when it fires (CreatePartitions), then waited for, bounded, until the metadata
shows every partition with a leader. Records hash over the new count from then on, so
the workload (its metadata refreshed every few seconds) writes to and reads from them.
The heal records topic, before and after (partition counts), completed and elapsed_s.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from pydantic import Field

from harness.common.spec_base import MAX_PARTITIONS
from harness.errors import FaultError
from harness.faults.control import ChaosTarget, NodeRef, Operable
from harness.faults.drawing import Drawing, whole
from harness.faults.kind import CellView, FaultKind, OperationTimeout, Problem, TargetStyle
from harness.faults.operation import Operation
from harness.faults.reassign import parse_topic_target, require_topic


class AddPartitions(FaultKind):
    """`{kind: add-partitions, count: 9}`: the workload's topic grows to `count` partitions."""

    name: ClassVar[str] = "add-partitions"
    # The spec's topic grown (drawn_target: its name).
    drawing: ClassVar[Drawing | None] = Drawing(roles=("cluster",))
    target_style: ClassVar[TargetStyle] = "topic"
    operation: ClassVar[bool] = True

    count: int | None = Field(default=None, ge=1, le=MAX_PARTITIONS)  # the new partition count
    timeout_s: OperationTimeout = None

    @classmethod
    def drawn_target(cls, rng: random.Random | None, cell: CellView) -> str:
        """The spec's topic."""
        return cell.topic

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """count: topic.partitions + 1 to + 3 (at most MAX_PARTITIONS)."""
        return {"count": min(MAX_PARTITIONS, cell.partitions + whole(rng, 1, 3))}

    def rules(self, cell: CellView) -> list[Problem]:
        if self.count is None:
            return [("count", "add-partitions needs count: the topic's new partition count")]
        if self.target not in ("random", cell.topic):
            return [
                (
                    "target",
                    f"add-partitions grows the workload's topic {cell.topic!r} "
                    f"(got {self.target!r})",
                )
            ]
        if self.count <= cell.partitions:
            return [
                (
                    "count",
                    f"expected more than topic.partitions ({cell.partitions}) (got {self.count})",
                )
            ]
        return []

    def grown_partitions(self) -> int | None:
        return self.count or None

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> AddPartitionsFault:
        return AddPartitionsFault(cluster, target, self)


class AddPartitionsFault(Operation):
    kind = "add-partitions"

    def __init__(self, cluster: Operable, target: NodeRef | None, spec: AddPartitions) -> None:
        super().__init__(cluster, spec.given(), spec.timeout_s)
        self.spec = spec
        self.target = target

    def target_name(self) -> str:
        return str(self.target)

    def _inject(self) -> None:
        topic, partition = parse_topic_target(self.target)
        count = self.spec.count
        if partition is not None or count is None:
            raise FaultError(
                f"add-partitions takes a topic target and count (got {self.target!r}, {count})"
            )
        require_topic(self.ops, topic)
        before = len(self.ops.partition_states(topic))
        self.outcome.update(topic=topic, before=before)
        if count <= before:
            raise FaultError(
                f"topic {topic!r} has {before} partitions; count must be more ({count})"
            )
        self.ops.add_partitions(topic, count)

        # Brokers apply metadata at their own pace, and the admin client asks any of them:
        # wait until every one lists the new partitions led, or a client bootstrapped from
        # a lagging broker would go on writing to the old ones.
        self.ops.wait_all_led(topic, count, self.timeout_s)
        self.outcome["after"] = len(self.ops.partition_states(topic))
