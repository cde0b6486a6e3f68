"""Shrink a schedule that violates an expectation to a smaller one that still does.

Passes, in this order, repeated until a whole round keeps nothing (a fixed point) or the
budget is spent: fewer faults (delta debugging over the fault list, Zeller's ddmin), shorter
durations (halved towards `min_duration_s`), earlier times (halved towards `earliest_s`; a
step under `min_step_s` is not taken),
simpler targets (harness.spec.explore_roles.simpler_targets). Every candidate is run through
the oracle k times and kept only when it violates the same expectation in `need` of them
(harness.explore.oracle); a candidate the spec's rules refuse (`problems`) is never run. Each
candidate tried is a step of the log: its schedule, its runs' verdicts, kept or not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.explore.budget import Budget
from harness.explore.oracle import Oracle, Repeats, repeat
from harness.spec.explore_roles import Entry

Problems = Callable[[list[Entry]], list[str]]
Simpler = Callable[[Entry], list[Entry]]

FIXED_POINT, BUDGET = "fixed point", "budget"


@dataclass(frozen=True)
class Step:
    phase: str  # fewer, shorter, earlier, simpler, confirm
    faults: list[Entry]
    runs: list[dict[str, Any]]
    kept: bool
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        hits = sum(bool(r["violated"]) for r in self.runs)
        return {
            "phase": self.phase,
            "faults": self.faults,
            "runs": self.runs,
            "violated": f"{hits}/{len(self.runs)}",
            "kept": self.kept,
            **({"note": self.note} if self.note else {}),
        }


@dataclass
class Shrunk:
    original: list[Entry]
    faults: list[Entry]  # the smallest schedule kept, or the smallest one whose confirmation held
    stopped: str  # FIXED_POINT or BUDGET
    log: list[Step] = field(default_factory=list)
    confirmed: Repeats | None = None  # the shrunk schedule's own k runs (confirm=True)


@dataclass
class Shrinker:
    """One shrink of `faults` against `prop` (an `expect:` key)."""

    oracle: Oracle
    prop: str
    k: int = 3
    need: int = 2
    budget: Budget = field(default_factory=Budget)
    problems: Problems = field(default=lambda faults: [])  # the spec's rules, injected
    simpler: Simpler = field(default=lambda entry: [])  # simpler targets of one entry
    min_duration_s: float = 1.0
    earliest_s: float = 0.0
    min_step_s: float = 1.0  # durations and times move by at least this much (or stay)
    log: list[Step] = field(default_factory=list)
    _seen: dict[str, bool] = field(default_factory=dict)

    def run(self, faults: list[Entry], confirm: bool = True) -> Shrunk:
        """The smallest schedule found; `confirm`: run it k times more to say how often it
        reproduces (its `incident:` figures), with k cells of the budget kept back for it
        (and, when it does not repeat, the larger ones kept before it: `_confirm`)."""
        original = [dict(f) for f in faults]
        current = [dict(f) for f in faults]
        with self.budget.reserve(self.k if confirm else 0):  # the confirmation's k runs
            while not self.budget.exhausted():
                before = _key(current)
                current = self._fewer(current)
                for index in range(len(current)):
                    current = self._halve(
                        current, index, "duration_s", "shorter", self.min_duration_s
                    )
                    current = self._halve(current, index, "at_s", "earlier", self.earliest_s)
                    current = self._simplify(current, index)
                if _key(current) == before:
                    break
            stopped = BUDGET if self.budget.exhausted() else FIXED_POINT
        out = Shrunk(original, current, stopped, self.log)
        if confirm:
            self._confirm(out, original)
        return out

    def _confirm(self, out: Shrunk, original: list[Entry]) -> None:
        """Run the shrunk schedule k times more. A shrink keeps a candidate on need of k runs,
        and a real cluster can give that by luck: when the confirmation does not repeat it,
        confirm the schedule kept before it, back to the original, while the budget lasts, so
        that the result is the smallest schedule that reproduced twice, not none."""
        chain = [original, *(s.faults for s in self.log if s.kept and s.phase != "confirm")]
        tried: set[str] = set()
        for faults in reversed(chain):
            key = _key(faults)
            if key in tried:
                continue
            if self.budget.exhausted():
                return
            tried.add(key)
            repeats = repeat(
                self.oracle,
                faults,
                self.prop,
                k=self.k,
                need=self.need,
                budget=self.budget,
                early_stop=False,
            )
            note = "" if repeats.kept else "not repeated: the schedule kept before it is next"
            runs = [r.as_dict() for r in repeats.runs]
            self.log.append(Step("confirm", faults, runs, repeats.kept, note))
            if repeats.kept:
                out.confirmed, out.faults = repeats, [dict(f) for f in faults]
                return
            if out.confirmed is None:  # none repeats: the smallest one's runs are the answer
                out.confirmed = repeats

    # --- one candidate ---------------------------------------------------------------------
    def keeps(self, phase: str, candidate: list[Entry]) -> bool:
        """Whether `candidate` still violates the expectation (tried once per schedule)."""
        key = _key(candidate)
        if key in self._seen:
            return self._seen[key]
        found = self.problems(candidate)
        if found:
            self.log.append(Step(phase, candidate, [], False, f"refused: {found[0]}"))
            self._seen[key] = False
            return False
        if self.budget.exhausted():
            return False  # not known: neither kept nor remembered
        repeats = repeat(
            self.oracle, candidate, self.prop, k=self.k, need=self.need, budget=self.budget
        )
        kept = repeats.kept
        misses = len(repeats.runs) - repeats.hits
        note = "" if kept or misses > self.k - self.need else "budget spent before it was decided"
        self.log.append(Step(phase, candidate, [r.as_dict() for r in repeats.runs], kept, note))
        self._seen[key] = kept
        return kept

    # --- the passes ------------------------------------------------------------------------
    def _fewer(self, faults: list[Entry]) -> list[Entry]:
        """ddmin: try subsets, then complements, at a granularity that doubles."""
        items, n = faults, 2
        while len(items) >= 2 and not self.budget.exhausted():
            chunks = _split(items, n)
            for chunk in chunks:
                if self.keeps("fewer", chunk):
                    items, n = chunk, 2
                    break
            else:
                for i in range(len(chunks)):
                    rest = [f for j, c in enumerate(chunks) if j != i for f in c]
                    if len(chunks) > 2 and self.keeps("fewer", rest):
                        items, n = rest, max(n - 1, 2)
                        break
                else:
                    if n >= len(items):
                        break
                    n = min(len(items), 2 * n)
        return items

    def _halve(
        self, faults: list[Entry], index: int, key: str, phase: str, floor: float
    ) -> list[Entry]:
        """Halve `key` of one fault towards `floor` while the result is kept."""
        while not self.budget.exhausted():
            value = faults[index].get(key)
            if not isinstance(value, int | float) or value <= floor:
                return faults
            smaller = max(floor, round(floor + (value - floor) / 2, 1))
            if value - smaller < self.min_step_s:
                return faults  # a second either way says nothing new, and costs k cells
            candidate = _with(faults, index, {**faults[index], key: smaller})
            if not self.keeps(phase, candidate):
                return faults
            faults = candidate
        return faults

    def _simplify(self, faults: list[Entry], index: int) -> list[Entry]:
        """Each simpler target of one fault, simplest first; again from a kept one."""
        changed = True
        while changed and not self.budget.exhausted():
            changed = False
            for entry in self.simpler(faults[index]):
                candidate = _with(faults, index, entry)
                if self.keeps("simpler", candidate):
                    faults, changed = candidate, True
                    break
        return faults


def _split(items: list[Entry], n: int) -> list[list[Entry]]:
    """`items` in `n` contiguous chunks of near-equal size (none empty)."""
    n = min(n, len(items))
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return out


def _with(faults: list[Entry], index: int, entry: Entry) -> list[Entry]:
    return [entry if i == index else f for i, f in enumerate(faults)]


def _key(faults: list[Entry]) -> str:
    """A schedule's identity: its faults in time order (the order of the list is not a
    property of the schedule)."""
    rows = sorted(json.dumps(f, sort_keys=True) for f in faults)
    return "[" + ",".join(rows) + "]"
