"""The cell report's first three lines: what was done, what Kafka did, what the checks found.

A person opening report.html wants the story before the tables. Each line is computed from
the cell's summary.json and history alone (the same inputs as the tables below it), never
written per experiment, so every report tells its own cell's story and a figure in it is the
figure a table shows. A fact with no figure behind it (an old summary, a history without the
partition watch) is left out, never guessed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from harness.results import events as ev
from harness.results.isr import partition_samples
from harness.results.metrics import COUNT_NAMES
from harness.results.verdicts import as_verdict
from harness.results.windows import FaultWindow, fault_windows

MAX_FAULTS = 4  # faults named in the first line; the rest are counted (the Faults table)
MAX_CHECKS = 3  # checks that did not pass, named with their detail in the third line


@dataclass(frozen=True)
class Story:
    done: str  # the faults, on what, when; the workload they met
    kafka: str  # leadership, ISR, offline partitions, controller, acks and stalls
    found: str  # the verdict, the checks that did not pass, the counts that are not 0


def _dict(value: object) -> dict[str, Any]:
    """A summary section, or nothing when it is absent or of another shape (hand-edited)."""
    return value if isinstance(value, dict) else {}


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _s(value: float) -> str:
    return f"{value:.1f} s"


def _times(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _workload_start(events: list[dict[str, Any]]) -> int | None:
    for e in sorted(events, key=lambda e: e["ts"]):
        if e["kind"] == ev.PHASE and e.get("phase") == "workload":
            return int(e["ts"])
    return None


def _fault(w: FaultWindow, t0: int | None) -> str:
    at = "" if t0 is None else f" at +{_s((w.start_ms - t0) / 1000)}"
    lasted = "never healed" if w.end_ms is None else f"for {_s((w.end_ms - w.start_ms) / 1000)}"
    return f"{w.label}{at} {lasted}"


def _readers(events: list[dict[str, Any]]) -> str:
    members: dict[str, set[str]] = {}
    for e in events:
        consumer = e.get("consumer")
        if e["kind"] == ev.CONSUMER_LAUNCH and isinstance(consumer, str) and "/" in consumer:
            members.setdefault(consumer.split("/", 1)[0], set()).add(consumer)
    sets = [f"{name} ({_times(len(m), 'member')})" for name, m in sorted(members.items())]
    return f", read by {', '.join(sets)}" if sets else ""


def done(summary: dict[str, Any], events: list[dict[str, Any]]) -> str:
    t0 = _workload_start(events)
    windows = fault_windows(events)
    named = [_fault(w, t0) for w in windows[:MAX_FAULTS]]
    more = len(windows) - len(named)
    faults = "; ".join(named) + (f"; and {more} more" if more > 0 else "") if named else ""
    skipped = sum(1 for e in events if e["kind"] == ev.FAULT_SKIPPED)
    if skipped:
        faults += ("; " if faults else "") + f"{_times(skipped, 'planned fault')} skipped"
    attempted = _dict(summary.get("counts")).get("attempted")
    start = next((e for e in events if e["kind"] == ev.PRODUCER_START), None)
    how = []
    if start is not None and start.get("acks") is not None:
        how.append(f"acks={start['acks']}")
    if start is not None and _num(start.get("rate")) is not None:
        how.append(f"{_num(start.get('rate')):g} records/s")
    sent = f"{attempted} records" if isinstance(attempted, int) else "records"
    workload = f"the producer sent {sent}" + (f" ({', '.join(how)})" if how else "")
    workload += _readers(events)
    return f"{faults or 'no fault'}, while {workload}."


def _leadership(events: list[dict[str, Any]]) -> list[str]:
    samples = partition_samples(events)
    if not samples:
        return []
    leader: dict[tuple[str, int], int] = {}  # each partition's last known leader
    moves = 0
    leaderless = False
    for s in samples:
        if s.leader is None or s.leader < 0:  # offline: a move only if another broker leads next
            leaderless = True
            continue
        moves += s.key in leader and leader[s.key] != s.leader
        leader[s.key] = s.leader
    out = [f"partition leadership moved {_times(moves, 'time')}" if moves else "no leader moved"]
    return out + (["a partition was left without a leader"] if leaderless else [])


def _isr(summary: dict[str, Any]) -> list[str]:
    isr = _dict(summary.get("isr"))
    if _num(isr.get("isr_shrinks")) is None:
        return []
    shrinks = int(isr["isr_shrinks"])
    if not shrinks:
        return ["no ISR shrank"]
    out = f"ISRs shrank {_times(shrinks, 'time')}"
    smallest, under = _num(isr.get("min_isr_size")), _num(isr.get("under_replicated_s"))
    if smallest is not None:
        out += f" (to {_times(int(smallest), 'replica')})"
    if under:
        out += f", the topic under-replicated for {_s(under)}"
    return [out]


def _broker(summary: dict[str, Any]) -> list[str]:
    broker = _dict(summary.get("broker"))
    out = []
    offline = _num(broker.get("offline_partitions_s"))
    if offline:
        out.append(f"partitions offline for {_s(offline)}")
    for key, what in (
        ("controller_changes", "controller change"),
        ("unclean_elections", "unclean election"),
    ):
        n = _num(broker.get(key))
        if n:
            out.append(_times(int(n), what))
    return out


def _clients(summary: dict[str, Any]) -> list[str]:
    out = []
    unavailable = _num(summary.get("unavailable_s"))
    if unavailable is not None:
        out.append(
            f"writes went unacknowledged for {_s(unavailable)}"
            if unavailable
            else "writes were acknowledged throughout"
        )
    stalls = {k: v for k, v in _dict(summary.get("stalls_by_set")).items() if _num(v)}
    if stalls:
        worst = max(stalls, key=lambda k: float(stalls[k]))
        out.append(f"consumers stalled up to {_s(float(stalls[worst]))} ({worst})")
    places = [f"{int(n)} {p}" for p, n in _dict(summary.get("lost_where")).items() if _num(n)]
    if places:
        out.append(f"lost records: {', '.join(places)}")
    if summary.get("recovered") is False:
        out.append("the cluster had not healed by the end of recovery")
    return out


def kafka(summary: dict[str, Any], events: list[dict[str, Any]]) -> str:
    facts = _leadership(events) + _isr(summary) + _broker(summary) + _clients(summary)
    if not facts:
        return "nothing measured (no partition states, ISR, broker or availability figures)."
    return "; ".join(facts) + "."


def found(summary: dict[str, Any]) -> str:
    verdict = as_verdict(summary.get("verdict"))
    listed = summary.get("checks")
    checks = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    tally = Counter(as_verdict(c.get("verdict")) for c in checks)
    out = f"{verdict.upper()}: {tally['pass']} of {_times(len(checks), 'check')} passed"
    not_passed = [c for c in checks if as_verdict(c.get("verdict")) != "pass"]
    if not_passed:
        named = [
            f"{c.get('name')} {as_verdict(c.get('verdict'))}"
            + (f" ({c['detail']})" if c.get("detail") else "")
            for c in not_passed[:MAX_CHECKS]
        ]
        rest = len(not_passed) - len(named)
        out += "; " + "; ".join(named) + (f"; {rest} more" if rest > 0 else "")
    counts = _dict(summary.get("counts"))
    acked, attempted = counts.get("acked"), counts.get("attempted")
    parts = []
    if isinstance(acked, int) and isinstance(attempted, int):
        parts.append(f"{acked} of {attempted} records acknowledged")
    others = [n for n in COUNT_NAMES if n not in ("attempted", "acked") and n in counts]
    nonzero = [f"{n} {counts[n]}" for n in others if counts[n]]
    undecided = [n for n in others if counts[n] is None]
    if nonzero:
        parts.append(", ".join(nonzero))
    if undecided:
        parts.append(f"undecided: {', '.join(undecided)}")
    if others and len(nonzero) + len(undecided) < len(others):
        parts.append("every other count 0" if nonzero or undecided else "every count 0")
    return out + (". " + "; ".join(parts) if parts else "") + "."


def story(summary: dict[str, Any], events: list[dict[str, Any]]) -> Story:
    return Story(done(summary, events), kafka(summary, events), found(summary))
