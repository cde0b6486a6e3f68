"""What an operator does to the running cluster: read partition metadata, reassign, add partitions.

Mixed into KafkaCluster (harness.cluster.kafka_cluster); the `Operable` protocol of
harness.faults.control is how faults see these methods. Metadata and CreatePartitions go
through the admin client of trusted brokers (like AdminViews). librdkafka has no partition
reassignment API, so reassignment runs Kafka's own ReassignPartitionsCommand inside a
trusted broker's container, as an operator would run kafka-reassign-partitions.sh.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Protocol

from docker.errors import APIError

from harness.admin import ClusterAdmin
from harness.errors import HarnessError
from harness.faults.control import Node, PartitionState
from harness.nodes.topology import INTERNAL_PORT

REASSIGN_TOOL = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
# A short-lived tool in a busy container: C1 only and the serial collector start it in
# about half the time of the JVM's defaults (measured: 3-4 s against 8 s).
JAVA = ("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
# `--list` prints "<topic>-<partition>: replicas: 1,2,3. adding: 3. removing: 1." per line.
_IN_PROGRESS = re.compile(r"^(?P<topic>\S+)-(?P<partition>\d+): replicas:", re.MULTILINE)
# The tool could not reach the cluster through this broker: another broker may.
_UNREACHABLE = ("TimeoutException", "Timed out waiting", "DisconnectException")


class Operated(Protocol):
    """What the operations need of the cluster they are mixed into."""

    @property
    def admin(self) -> ClusterAdmin: ...
    def trusted_brokers(self) -> Sequence[Node]: ...


class ClusterOperations:
    """Kafka's admin operations, done for real (the `Operable` face of KafkaCluster)."""

    def topic_names(self: Operated) -> list[str]:
        """Every topic, internal ones (__consumer_offsets) included."""
        return sorted(self.admin.topics())

    def partition_states(
        self: Operated, topic: str, timeout_s: float = 10
    ) -> dict[int, PartitionState]:
        """partition -> leader, replicas, ISR, as a trusted broker's metadata has them (each
        trusted broker asked for up to `timeout_s` in turn)."""
        parts = self.admin.topic(topic, timeout_s).partitions
        return {
            p: PartitionState(
                partition=p,
                leader=parts[p].leader if parts[p].leader >= 0 else None,
                replicas=tuple(parts[p].replicas),
                isr=tuple(parts[p].isrs),
            )
            for p in sorted(parts)
        }

    def reassign(self: Operated, topic: str, moves: Mapping[int, Sequence[int]]) -> None:
        """Start the reassignment (returns once the controller accepted it, not when done).

        `--additional`: it may run beside reassignments already in progress (another
        operation's), as Kafka itself allows.
        """
        plan = {
            "version": 1,
            "partitions": [
                {"topic": topic, "partition": p, "replicas": list(replicas)}
                for p, replicas in sorted(moves.items())
            ],
        }
        path = f"/tmp/kafka-chaos-reassign-{uuid.uuid4().hex[:8]}.json"
        _run_tool(
            self.trusted_brokers(),
            f"reassigning {len(moves)} partition(s) of {topic}",
            ["--execute", "--additional", "--reassignment-json-file", path],
            setup=("sh", "-c", 'printf "%s" "$1" > "$2"', "sh", json.dumps(plan), path),
        )

    def reassignments_in_progress(self: Operated) -> set[tuple[str, int]]:
        """(topic, partition) of every reassignment the controller still runs (`--list`)."""
        out = _run_tool(self.trusted_brokers(), "listing reassignments", ["--list"])
        return {(m["topic"], int(m["partition"])) for m in _IN_PROGRESS.finditer(out)}

    def add_partitions(self: Operated, topic: str, total: int) -> None:
        """Grow the topic to `total` partitions (CreatePartitions); returns once accepted."""
        self.admin.create_partitions(topic, total)

    def wait_all_led(self: Operated, topic: str, partitions: int, timeout_s: float) -> None:
        """Until every trusted broker's metadata lists `partitions` partitions, each led."""
        self.admin.wait_all_led(topic, partitions, timeout_s)


def _run_tool(
    brokers: Sequence[Node], what: str, args: list[str], setup: tuple[str, ...] = ()
) -> str:
    """Run ReassignPartitionsCommand in the first broker that can reach the cluster; its output.

    The next broker is tried when the tool could not reach the cluster or its container
    went down under it (a fault killed it: whether the request got through is unknown,
    and running the same reassignment again is harmless). Any other failure (an invalid
    assignment, say) is the answer and raises at once.
    """
    errors: list[str] = []
    for node in brokers:
        try:
            code, out = node.exec(*setup) if setup else (0, "")
            if code == 0:
                code, out = node.exec(
                    *JAVA,
                    "-cp",
                    "/opt/kafka/libs/*",
                    REASSIGN_TOOL,
                    "--bootstrap-server",
                    f"{node.name}:{INTERNAL_PORT}",
                    *args,
                )
        except APIError as exc:  # the container stopped between the look and the exec
            errors.append(f"{node.name}: {exc.explanation or exc}")
            continue
        if code == 0:
            return out
        why = f"exit {code}: {_gist(out)}"
        if code > 0 and node.is_up() and not any(word in out for word in _UNREACHABLE):
            raise HarnessError(f"{what} failed ({node.name}, {why})")
        errors.append(f"{node.name}: {why}")
    raise HarnessError(f"{what}: no trusted broker could run the tool: {errors or 'none running'}")


def _gist(output: str) -> str:
    """The tool's last few lines that say something (not log4j's complaints, not JSON)."""
    lines = [
        line.strip()
        for line in output.splitlines()
        if line.strip() and not line.startswith(("log4j:", "{", "Save this"))
    ]
    return " | ".join(lines[-3:]) or "no output"
