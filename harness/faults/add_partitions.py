"""add-partitions: grow the workload's topic to `count` partitions, as an operator would.

Done once when it fires (CreatePartitions), then waited for, bounded, until the metadata
shows every partition with a leader. Records hash over the new count from then on, so
the workload (its metadata refreshed every few seconds) writes to and reads from them.
The heal records topic, before and after (partition counts), completed and elapsed_s.
"""

from __future__ import annotations

from harness.errors import FaultError
from harness.faults.control import NodeRef, Operable
from harness.faults.operation import Operation
from harness.faults.options import FaultOptions
from harness.faults.reassign import parse_topic_target, require_topic


class AddPartitionsFault(Operation):
    kind = "add-partitions"

    def __init__(self, cluster: Operable, target: NodeRef | None, options: FaultOptions) -> None:
        super().__init__(cluster, options)
        self.target = target

    def target_name(self) -> str:
        return str(self.target)

    def _inject(self) -> None:
        topic, partition = parse_topic_target(self.target)
        count = self.options.count
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
        self.ops.wait_all_led(topic, count, self.options.operation_timeout_s)
        self.outcome["after"] = len(self.ops.partition_states(topic))
