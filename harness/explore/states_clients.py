"""The clients' "sometimes" states of a trial, imported into harness.explore.states.STATES
(whose docstring lists every state with its evidence). A rebalance or a long consumer stall
inside a fault, a fenced producer, a transaction aborted by an error, a producer blocked in
its client, a share-group record whose acquisition lock expired: each a pure function of a
cell's history and summary.json.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from harness.results import events as ev
from harness.results.events import Event
from harness.results.windows import FaultWindow, fault_windows

# What librdkafka and the Java client call a fenced producer or a bumped / lost epoch.
FENCING = re.compile(
    r"FENCED|PRODUCER_EPOCH|UNKNOWN_PRODUCER_ID|OUT_OF_ORDER_SEQUENCE|PRODUCER_ID_MAPPING",
    re.IGNORECASE,
)
# A send() wait at least this long is the buffer (or the metadata) holding the producer back;
# the Java client reports every call of 10 ms or more, and a GC pause alone can take that.
BLOCKED_MS = 100
# A consumer stall at least this long: longer than a failover takes (a broker's death is seen
# after KRaft's broker session timeout, 9 s, then its partitions get new leaders).
LONG_STALL_S = 10.0


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _cluster_windows(events: list[Event]) -> list[FaultWindow]:
    """Every fault's window but a crashed consumer member's (not a fault done to the cluster)."""
    return [w for w in fault_windows(events) if not w.consumer_crash]


def _overlaps(w: FaultWindow, start_ms: float, end_ms: float) -> bool:
    return w.start_ms <= end_ms and (w.end_ms is None or start_ms <= w.end_ms)


def rebalance_in_fault(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    windows = _cluster_windows(events)
    for e in events:
        if e.get("kind") not in (ev.CONSUMER_ASSIGN, ev.CONSUMER_REVOKE):
            continue
        ts = int(e["ts"])
        for w in windows:
            if _overlaps(w, ts, ts):
                return f"{e.get('consumer', '?')} {e['kind'].split('.')[-1]} during {w.label}"
    return None


def consumer_stalled_in_fault(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    stalls = summary.get("stall_windows")
    windows = _cluster_windows(events)
    for s in stalls if isinstance(stalls, list) else []:
        if not isinstance(s, dict):
            continue
        length, start, end = (_number(s.get(k)) for k in ("duration_s", "start_ms", "end_ms"))
        if length is None or start is None or end is None or length < LONG_STALL_S:
            continue
        for w in windows:
            if _overlaps(w, start, end):
                return f"set {s.get('set', '?')} stalled {length:g} s during {w.label}"
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


def aborted_transaction(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    for e in events:
        kind = e.get("kind")
        if kind in (ev.PRODUCER_TXN_ERROR, ev.PIPELINE_TXN_ERROR) and e.get("action") == "abort":
            who = e.get("producer") or e.get("consumer") or "?"
            return f"{who} aborted a transaction: {e.get('call')}: {str(e.get('error'))[:100]}"
    return None


def producer_blocked(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    starts = (ev.PRODUCER_LAUNCH, ev.PRODUCER_START, ev.PRODUCER_SCHEDULE)
    # An incarnation's first send: the Java client's send() waits there for the topic's metadata.
    firsts = {e.get("first_seq") for e in events if e.get("kind") in starts}
    for e in events:
        if e.get("kind") != ev.PRODUCER_BLOCKED or e.get("seq") in firsts:
            continue
        ms = _number(e.get("ms"))
        if ms is not None and ms >= BLOCKED_MS:
            return f"a send waited {ms:g} ms in the client (seq {e.get('seq')})"
    return None


def share_lock_expired(events: list[Event], summary: Mapping[str, Any]) -> str | None:
    by_set = summary.get("share_by_set")
    for name, figures in sorted(by_set.items()) if isinstance(by_set, dict) else []:
        n = _number(figures.get("lock_expired")) if isinstance(figures, dict) else None
        if n is not None and n > 0:
            return f"set {name}: {n:g} acknowledgement(s) refused, the lock had expired"
    return None
