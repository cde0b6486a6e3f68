"""ownership: how long each group set's partitions had no live member holding them (the
stop-the-world of a rebalance), and per generation the wait its assignment ended beside the
records it processed again, from the history alone. A review: it reads the consumers
check's reprocessed_by_generation.

A member holds the partitions of its `consumer.assign` events (each adds its partitions: an
eager rebalance revokes everything first, an incremental one only what moves) until a
`consumer.revoke` names them, or its process ends: a `consumer.crash` of a running process
(with `pid`), `consumer.stop`, `consumer.exit`, or the `consumer.launch` of a new process
(which holds nothing yet). A partition is *unowned* while no member of its set holds it,
counted from its first assignment in the set (the start-up is not a rebalance) and within
the measuring window of the stall: the workload phase to the end of the drain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from harness.results import events as ev
from harness.results.consumers import set_of
from harness.results.events import Event
from harness.results.metrics import Figures, GenerationRows, GenerationWait, OwnershipFigures
from spark_jobs import history_facts as hf
from spark_jobs.check import REVIEW, Check
from spark_jobs.context import CellContext

_RELEASE_ALL = (ev.CONSUMER_STOP, ev.CONSUMER_EXIT, ev.CONSUMER_LAUNCH)


def run(ctx: CellContext) -> Figures:
    history = ctx.data.history
    if not ctx.data.has_history:
        return {
            "undecided": {"ownership_by_set": "history.jsonl missing"},
            "generation_waits": None,
        }
    start, end = hf.workload_start(history), hf.drain_end(history)
    if start is None or end is None or end <= start:
        why = f"no measuring window (start={start}, end={end})"
        return {"undecided": {"ownership_by_set": why}, "generation_waits": None}
    by_set, waits = ownership(history, start, end)
    waits = with_reprocessed(waits, ctx.summary.get("reprocessed_by_generation"))
    return {"ownership_by_set": by_set, "generation_waits": waits}


@dataclass
class _SetState:
    held: dict[str, set[int]] = field(default_factory=dict)  # member -> partitions
    since: dict[int, int] = field(default_factory=dict)  # unowned partition -> from (ms)
    known: set[int] = field(default_factory=set)  # partitions assigned at least once
    assignments: int = 0
    revocations: int = 0
    unowned_ms: int = 0
    longest_ms: int = 0

    def owned(self, partition: int) -> bool:
        return any(partition in parts for parts in self.held.values())

    def release(self, member: str, partitions: Iterable[int], ts: int) -> None:
        held = self.held.setdefault(member, set())
        for p in sorted(set(partitions) & held):
            held.discard(p)
            if not self.owned(p):
                self.since[p] = ts

    def close(self, partition: int, ts: int, lo: int, hi: int) -> int:
        """End the partition's unowned window at ts (clipped to [lo, hi]); its length."""
        start = self.since.pop(partition, None)
        if start is None:
            return 0
        length = max(0, min(ts, hi) - max(start, lo))
        self.unowned_ms += length
        self.longest_ms = max(self.longest_ms, length)
        return length


def _partitions(event: Event) -> list[int]:
    raw = event.get("partitions")
    return [int(p) for p in raw if isinstance(p, int)] if isinstance(raw, list) else []


def ownership(
    history: list[Event], start: int, end: int
) -> tuple[dict[str, OwnershipFigures], list[GenerationWait]]:
    """Per set its figures, and per assignment (generation) the wait it ended, measured over
    [start, end] (ms)."""
    states: dict[str, _SetState] = {}
    waits: list[GenerationWait] = []
    timed = [e for e in history if isinstance(e.get("ts"), int) and e.get("consumer")]
    for e in sorted(timed, key=lambda e: int(e["ts"])):
        kind, ts, member = e.get("kind"), int(e["ts"]), str(e["consumer"])
        state = states.setdefault(set_of(member), _SetState())
        if kind == ev.CONSUMER_ASSIGN:
            state.assignments += 1
            parts = _partitions(e)
            ended = [state.close(p, ts, start, end) for p in parts if not state.owned(p)]
            state.known.update(parts)
            state.held.setdefault(member, set()).update(parts)
            generation = e.get("generation")
            waits.append(
                {
                    "set": set_of(member),
                    "consumer": member,
                    "generation": generation if isinstance(generation, int) else None,
                    "ts": ts,
                    "partitions": sorted(parts),
                    "waited_s": max(ended, default=0) / 1000.0,
                    "reprocessed": None,
                }
            )
        elif kind == ev.CONSUMER_REVOKE:
            state.revocations += 1
            state.release(member, _partitions(e), ts)
        elif kind in _RELEASE_ALL or (kind == ev.CONSUMER_CRASH and "pid" in e):
            state.release(member, list(state.held.get(member, ())), ts)
    out: dict[str, OwnershipFigures] = {}
    for name, state in sorted(states.items()):
        if not state.known:
            continue  # a set that never held a partition (a Spark query)
        for p in sorted(state.since):
            state.close(p, end, start, end)  # still unowned at the end
        out[name] = {
            "assignments": state.assignments,
            "revocations": state.revocations,
            "unowned_s": state.unowned_ms / 1000.0,
            "longest_unowned_s": state.longest_ms / 1000.0,
        }
    return out, [w for w in waits if w["set"] in out]


def with_reprocessed(
    waits: list[GenerationWait], by_generation: list[GenerationRows] | None
) -> list[GenerationWait]:
    """Each wait with its generation's re-read rows (`reprocessed_by_generation`; a generation
    that processed nothing re-read nothing); unchanged (None) when those are undecided."""
    if by_generation is None:
        return waits
    counts: dict[tuple[str, int | None], int] = {
        (r["set"], r["generation"]): r["reprocessed"] for r in by_generation
    }
    return [{**w, "reprocessed": counts.get((w["set"], w["generation"]), 0)} for w in waits]


CHECK = Check(
    "ownership",
    needs=("summary",),
    decides=("ownership_by_set", "generation_waits"),
    run=run,
    lane=REVIEW,
)
