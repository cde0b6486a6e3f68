"""The explore loop: draw a trial, run it, shrink the first violation of each expectation,
write its minimal-repro.yaml and shrink log, until the budget is spent.

Running is injected (`RunTrial`: harness.explore.trial runs a schedule as an ordinary cell
through the plan runner; a test passes a fake), so the loop itself starts nothing. Trials go
round the spec's matrix cells; each cell's schedules come from its own `explore:`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from harness.explore.budget import Budget
from harness.explore.coverage import coverage_table
from harness.explore.generator import Schedule, schedule_problems
from harness.explore.guide import Drawing, Guide
from harness.explore.oracle import failed_properties
from harness.explore.repro import Found, write_repro
from harness.explore.shrink import Shrinker
from harness.explore.states import first_reached
from harness.explore.summary import (
    SHRINK_LOG,
    CoverageRow,
    ExploreSummary,
    ShrunkRecord,
    TrialRecord,
    ViolationRecord,
    coverage_curve,
)
from harness.spec import Cell
from harness.spec.explore_roles import Entry, simpler_targets
from harness.spec.explore_rules import section
from harness.spec.problems import cell_view


@dataclass(frozen=True)
class TrialRun:
    """One schedule run once: its checks (name, verdict, detail), verdict and folder."""

    checks: list[dict[str, str]]
    verdict: str
    folder: str | None = None
    error: str | None = None
    reached: tuple[str, ...] = ()  # the "sometimes" states its folder shows (explore.states)
    injected: int | None = None  # faults its history shows injected (None: no history read)


RunTrial = Callable[[Cell, list[Entry], str], TrialRun]  # (cell, faults, label)
# The same, started and not waited for (harness.explore.workers: on another process).
StartTrial = Callable[[Cell, list[Entry], str], "Future[TrialRun]"]


@dataclass(frozen=True)
class _Running:
    cell: Cell
    schedule: Schedule
    origin: str
    result: Future[TrialRun]


@dataclass
class Search:
    cells: list[Cell]
    seed: int
    run: RunTrial
    out: Path
    budget: Budget
    k: int = 3
    need: int = 2
    max_trials: int | None = None  # drawn schedules at most (None: until the budget is spent)
    on_trial: Callable[[TrialRecord], None] = lambda record: None
    drawing: Drawing = "guided"  # harness.explore.guide; "random": the uniform baseline
    parallel: int = 1  # trials at a time (shrinking: one cell at a time, always)
    start: StartTrial | None = None  # starts a trial without waiting (needed for parallel > 1)

    def explore(self, summary: ExploreSummary) -> ExploreSummary:
        """Fill `summary` (spec, seed, started and budget already set) with what was found."""
        shrunk: dict[str, ViolationRecord] = {}  # each property's first violation, shrunk
        tried: list[tuple[str, str, str]] = []
        guides = {c.id: Guide(c.spec, self.seed, self.drawing) for c in self.cells}
        try:
            self._trials(summary, guides, shrunk, tried)
        except KeyboardInterrupt:
            summary.interrupted = True  # what was found so far is still written (the CLI)
            raise
        finally:
            summary.coverage = [CoverageRow.model_validate(r) for r in coverage_table(tried)]
            summary.reached = first_reached([(t.trial, t.reached) for t in summary.trials])
            summary.curve = coverage_curve(summary.trials)
            summary.budget = {
                **self.budget.describe(),
                "max_trials": self.max_trials,
                "drawing": self.drawing,
                "parallel": self.parallel,
            }
        return summary

    def _trials(
        self,
        summary: ExploreSummary,
        guides: dict[str, Guide],
        shrunk: dict[str, ViolationRecord],
        tried: list[tuple[str, str, str]],
    ) -> None:
        """Up to `parallel` trials at a time. Trial n is drawn once trials 0..n-lag have
        ended, knowing exactly their outcomes, whichever ended first (the same seed gives the
        same schedules): lag 1 one at a time; side by side, parallel + 1, so that a worker
        whose trial ended draws its next one at once instead of waiting for the other's
        older trial (which kept the two in step: each pair as long as its slower trial).
        Records are made in trial order. A violation stops the drawing; the trials still
        running end, then each new violation is shrunk with no workload beside it (a shrink
        candidate's reproduction is not to depend on a neighbour's load)."""
        width = max(1, self.parallel)
        lag = 1 if width == 1 else width + 1
        running: dict[int, _Running] = {}
        ended: dict[int, tuple[_Running, TrialRun]] = {}
        outcomes: list[tuple[_Running, TrialRun]] = []  # recorded, in trial order
        seen: dict[str, set[str]] = {c.id: set() for c in self.cells}
        to_shrink: list[tuple[Cell, ViolationRecord]] = []
        trial = taught = 0
        while True:
            while len(outcomes) in ended:  # the next trial in order has ended: its record
                one, result = ended.pop(len(outcomes))
                outcomes.append((one, result))
                tried += one.schedule.tried()
                self._record(summary, len(outcomes) - 1, one, result, seen, shrunk, to_shrink)
            while (
                not to_shrink
                and len(running) < width
                and len(outcomes) > trial - lag
                and not self.budget.exhausted(len(running))
                and (self.max_trials is None or trial < self.max_trials)
            ):
                while taught <= trial - lag:  # the outcomes this trial is drawn knowing
                    one, result = outcomes[taught]
                    guides[one.cell.id].record(one.schedule, result.reached)
                    taught += 1
                cell = self.cells[trial % len(self.cells)]
                schedule, origin = guides[cell.id].next(trial)
                started = self._start(cell, schedule.faults, f"trial-{trial:03d}")
                running[trial] = _Running(cell, schedule, origin, started)
                trial += 1
            if not running:
                if not to_shrink:
                    return
                for cell, violation in to_shrink:
                    if not self.budget.exhausted():
                        violation.shrunk = self._shrink(
                            cell, violation.trial, violation.property, violation.original
                        )
                    confirmed = violation.shrunk is not None and violation.shrunk.file is not None
                    (summary.violations if confirmed else summary.unconfirmed).append(violation)
                to_shrink.clear()
                continue
            wait([r.result for r in running.values()], return_when=FIRST_COMPLETED)
            for n in [n for n, r in running.items() if r.result.done()]:
                one = running.pop(n)
                ended[n] = (one, one.result.result())
                self.budget.spend()

    def _record(
        self,
        summary: ExploreSummary,
        n: int,
        one: _Running,
        result: TrialRun,
        seen: dict[str, set[str]],
        shrunk: dict[str, ViolationRecord],
        to_shrink: list[tuple[Cell, ViolationRecord]],
    ) -> None:
        """Trial n's record (its states new to its cell: as the guide will count them); its
        violations not shrunk yet go to `to_shrink`."""
        cell = one.cell
        props = failed_properties(result.checks, list(cell.spec.expect))
        new = sorted(set(result.reached) - seen[cell.id])
        seen[cell.id] |= set(new)
        record = TrialRecord(
            trial=n,
            cell=cell.id,
            faults=one.schedule.faults,
            verdict=result.verdict,
            violated=props,
            folder=result.folder,
            error=result.error,
            reached=list(result.reached),
            injected=result.injected,
            origin=one.origin,
            new_states=new,
            cells_spent=self.budget.spent,
        )
        summary.trials.append(record)
        self.on_trial(record)
        for prop in props:
            if prop in shrunk:  # shrunk once: a later trial only says it again
                shrunk[prop].seen_again.append(n)
                continue
            shrunk[prop] = ViolationRecord(
                property=prop, trial=n, cell=cell.id, original=one.schedule.faults
            )
            to_shrink.append((cell, shrunk[prop]))

    def _start(self, cell: Cell, faults: list[Entry], label: str) -> Future[TrialRun]:
        """The trial under way: on a worker (`start`), else run here and now."""
        if self.start is not None:
            return self.start(cell, faults, label)
        done: Future[TrialRun] = Future()
        done.set_result(self.run(cell, faults, label))
        return done

    def _shrink(self, cell: Cell, trial: int, prop: str, faults: list[Entry]) -> ShrunkRecord:
        ex = section(cell.spec)
        view = cell_view(cell.spec.model_copy(update={"faults": []}))
        count = iter(range(1, 1_000_000))

        def oracle(candidate: list[Entry]) -> list[dict[str, str]]:
            label = f"trial-{trial:03d}-shrink-{next(count):03d}"
            return self.run(cell, candidate, label).checks

        shrinker = Shrinker(
            oracle,
            prop,
            k=self.k,
            need=self.need,
            budget=self.budget,
            problems=lambda candidate: schedule_problems(cell.spec, candidate),
            simpler=lambda entry: simpler_targets(entry, view),
            min_duration_s=ex.duration_s[0],
            earliest_s=ex.quiet.start_s,
        )
        result = shrinker.run(faults)
        folder = self.out / "violations" / f"trial-{trial:03d}-{prop}"
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / SHRINK_LOG
        steps = [step.as_dict() for step in result.log]
        log.write_text(json.dumps(steps, indent=2) + "\n", encoding="utf-8")
        file = None
        confirmed = result.confirmed
        if confirmed is not None and confirmed.kept:
            found = Found(
                prop=prop,
                seed=self.seed,
                explore_seed=self.seed,
                trial=trial,
                cell=cell.id,
                original=faults,
                faults=result.faults,
                reproductions=confirmed,
                date=date.today().isoformat(),
            )
            file = str(write_repro(folder, cell.spec, found))
        return ShrunkRecord(
            faults=result.faults,
            reproduced=confirmed.reproduced if confirmed is not None else "0/0",
            file=file,
            stopped=result.stopped,
            log=str(log),
        )
