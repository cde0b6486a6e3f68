"""The explore loop: draw a trial, run it, shrink the first violation of each expectation,
write its minimal-repro.yaml and shrink log, until the budget is spent.

Running is injected (`RunTrial`: harness.explore.trial runs a schedule as an ordinary cell
through the plan runner; a test passes a fake), so the loop itself starts nothing. Trials go
round the spec's matrix cells; each cell's schedules come from its own `explore:`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from harness.explore.budget import Budget
from harness.explore.coverage import coverage_table
from harness.explore.generator import schedule_problems
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
            }
        return summary

    def _trials(
        self,
        summary: ExploreSummary,
        guides: dict[str, Guide],
        shrunk: dict[str, ViolationRecord],
        tried: list[tuple[str, str, str]],
    ) -> None:
        trial = 0
        while not self.budget.exhausted() and (self.max_trials is None or trial < self.max_trials):
            cell = self.cells[trial % len(self.cells)]
            schedule, origin = guides[cell.id].next(trial)
            result = self.run(cell, schedule.faults, f"trial-{trial:03d}")
            self.budget.spend()
            tried += schedule.tried()
            props = failed_properties(result.checks, list(cell.spec.expect))
            record = TrialRecord(
                trial=trial,
                cell=cell.id,
                faults=schedule.faults,
                verdict=result.verdict,
                violated=props,
                folder=result.folder,
                error=result.error,
                reached=list(result.reached),
                injected=result.injected,
                origin=origin,
                new_states=guides[cell.id].record(schedule, result.reached),
                cells_spent=self.budget.spent,
            )
            summary.trials.append(record)
            self.on_trial(record)
            for prop in props:
                if prop in shrunk:  # shrunk once: a later trial only says it again
                    shrunk[prop].seen_again.append(trial)
                    continue
                violation = ViolationRecord(
                    property=prop, trial=trial, cell=cell.id, original=schedule.faults
                )
                if not self.budget.exhausted():
                    violation.shrunk = self._shrink(cell, trial, prop, schedule.faults)
                shrunk[prop] = violation
                confirmed = violation.shrunk is not None and violation.shrunk.file is not None
                (summary.violations if confirmed else summary.unconfirmed).append(violation)
            trial += 1

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
