"""The "sometimes" states of a trial (Antithesis' sense): states of Kafka an exploration should
reach at least once, read from a trial's cell folder after it ran. A search that never saw a
leaderless partition has not tested what happens after one, whatever its verdicts say.

Each state is a pure function of the cell's history (history.jsonl) and its summary.json
(the `isr` and `broker` figures the checks wrote from the partition watch and metrics.parquet)
that returns the evidence it found (a short text) or None:

* `isr_at_min`: a partition of the workload topic was under-replicated with an ISR of at most
  `min.insync.replicas` (and not empty): the next lost replica makes acks=all writes fail
  (the topic's setting from `topic.create`, else the brokers' from `cluster.start`, else 1);
* `leaderless`: a partition had no leader (`partition.state` leader null), or the active
  controller's OfflinePartitionsCount was above 0 (`broker.offline_partitions_s`);
* `unclean_election`: the controllers counted an unclean leader election (metrics only);
* `elr_election`: a leader elected from the eligible leader replicas (KIP-966, Kafka 4.x KRaft;
  metrics only);
* `rebalance_in_fault`: a consumer member was assigned or revoked partitions inside a fault's
  window (inject to heal);
* `producer_fenced`: a producer was fenced or its epoch bumped, as far as the clients say: a
  transactional producer re-created (`producer.reinit`), or an error naming fencing, the
  producer epoch or id, or an out-of-order sequence.

A missing or unreadable file reaches nothing (the figures a cell did not measure, e.g. without
metrics, cannot say a state was reached): an absence is not proof a state was not reached.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harness.results import events as ev
from harness.results.history_reader import read_jsonl
from harness.results.isr import partition_samples
from harness.results.layout import CellPaths
from harness.results.windows import fault_windows

Event = dict[str, Any]
State = Callable[[list[Event], Mapping[str, Any]], str | None]

MIN_ISR = "min.insync.replicas"
DEFAULT_MIN_ISR = 1  # Kafka's broker default
# What librdkafka and the Java client call a fenced producer or a bumped / lost epoch.
FENCING = re.compile(
    r"FENCED|PRODUCER_EPOCH|UNKNOWN_PRODUCER_ID|OUT_OF_ORDER_SEQUENCE|PRODUCER_ID_MAPPING",
    re.IGNORECASE,
)


def _positive(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _broker(summary: Mapping[str, Any], figure: str) -> object:
    broker = summary.get("broker")
    return broker.get(figure) if isinstance(broker, dict) else None


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(str(value))
    except ValueError:
        return None


def min_isr(events: list[Event]) -> dict[str, int]:
    """Each created topic's min.insync.replicas: its own config, else the brokers', else 1."""
    brokers = DEFAULT_MIN_ISR
    for e in events:
        config = e.get("broker_config") if e.get("kind") == ev.CLUSTER_START else None
        if isinstance(config, dict) and (n := _as_int(config.get(MIN_ISR))) is not None:
            brokers = n
    topics: dict[str, int] = {}
    for e in events:
        if e.get("kind") == ev.TOPIC_CREATE:
            config = e.get("config")
            own = _as_int(config.get(MIN_ISR)) if isinstance(config, dict) else None
            topics[str(e.get("topic", ""))] = brokers if own is None else own
    topics[""] = brokers  # a topic created without an event
    return topics


def isr_at_min(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    limits = min_isr(events)
    for s in partition_samples(events):
        limit = limits.get(s.topic, limits[""])
        if s.under_replicated and 0 < len(s.isr) <= limit:
            return f"{s.topic}/{s.partition} ISR {list(s.isr)} (min.insync.replicas {limit})"
    return None


def leaderless(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    for s in partition_samples(events):
        if s.leader is None:
            return f"{s.topic}/{s.partition} had no leader"
    offline = _broker(summary, "offline_partitions_s")
    return f"offline partitions for {offline} s" if _positive(offline) else None


def unclean_election(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    n = _broker(summary, "unclean_elections")
    return f"{n} unclean election(s)" if _positive(n) else None


def elr_election(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    n = _broker(summary, "elr_elections")
    return f"{n} election(s) from the eligible leader replicas" if _positive(n) else None


def rebalance_in_fault(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    windows = [w for w in fault_windows(events) if not w.consumer_crash]
    for e in events:
        if e.get("kind") not in (ev.CONSUMER_ASSIGN, ev.CONSUMER_REVOKE):
            continue
        ts = int(e["ts"])
        for w in windows:
            if w.start_ms <= ts and (w.end_ms is None or ts <= w.end_ms):
                return f"{e.get('consumer', '?')} {e['kind'].split('.')[-1]} during {w.label}"
    return None


def producer_fenced(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    for e in events:
        kind = e.get("kind")
        if kind == ev.PRODUCER_REINIT:
            return f"producer {e.get('producer') or '?'} re-created (a new epoch)"
        if kind in (ev.PRODUCER_TXN_ERROR, ev.PIPELINE_TXN_ERROR, ev.PRODUCER_ERRORS):
            error = str(e.get("error", ""))
            if FENCING.search(error):
                return f"{kind}: {error[:120]}"
    return None


STATES: dict[str, State] = {
    "isr_at_min": isr_at_min,
    "leaderless": leaderless,
    "unclean_election": unclean_election,
    "elr_election": elr_election,
    "rebalance_in_fault": rebalance_in_fault,
    "producer_fenced": producer_fenced,
}


def states_of(events: list[Event], summary: Mapping[str, Any]) -> dict[str, str]:
    """The states reached, each with its evidence, in STATES' order."""
    found = {name: state(events, summary) for name, state in STATES.items()}
    return {name: why for name, why in found.items() if why is not None}


def _summary(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _history(path: Path) -> list[Event]:
    try:
        return read_jsonl(path)[0]
    except Exception:  # a history that cannot be read reaches nothing, never a crash
        return []


def cell_states(cell_dir: Path) -> dict[str, str]:
    """The states a cell folder shows it reached (missing files: none from them)."""
    paths = CellPaths(cell_dir)
    return states_of(_history(paths.history), _summary(paths.summary))


def first_reached(per_trial: list[tuple[int, list[str]]]) -> dict[str, int | None]:
    """Every state (never reached ones too, None) with the first trial that reached it."""
    first: dict[str, int | None] = dict.fromkeys(STATES)
    for trial, reached in sorted(per_trial, key=lambda t: t[0]):
        for name in reached:
            if first.get(name) is None:
                first[name] = trial
    return first
