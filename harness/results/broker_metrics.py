"""Kafka's own metrics in a cell folder (metrics.parquet, tables.METRICS): names and rows.

The JMX exporter agent in every broker and controller (docker/jmx-exporter.yml) serves the
Prometheus text format; the scraper (harness.cluster.metrics_scraper) turns each answer into
rows with `exposition_rows`, and a failed scrape into one `up` 0 row (a good one adds `up` 1,
Prometheus' own convention), so a gap in the file is visible as such. A row's `labels` is
the canonical text `k=v,k=v` (names sorted; `,`, `=` and `%` in a value percent-encoded),
read back with `parse_labels`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote

from prometheus_client.parser import text_string_to_metric_families

UP = "up"  # 1: the node's /metrics answered; 0: it did not (the row's labels say why)
# What a scrape keeps: Kafka's own metrics (the agent also serves JVM and process ones).
KEPT_PREFIX = "kafka_"

# The metrics the checks and the report read (standard jmx_exporter Kafka names).
UNDER_REPLICATED = "kafka_server_replicamanager_underreplicatedpartitions"
PARTITION_COUNT = "kafka_server_replicamanager_partitioncount"
LEADER_COUNT = "kafka_server_replicamanager_leadercount"
ISR_SHRINKS = "kafka_server_replicamanager_isrshrinks_total"
ISR_EXPANDS = "kafka_server_replicamanager_isrexpands_total"
OFFLINE_PARTITIONS = "kafka_controller_kafkacontroller_offlinepartitionscount"
ACTIVE_CONTROLLER = "kafka_controller_kafkacontroller_activecontrollercount"
# ZooKeeper mode's controller only: KRaft's quorum controller has no such timer.
LEADER_ELECTIONS = "kafka_controller_controllerstats_leaderelectionrateandtimems_count"
# The meter UncleanLeaderElectionsPerSec's count (the rules drop "PerSec", as the
# jmx_exporter example does for every meter).
UNCLEAN_ELECTIONS = "kafka_controller_controllerstats_uncleanleaderelections_total"
# Elections of a leader from the eligible leader replicas (KIP-966; Kafka 4.x KRaft only: the
# meter ElectionFromEligibleLeaderReplicasPerSec's count).
ELR_ELECTIONS = "kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total"
REQUEST_TIME = "kafka_network_requestmetrics_totaltimems"  # {request, quantile}
PARTITION_UNDER_REPLICATED = "kafka_cluster_partition_underreplicated"  # {topic, partition}

Row = tuple[str, str, float]  # metric, labels, value


def _escape(value: str) -> str:
    return quote(value, safe="") if any(c in value for c in ",=%") else value


def labels_text(labels: dict[str, str]) -> str:
    """The canonical text of a label set: `k=v,k=v`, names sorted ('' for none)."""
    return ",".join(f"{k}={_escape(str(v))}" for k, v in sorted(labels.items()))


def parse_labels(text: str) -> dict[str, str]:
    """`labels_text` read back."""
    if not text:
        return {}
    out = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        out[key] = unquote(value)
    return out


def exposition_rows(text: str, prefix: str = KEPT_PREFIX) -> list[Row]:
    """The samples of a Prometheus text answer whose names start with `prefix`, as rows.

    ValueError when the text is not the Prometheus format (the scrape counts as failed)."""
    rows: list[Row] = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith(prefix):
                rows.append((sample.name, labels_text(sample.labels), float(sample.value)))
    return rows


# How long a scrape may take (harness.cluster.metrics_scraper): a round is stamped when it is
# sent, so a scrape stamped up to this long before a fault began may have failed because of it.
SCRAPE_TIMEOUT_S = 3.0  # a fresh agent's first answer took over 0.8 s on a loaded machine


@dataclass(frozen=True)
class Gap:
    """A run of scrape rounds in which `node`'s /metrics did not answer (ms, first and last
    round): what the check undecides figures for and what the report hatches."""

    node: str
    start_ms: int
    end_ms: int

    def text(self) -> str:
        return (
            f"{self.node}'s metrics did not answer from {self.start_ms} to {self.end_ms} ms "
            f"({(self.end_ms - self.start_ms) / 1000 + 1:.0f} s of scrapes) outside any fault on it"
        )


def gap_runs(node: str, rounds: Iterable[tuple[int, bool]]) -> list[Gap]:
    """The runs of consecutive rounds (ts, missed) that were missed, in time order."""
    gaps: list[Gap] = []
    current: list[int] = []
    for ts, missed in rounds:
        if missed:
            current.append(ts)
        elif current:
            gaps.append(Gap(node, current[0], current[-1]))
            current = []
    if current:
        gaps.append(Gap(node, current[0], current[-1]))
    return gaps
