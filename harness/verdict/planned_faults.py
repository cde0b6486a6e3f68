"""The `faults` check: was every planned fault really done, on time and in order?

Judged against the spec's plan, not against what the history happens to mention: a history
with no `fault.*` line at all has shown no fault, so it cannot pass. A planned fault counts
as done only with its evidence in the history:

* a cluster, producer or operation fault: its `fault.inject` carrying the plan's `index`
  (and, written since 2026-11-24, its `spec_kind`, which must be the planned kind), and a
  later `fault.heal` of the same `fault_id` (healed at the end of its duration, by the
  operation itself, or by the heal phase's `heal_all`);
* a consumer fault (`consumer-crash`, `pipeline-crash`): a `consumer.crash` carrying the
  plan's `index` and the `pid` it killed (a member that was not running was not crashed),
  and a later `consumer.launch` of that member.

Anything else (skipped, failed, missing, never healed) undecides the cell naming the fault,
unless the spec marked it `optional`. Histories written before the `index` of consumer
crashes existed have their index-less crashes matched to the planned consumer faults in
time order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.results import events as ev
from harness.results.events import Event
from harness.verdict.checks import Judgement

# A fault the nemesis started more than this after its planned time (resolving its target
# took that long) is not the experiment written down.
LATE_S = 10.0

CONSUMER_KINDS = ("consumer-crash", "pipeline-crash")


@dataclass(frozen=True)
class PlannedKind:
    """What the check needs of one planned fault (a harness.spec FaultSpec by position)."""

    index: int
    kind: str
    at_s: float = 0.0
    optional: bool = False


def faults_check(history: list[Event], plan: Sequence[PlannedKind] | None) -> Judgement:
    """`plan` None: the plan is not known (only what the history says is judged)."""
    missed: list[str] = []
    tolerated: list[str] = []
    optional = {p.index for p in plan or () if p.optional}
    reported: set[int] = set()
    for e in history:
        if e["kind"] not in (ev.FAULT_SKIPPED, ev.FAULT_ERROR):
            continue
        index = _index(e)
        why = e.get("reason") or e.get("error") or "?"
        what = f"fault #{e.get('index', '?')}" + (f" {e['fault']}" if e.get("fault") else "")
        line = f"{what} {'skipped' if e['kind'] == ev.FAULT_SKIPPED else 'failed'}: {why}"
        is_optional = e.get("optional") is True or index in optional
        (tolerated if is_optional else missed).append(line)
        if index is not None:
            reported.add(index)
    consumer_faults = sorted(
        (p for p in plan or () if p.kind in CONSUMER_KINDS), key=lambda p: (p.at_s, p.index)
    )
    ordinals = {p.index: n for n, p in enumerate(consumer_faults)}
    for p in plan or ():
        if p.index in reported:
            continue
        gap = _evidence_gap(history, p, ordinals.get(p.index, 0))
        if gap is not None:
            (tolerated if p.optional else missed).append(f"fault #{p.index} {p.kind} {gap}")
    missed += off_schedule(history) + _unplanned(history, plan)
    if missed:
        return Judgement("faults", "unknown", "; ".join(missed))
    if plan is not None and not plan and not tolerated:
        return Judgement("faults", "pass", "no fault was planned")
    note = f" (optional ones missed: {'; '.join(tolerated)})" if tolerated else ""
    return Judgement("faults", "pass", "every planned fault was done" + note + on_time(history))


def _index(event: Event) -> int | None:
    """The plan index an event names (a history is input: anything else is no index)."""
    value = event.get("index")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _unplanned(history: list[Event], plan: Sequence[PlannedKind] | None) -> list[str]:
    """Fault events naming a plan index the spec does not have: the history is not this
    spec's (a folder put together from different runs)."""
    if plan is None:
        return []
    indexes = {p.index for p in plan}
    kinds = (ev.FAULT_INJECT, ev.FAULT_SKIPPED, ev.FAULT_ERROR, ev.CONSUMER_CRASH)
    strays = sorted(
        {i for e in history if e["kind"] in kinds and (i := _index(e)) is not None} - indexes
    )
    return [
        f"the history names fault #{i}, which the spec does not plan ({len(indexes)} planned)"
        for i in strays
    ]


def _evidence_gap(history: list[Event], p: PlannedKind, ordinal: int) -> str | None:
    """Why the history does not show this planned fault done (None: it does); `ordinal`:
    its place among the planned consumer faults."""
    if p.kind in CONSUMER_KINDS:
        return _consumer_gap(history, p, ordinal)
    injects = [e for e in history if e["kind"] == ev.FAULT_INJECT and e.get("index") == p.index]
    if not injects:
        return f"has no {ev.FAULT_INJECT} in the history: it was never done"
    other = [e.get("spec_kind") for e in injects if e.get("spec_kind") not in (None, p.kind)]
    if other:
        return f"was planned, but the history's fault #{p.index} is a {other[0]}"
    for inject in injects:
        heals = [
            e
            for e in history
            if e["kind"] == ev.FAULT_HEAL and e.get("fault_id") == inject.get("fault_id")
        ]
        if not any(e["ts"] >= inject["ts"] for e in heals):
            return f"was injected but has no {ev.FAULT_HEAL}: it was never healed"
    return None


def _consumer_gap(history: list[Event], p: PlannedKind, ordinal: int) -> str | None:
    crash = _consumer_crash(history, p, ordinal)
    if crash is None:
        return f"has no {ev.CONSUMER_CRASH} in the history: it was never done"
    if "pid" not in crash:
        return f"crashed no process: {crash.get('consumer')} {crash.get('note') or 'not running'}"
    relaunched = any(
        e["kind"] == ev.CONSUMER_LAUNCH
        and e.get("consumer") == crash.get("consumer")
        and int(e["ts"]) >= int(crash["ts"])
        for e in history
    )
    if not relaunched:
        return f"crashed {crash.get('consumer')}, which was never launched again"
    return None


def _consumer_crash(history: list[Event], p: PlannedKind, ordinal: int) -> Event | None:
    """The crash event of this planned fault: by its index, else (a history written before
    crashes carried one) the `ordinal`-th index-less crash, the planned consumer faults in
    the order of their times."""
    crashes = [e for e in history if e["kind"] == ev.CONSUMER_CRASH]
    for e in crashes:
        if e.get("index") == p.index:
            return e
    if any("index" in e for e in crashes):
        return None
    # Crashes the nemesis did have a pid or say the member was not running; the runner's own
    # (a member that did not stop on SIGTERM at the end) are not faults.
    legacy = [e for e in crashes if "pid" in e or e.get("note") == "was not running"]
    return legacy[ordinal] if ordinal < len(legacy) else None


def _planned_injects(history: list[Event]) -> list[Event]:
    """Injects of planned faults; an optional one may be missed altogether, so also late."""
    return [
        e
        for e in history
        if e["kind"] == ev.FAULT_INJECT
        and isinstance(e.get("late_s"), int | float)
        and isinstance(e.get("at_s"), int | float)
        and e.get("optional") is not True
    ]


def off_schedule(history: list[Event]) -> list[str]:
    """Faults that started too late, or after one planned later than them."""
    injects = _planned_injects(history)
    problems = [
        f"fault #{e.get('index')} {e.get('fault', '')} started {e['late_s']:.1f} s after its "
        f"planned {_planned_text(e)} (more than {LATE_S:g} s late)"
        for e in injects
        if e["late_s"] > LATE_S
    ]
    for a in injects:
        for b in injects:
            due_a, due_b = _due_s(a), _due_s(b)
            started_a, started_b = due_a + a["late_s"], due_b + b["late_s"]
            if due_a < due_b and started_a > started_b:
                problems.append(
                    f"fault #{a.get('index')} {a.get('fault', '')} (planned {due_a:g} s) "
                    f"started at {started_a:.1f} s, after fault #{b.get('index')} "
                    f"{b.get('fault', '')} (planned {due_b:g} s, started {started_b:.1f} s): "
                    "the plan's order was not kept"
                )
    return problems


def _planned_text(e: Event) -> str:
    step = (
        f" after step {e['after_step']} (began at {e['step_at_s']:g} s)"
        if "after_step" in e and isinstance(e.get("step_at_s"), int | float)
        else ""
    )
    return f"{e['at_s']:g} s{step}"


def _due_s(e: Event) -> float:
    """When the fault was due, in seconds into the workload: at_s, or at_s after the start
    of the step it waited for (`after_step`, whose start the inject records as step_at_s)."""
    step = e.get("step_at_s")
    return float(e["at_s"]) + (float(step) if isinstance(step, int | float) else 0.0)


def on_time(history: list[Event]) -> str:
    """The latest start, for the pass detail."""
    injects = _planned_injects(history)
    if not injects:
        return ""
    latest = max(injects, key=lambda e: float(e["late_s"]))
    return (
        f"; the latest, fault #{latest.get('index')}, started {latest['late_s']:.1f} s after "
        "its time"
    )
