"""The ledger producer on Kafka's Java client: its command, and its events followed into the
incarnation's usual files (harness.results.producer_files: sends, acks, events).

The JVM is io.kafkachaos.clients.LedgerProducer (its docstring says why not Kafka's
VerifiableProducer). The spec's `config` is passed through as Java producer properties
over the harness's one default, metadata.max.age.ms 5 s (as the librdkafka producer's
topic.metadata.refresh.interval.ms: a topic grown during the run is seen within seconds);
everything else is the Java client's own default (idempotence on with acks=all,
delivery.timeout.ms 120 s, linger.ms 0 before Kafka 4.0 and 5 from it).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from harness.results.member_files import open_for_append
from harness.results.producer_files import IncarnationPaths
from harness.spec.producer import ProducerSpec
from harness.workload.java.events import map_producer
from harness.workload.java.follow import Follower, append_events
from harness.workload.java.launch import PACKAGE, java_command, write_properties
from harness.workload.runtime import Runtime

DEFAULTS: dict[str, Any] = {"metadata.max.age.ms": 5000}


def settings(spec: ProducerSpec) -> dict[str, Any]:
    return {**DEFAULTS, **spec.client_settings}


def stdout_path(paths: IncarnationPaths) -> Path:
    return paths.directory / f"{paths.name}.java.jsonl"


def command(
    spec: ProducerSpec, runtime: Runtime, paths: IncarnationPaths, first_seq: int, end_ms: int
) -> list[str]:
    config = write_properties(paths.directory / f"{paths.name}.java.properties", settings(spec))
    args = [
        *("--bootstrap", runtime.bootstrap, "--topic", runtime.topic, "--name", paths.name),
        *("--acks", "-1" if spec.acks == "all" else spec.acks),
        *("--idempotence", str(spec.idempotence).lower()),
        *("--rate", repr(spec.rate), "--record-size", str(spec.record_size)),
        *("--first-seq", str(first_seq), "--end-ms", str(end_ms), "--config", str(config)),
    ]
    if spec.records is not None:
        args += ["--last-seq", str(spec.records - 1)]
    return java_command(runtime, f"{PACKAGE}.LedgerProducer", args)


class JavaIncarnation:
    """Follows one incarnation's stdout into its sends, acks and events files."""

    def __init__(self, spec: ProducerSpec, paths: IncarnationPaths) -> None:
        self.paths = paths
        self.start_fields = {"acks": spec.acks, "rate": spec.rate, "idempotence": spec.idempotence}
        self.follower = Follower(stdout_path(paths), self._write)

    def poll(self) -> None:
        self.follower.poll()

    def _write(self, lines: list[str]) -> None:
        rows = map_producer(lines, self.start_fields)
        for path, table in ((self.paths.sends, rows.sends), (self.paths.acks, rows.acks)):
            with open_for_append(path) as f:
                writer = csv.writer(f, lineterminator="\n")
                for row in table:
                    writer.writerow(["" if v is None else v for v in row])
        append_events(self.paths.events, {"producer": self.paths.name}, rows.events)
