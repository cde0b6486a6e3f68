"""The "sometimes" states of a trial (Antithesis' sense): states of Kafka an exploration should
reach at least once, read from a trial's cell folder after it ran. A search that never saw a
leaderless partition has not tested what happens after one, whatever its verdicts say; and
explore keeps a schedule that reached a state no trial before it had, to draw from it again.

Each state is a pure function of the cell's history (history.jsonl) and its summary.json
(figures the checks wrote) that returns the evidence it found (a short text) or None. The
cluster's states (here):

* `isr_at_min`: a partition of the workload topic was under-replicated with an ISR of at most
  `min.insync.replicas` (and not empty): the next lost replica makes acks=all writes fail
  (the topic's setting from `topic.create`, else the brokers' from `cluster.start`, else 1);
* `leaderless`: a partition had no leader (`partition.state` leader null), or the active
  controller's OfflinePartitionsCount was above 0 (`broker.offline_partitions_s`);
* `under_replicated_long`: a partition of the workload topic stayed under-replicated without
  a break for at least the brokers' `broker.session.timeout.ms` (their setting from
  `cluster.start`, else KRaft's 9 s): a fault longer than a broker's death takes to notice
  (`partition.state`, up to `partition.watch_end`; without one watched partition, the
  seconds UnderReplicatedPartitions was above 0 in all, `broker.under_replicated_s`);
* `unclean_election`: the controllers counted an unclean leader election (metrics only);
* `elr_election`: a leader elected from the eligible leader replicas (KIP-966, Kafka 4.x KRaft;
  metrics only);
* `controller_change`: the active controller moved to another node
  (`broker.controller_changes`, metrics only: the history does not follow the controller);
* `log_truncated`: a node lost a log tail or truncated its log: a power loss dropped unsynced
  bytes (`fault.discarded`: a node's `bytes`), Kafka's recovery after it truncated
  (the power-loss `fault.heal`'s `recovery`: `truncations` or `invalid_bytes_truncated`), or
  the forensics found lost records truncated away (`lost_where.truncated`);
* `all_nodes_down`: every broker (`cluster.start`'s `broker-*` nodes, and any `add-broker`
  target) down at one instant: the windows of kill, stop and power-loss faults (a power-loss
  of target `all` covers them all), and a node Kafka refused to start (`node.refused_start`)
  from then on.

The clients' states (harness.explore.states_clients):

* `rebalance_in_fault`: a consumer member was assigned or revoked partitions inside a fault's
  window (inject to heal);
* `consumer_stalled_in_fault`: one of a consumer set's longest stalls (`stall_windows`) lasted
  at least 10 s and overlapped a fault's window;
* `producer_fenced`: a producer was fenced or its epoch bumped, as far as the clients say: a
  transactional producer re-created (`producer.reinit`), or an error naming fencing, the
  producer epoch or id, or an out-of-order sequence;
* `aborted_transaction`: an error made the producer or a pipeline member abort its transaction
  (`producer.txn_error` / `consumer.txn_error` with action `abort`); the aborts a spec plans
  (`abort_every`) are not a state: every trial of the spec makes them;
* `producer_blocked`: a send waited at least 100 ms in the client (`producer.blocked`: the
  Java client's send() on a full buffer.memory, librdkafka's full local queue), but the
  first send of an incarnation (the Java client's wait for the topic's metadata);
* `share_lock_expired`: a share-group member's acknowledgement was refused because the
  record's acquisition lock had expired (`share_by_set.<set>.lock_expired`).

A missing or unreadable file reaches nothing (the figures a cell did not measure, e.g. without
metrics, cannot say a state was reached): an absence is not proof a state was not reached.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from harness.explore import states_clients as clients
from harness.results import events as ev
from harness.results.history_reader import read_jsonl
from harness.results.isr import partition_samples, watch_end
from harness.results.layout import CellPaths
from harness.results.windows import fault_windows

Event = dict[str, Any]
State = Callable[[list[Event], Mapping[str, Any]], str | None]

MIN_ISR = "min.insync.replicas"
DEFAULT_MIN_ISR = 1  # Kafka's broker default
SESSION_TIMEOUT = "broker.session.timeout.ms"
DEFAULT_SESSION_TIMEOUT_MS = 9000  # KRaft's default
DOWN_KINDS = ("kill", "stop", "power-loss")  # the faults during which their node is down
WHOLE_SITE = "all"  # a power-loss's target for every Kafka node
BROKER_PREFIX = "broker-"  # harness.nodes.topology's names of brokers
# Kafka's recovery lines that say a log was cut (harness.faults.power_loss.RECOVERY_LINES).
TRUNCATING_RECOVERY = ("truncations", "invalid_bytes_truncated")


def _positive(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _figure(summary: Mapping[str, Any], section: str, figure: str) -> object:
    found = summary.get(section)
    return found.get(figure) if isinstance(found, dict) else None


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(str(value))
    except ValueError:
        return None


def broker_setting(events: list[Event], name: str, default: int) -> int:
    """The brokers' integer setting `name` as `cluster.start` gives it, else `default`."""
    value = default
    for e in events:
        config = e.get("broker_config") if e.get("kind") == ev.CLUSTER_START else None
        if isinstance(config, dict) and (n := _as_int(config.get(name))) is not None:
            value = n
    return value


def min_isr(events: list[Event]) -> dict[str, int]:
    """Each created topic's min.insync.replicas: its own config, else the brokers', else 1."""
    brokers = broker_setting(events, MIN_ISR, DEFAULT_MIN_ISR)
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
    offline = _figure(summary, "broker", "offline_partitions_s")
    return f"offline partitions for {offline} s" if _positive(offline) else None


def longest_under_replicated(events: list[Event]) -> tuple[str, int] | None:
    """The partition of the watch under-replicated the longest without a break, and for how
    many ms (one still under at the end: up to the watch's end); ("", 0) when none ever was,
    None without a watched partition."""
    samples = partition_samples(events)
    if not samples:
        return None
    end = watch_end(events)
    end_ms = max(int(end["ts"]) if end is not None else 0, samples[-1].ts)
    since: dict[tuple[str, int], int] = {}
    spans: list[tuple[int, str]] = [(0, "")]
    for s in samples:
        if s.under_replicated:
            since.setdefault(s.key, s.ts)
        elif s.key in since:
            spans.append((s.ts - since.pop(s.key), f"{s.topic}/{s.partition}"))
    spans += [(end_ms - start, f"{topic}/{p}") for (topic, p), start in since.items()]
    ms, name = max(spans)
    return name, ms


def under_replicated_long(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    limit_ms = broker_setting(events, SESSION_TIMEOUT, DEFAULT_SESSION_TIMEOUT_MS)
    longest = longest_under_replicated(events)
    if longest is not None:
        name, ms = longest
        return f"{name} under-replicated for {ms / 1000:g} s" if ms >= limit_ms else None
    total = _figure(summary, "broker", "under_replicated_s")
    if _positive(total) and total * 1000 >= limit_ms:
        return f"partitions under-replicated for {total} s in all (metrics)"
    return None


def unclean_election(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    n = _figure(summary, "broker", "unclean_elections")
    return f"{n} unclean election(s)" if _positive(n) else None


def elr_election(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    n = _figure(summary, "broker", "elr_elections")
    return f"{n} election(s) from the eligible leader replicas" if _positive(n) else None


def controller_change(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    n = _figure(summary, "broker", "controller_changes")
    return f"the active controller changed {n} time(s)" if _positive(n) else None


def _per_node(event: Event, field: str) -> list[tuple[str, dict[str, Any]]]:
    found = event.get(field)
    items = found.items() if isinstance(found, dict) else []
    return [(str(node), d) for node, d in items if isinstance(d, dict)]


def log_truncated(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    for e in events:
        if e.get("kind") == ev.FAULT_DISCARDED:
            for node, d in _per_node(e, "discarded"):
                if _positive(d.get("bytes")):
                    segments = d.get("segments")
                    logs = len(segments) if isinstance(segments, list) else 0
                    return f"{node} lost {d['bytes']} unsynced bytes ({logs} segment(s))"
        if e.get("kind") == ev.FAULT_HEAL:
            for node, counts in _per_node(e, "recovery"):
                cut = [f"{k} {counts[k]}" for k in TRUNCATING_RECOVERY if _positive(counts.get(k))]
                if cut:
                    return f"{node} truncated its log recovering ({', '.join(cut)})"
    n = _figure(summary, "lost_where", "truncated")
    return f"{n} lost record(s) truncated away" if _positive(n) else None


def brokers_of(events: list[Event]) -> set[str]:
    """The brokers the cluster started with, and every broker an add-broker started."""
    names: set[str] = set()
    for e in events:
        if e.get("kind") == ev.CLUSTER_START and isinstance(e.get("nodes"), list):
            names.update(str(n) for n in e["nodes"])
        elif e.get("kind") == ev.FAULT_INJECT and e.get("fault") == "add-broker":
            names.add(str(e.get("target")))
    return {n for n in names if n.startswith(BROKER_PREFIX)}


def all_nodes_down(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    brokers = brokers_of(events)
    # (start ms, end ms or None: to the end, the nodes down, why)
    down = [
        (w.start_ms, w.end_ms, brokers if w.target == WHOLE_SITE else {w.target}, w.label)
        for w in fault_windows(events)
        if w.fault in DOWN_KINDS
    ]
    down += [
        (int(e["ts"]), None, {str(e.get("node"))}, f"{e.get('node')} refused to start")
        for e in events
        if e.get("kind") == ev.NODE_REFUSED_START
    ]
    for at, _, _, _ in down:
        now = [d for d in down if d[0] <= at and (d[1] is None or at < d[1])]
        if brokers and brokers <= set[str]().union(*(nodes for _, _, nodes, _ in now)):
            return f"all {len(brokers)} brokers down at once ({', '.join(d[3] for d in now)})"
    return None


STATES: dict[str, State] = {
    "isr_at_min": isr_at_min,
    "leaderless": leaderless,
    "under_replicated_long": under_replicated_long,
    "unclean_election": unclean_election,
    "elr_election": elr_election,
    "controller_change": controller_change,
    "log_truncated": log_truncated,
    "all_nodes_down": all_nodes_down,
    "rebalance_in_fault": clients.rebalance_in_fault,
    "consumer_stalled_in_fault": clients.consumer_stalled_in_fault,
    "producer_fenced": clients.producer_fenced,
    "aborted_transaction": clients.aborted_transaction,
    "producer_blocked": clients.producer_blocked,
    "share_lock_expired": clients.share_lock_expired,
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
