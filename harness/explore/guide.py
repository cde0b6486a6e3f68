"""Drawing guided by what the trials reached (coverage-guided fuzzing; Antithesis' "sometimes"
states): breadth first, then the schedules that found something new, mutated.

* Breadth: each slot takes the least-tried target role first (one node, a minority, a
  majority, the leader, the controller, the whole site, a client, a cluster operation: the
  blast radius), then the least-tried kind on it, ties drawn from the trial's seeded rng. So
  every role is tried within the first few trials and every kind soon after, whatever the
  seed, instead of as often as the (kind, role) pairs that happen to exist.
* Corpus: a trial whose folder reached a state none before it had (harness.explore.states)
  keeps its schedule. Once every role was tried, half the trials mutate a corpus schedule (shift a fault,
  stretch or shorten it, drop one, add one, move one to another role of its kind, draw its
  options again) instead of
  drawing afresh: the neighbourhood of a new state is where the next one tends to be.

Reproducible: trial n's rng is seeded from (seed, n) as the plain drawing's, the counts depend
only on the trials drawn before it and the corpus only on the outcomes recorded before it is
drawn (in trial order: harness.explore.search), so the same seed, outcomes and `--parallel`
give the same schedules. `random` drawing (the `--drawing random` baseline) keeps today's
uniform choice of (kind, role) and no corpus.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from harness.explore.coverage import phase_of
from harness.explore.generator import Drawer, Drawn, Pair, Schedule, fresh, uniform
from harness.faults.registry import is_operation
from harness.spec import Spec
from harness.spec.explore_roles import Entry, role_entries
from harness.spec.explore_rules import fault_window, section

Drawing = Literal["guided", "random"]
DRAWINGS: tuple[Drawing, ...] = ("guided", "random")
MUTATE_P = 0.5  # of the trials once the corpus holds a schedule
MUTATIONS = ("shift", "stretch", "drop", "add", "retarget", "reoption")
SHIFT_S = (1.0, 10.0)  # a shift moves a fault by this much, either way
MAX_MUTATION_TRIES = 8


@dataclass
class Guide:
    """One cell's drawing across an explore run: what was tried, the corpus, the states seen."""

    spec: Spec
    seed: int
    drawing: Drawing = "guided"
    roles: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    corpus: list[Schedule] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    drawer: Drawer = field(init=False)

    def __post_init__(self) -> None:
        self.drawer = Drawer.of(self.spec)

    def next(self, trial: int) -> tuple[Schedule, str]:
        """Trial `trial`'s schedule and how it came: "fresh" or "<mutation> of trial <n>".
        What it tries is counted now, not when its outcome is recorded: with trials run side
        by side (`explore --parallel`), the next one is drawn before this one has ended, and
        breadth must still not draw its role again."""
        schedule, origin = self._draw(trial)
        for d in schedule.drawn:
            self.roles[d.role] += 1
            self.kinds[d.kind] += 1
        return schedule, origin

    def _draw(self, trial: int) -> tuple[Schedule, str]:
        rng = random.Random(f"explore:{self.seed}:{trial}")
        if self.drawing == "random":
            return fresh(self.drawer, rng, trial, uniform), "fresh"
        if self.corpus and self.breadth_done() and rng.random() < MUTATE_P:
            parent = rng.choice(self.corpus)
            for _ in range(MAX_MUTATION_TRIES):
                how = rng.choice(MUTATIONS)
                drawn = self._mutate(how, list(parent.drawn), rng)
                if drawn is not None and drawn != list(parent.drawn):
                    return Schedule(trial, tuple(drawn)), f"{how} of trial {parent.trial}"
        return fresh(self.drawer, rng, trial, self.least_tried), "fresh"

    def breadth_done(self) -> bool:
        """Every role this cell draws on tried once: only then may trials mutate the corpus."""
        return all(self.roles[role] for _, role in self.drawer.pairs)

    def record(self, schedule: Schedule, reached: Iterable[str]) -> list[str]:
        """Keep the trial's schedule if it reached a state none before did (its faults were
        counted when drawn). Returns those new states."""
        new = sorted(set(reached) - self.seen)
        self.seen |= set(new)
        if new and schedule.drawn and self.drawing == "guided":
            self.corpus.append(schedule)
        return new

    def least_tried(self, fits: list[Pair], drawn: list[Drawn], rng: random.Random) -> Pair:
        """The least-tried role among these pairs, then its least-tried kind (the trials
        before, and this schedule's faults so far)."""
        roles = self.roles + Counter(d.role for d in drawn)
        kinds = self.kinds + Counter(d.kind for d in drawn)
        low = min(roles[r] for _, r in fits)
        role = rng.choice(sorted({r for _, r in fits if roles[r] == low}))
        on_role = [p for p in fits if p[1] == role]
        fewest = min(kinds[k] for k, _ in on_role)
        return rng.choice([p for p in on_role if kinds[p[0]] == fewest])

    # --- mutations -------------------------------------------------------------------------
    def _mutate(self, how: str, drawn: list[Drawn], rng: random.Random) -> list[Drawn] | None:
        """The schedule with one mutation, or None when it cannot apply or breaks a rule."""
        if not drawn:
            return None
        i = rng.randrange(len(drawn))
        out: list[Drawn] | None
        if how == "drop":
            out = drawn[:i] + drawn[i + 1 :] if len(drawn) > 1 else None
        elif how == "add":
            start, end = fault_window(self.spec)
            one = self.drawer.one(rng, _tenth(rng.uniform(start, end)), drawn, self.least_tried)
            out = None if one is None else sorted([*drawn, one], key=_at)
        else:
            one = self._changed(how, drawn[i], rng)
            out = None if one is None else sorted([*drawn[:i], one, *drawn[i + 1 :]], key=_at)
        return out if out is not None and self.drawer.fits(out) else None

    def _changed(self, how: str, d: Drawn, rng: random.Random) -> Drawn | None:
        ex = section(self.spec)
        start, end = fault_window(self.spec)
        at = _at(d)
        duration = d.entries[0].get("duration_s")
        if how == "shift":
            at = _tenth(min(end, max(start, at + rng.choice((-1, 1)) * rng.uniform(*SHIFT_S))))
        elif how == "stretch":
            if duration is None:
                return None
            low, high = ex.duration_s
            duration = _tenth(min(high, max(low, float(duration) * rng.uniform(0.5, 2.0))))
        elif how == "reoption":  # the same fault, its options drawn again (its module's ranges)
            made = role_entries(d.kind, d.role, self.drawer.cell, rng)
            if len(made) != len(d.entries):
                return None
            entries = tuple(
                _placed({**e, "target": old["target"]}, at, duration)
                for e, old in zip(made, d.entries, strict=True)
            )
            return Drawn(d.kind, d.role, d.phase, entries)
        elif how == "retarget":
            roles = [r for k, r in self.drawer.pairs if k == d.kind and r != d.role]
            if not roles:
                return None
            role = rng.choice(roles)
            made = role_entries(d.kind, role, self.drawer.cell, rng)
            entries = tuple(
                _placed(e, at, None if is_operation(d.kind) else duration) for e in made
            )
            return Drawn(d.kind, role, d.phase, entries)
        entries = tuple(_placed(e, at, duration) for e in d.entries)
        return Drawn(d.kind, d.role, phase_of(at, self.spec.producer.planned_duration_s), entries)


def _at(d: Drawn) -> float:
    return float(d.entries[0]["at_s"])


def _placed(entry: Entry, at_s: float, duration_s: object) -> Entry:
    """The entry at `at_s` lasting `duration_s` (None: an operation), keys in spec order."""
    out: Entry = {"at_s": at_s, "kind": entry["kind"], "target": entry["target"]}
    if duration_s is not None:
        out["duration_s"] = duration_s
    out.update({k: v for k, v in entry.items() if k not in (*out, "duration_s")})
    return out


def _tenth(seconds: float) -> float:
    return round(seconds, 1)
