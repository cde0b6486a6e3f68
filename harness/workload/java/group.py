"""A group member on Kafka's Java consumer: its command, and its events followed into the
member's usual files (harness.results.member_files: consumed, commits, events).

Kafka's own org.apache.kafka.tools.VerifiableConsumer runs the member whenever it can
express the set's spec: commit `auto` or `after-process` (it commits synchronously after
printing each polled batch), no simulated work, the classic group protocol (it always sets
session.timeout.ms, which the KIP-848 protocol refuses). Otherwise our
io.kafkachaos.clients.GroupMember does, with the same events. The tool's command-line
arguments override its properties file, so the settings it takes as arguments are passed
as arguments, with the Java consumer's own defaults (not the tool's: session.timeout.ms
45 s, not 30 s; the assignors Range then CooperativeSticky, not Range alone).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.results.member_files import MemberPaths, next_generation, open_for_append
from harness.spec.consumers import GroupConsumerSpec
from harness.workload.java.events import ConsumerMapper
from harness.workload.java.follow import Follower, append_events
from harness.workload.java.launch import PACKAGE, java_command, write_properties
from harness.workload.runtime import Runtime

VERIFIABLE_CONSUMER = "org.apache.kafka.tools.VerifiableConsumer"
OUR_MEMBER = f"{PACKAGE}.GroupMember"
COMMIT_REPORTER = f"{PACKAGE}.CommitReporter"
# As the librdkafka members' topic.metadata.refresh.interval.ms: a grown topic within seconds.
DEFAULTS: dict[str, Any] = {"metadata.max.age.ms": 5000}
JAVA_SESSION_TIMEOUT_MS = 45000
JAVA_ASSIGNORS = (
    "org.apache.kafka.clients.consumer.RangeAssignor,"
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
)
JAVA_ISOLATION = "read_uncommitted"


def uses_verifiable_consumer(spec: GroupConsumerSpec) -> bool:
    """Kafka's tool can run this set exactly as the spec says."""
    protocol = str(spec.client_settings.get("group.protocol", "classic")).lower()
    return (
        spec.commit in ("auto", "after-process")
        and spec.processing_ms == 0
        and spec.processing_jitter_ms == 0
        and protocol == "classic"
    )


def settings(spec: GroupConsumerSpec) -> dict[str, Any]:
    out = {**DEFAULTS, **spec.client_settings}
    if spec.commit == "auto":  # auto-commits reported as offsets_committed events
        out["interceptor.classes"] = COMMIT_REPORTER
    return out


def stdout_path(paths: MemberPaths) -> Path:
    return paths.directory / f"{paths.stem}.java.jsonl"


def command(spec: GroupConsumerSpec, runtime: Runtime, paths: MemberPaths) -> list[str]:
    config = settings(spec)
    props = paths.directory / f"{paths.stem}.java.properties"
    common = ["--bootstrap", runtime.bootstrap, "--topic", runtime.topic]
    if not uses_verifiable_consumer(spec):
        write_properties(props, config)
        args = [
            *common,
            *("--group-id", spec.group, "--name", paths.consumer, "--commit", spec.commit),
            *("--processing-ms", str(spec.processing_ms)),
            *("--jitter-ms", str(spec.processing_jitter_ms)),
            *("--seed", f"{runtime.seed}/{paths.consumer}", "--config", str(props)),
        ]
        return java_command(runtime, OUR_MEMBER, args)
    args = [
        *("--bootstrap-server", runtime.bootstrap, "--topic", runtime.topic),
        *("--group-id", spec.group, "--verbose"),
        *("--reset-policy", str(config.pop("auto.offset.reset", "earliest"))),
        *("--session-timeout", str(config.pop("session.timeout.ms", JAVA_SESSION_TIMEOUT_MS))),
        *(
            "--assignment-strategy",
            str(config.pop("partition.assignment.strategy", JAVA_ASSIGNORS)),
        ),
    ]
    config.pop("group.protocol", None)  # classic: the tool's default
    instance = config.pop("group.instance.id", None)
    if instance is not None:
        args += ["--group-instance-id", str(instance)]
    if spec.commit == "auto":
        args.append("--enable-autocommit")
    write_properties(props, config)
    return java_command(runtime, VERIFIABLE_CONSUMER, [*args, "--consumer.config", str(props)])


class JavaMember:
    """Follows one member's stdout (all its restarts) into its consumed, commits and events."""

    def __init__(self, spec: GroupConsumerSpec, paths: MemberPaths, set_name: str) -> None:
        self.paths = paths
        self.pid = 0  # the running JVM's (Kafka's tool does not print it)
        isolation = str(spec.client_settings.get("isolation.level", JAVA_ISOLATION))
        self.mapper = ConsumerMapper(
            next_generation=lambda: next_generation(paths.directory, set_name),
            start_fields=lambda: {"pid": self.pid, "isolation": isolation},
        )
        self.follower = Follower(stdout_path(paths), self._write)

    def poll(self) -> None:
        self.follower.poll()

    def _write(self, lines: list[str]) -> None:
        rows = self.mapper.map(lines)
        if rows.consumed:
            with open_for_append(self.paths.consumed) as f:
                f.writelines(line.csv() for line in rows.consumed)
        if rows.commits:
            with open_for_append(self.paths.commits) as f:
                f.writelines(line.csv() for line in rows.commits)
        append_events(self.paths.events, {"consumer": self.paths.consumer}, rows.events)
