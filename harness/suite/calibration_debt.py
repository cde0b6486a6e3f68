"""What calibration each shipped experiment still lacks, and the runs that would close it.

Issue 40's goal for every cell with a numeric bound: GOAL_QUIET runs on a quiet machine and
GOAL_LOADED beside at least GOAL_BURNERS CPU burners, all in the spec's calibration record
(experiments/calibrations/<spec name>.json). Calibrating everything takes many machine hours,
far more than a working session, so the gap is a figure like any other: per cell, the runs
recorded; per spec, the `harness calibrate` batches that would close it and their planned
machine time, which `scripts/calibration_queue.py` prints and runs down (sequentially here,
or one spec per job in the calibrate workflow).

The plan is the suite estimate (harness.suite.estimate) scaled by what the spec's own
calibrations took against that estimate (`duration_s` over their plan), beside burners and
quiet apart: the estimate plans a healthy run's phases and knows nothing of a check that reads
five million records (high-volume took 6.2x its estimate) or of burners slowing every phase.
With no recorded duration of one load class, the other's factor; with none at all, 1.

Pure: the record is read by the caller; cells come from the spec's plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.spec import Cell
from harness.suite.estimate import EXPERIMENT_S, estimate_cell_s
from harness.verdict.calibration import LOAD, has_numeric_bound

GOAL_QUIET = 3
GOAL_LOADED = 3
GOAL_BURNERS = 2
# A run beside burners that ended `unknown` for a reason other than the load (a missing jar, a
# fault that did not fire): it says nothing of the bounds under noise, so it does not count.
NOT_THE_LOAD = "unknown (not the load)"


@dataclass(frozen=True)
class CellRuns:
    """A cell's recorded runs: the verdicts quiet and beside >= GOAL_BURNERS burners."""

    cell: str
    quiet: tuple[str, ...]
    loaded: tuple[str, ...]
    planned_s: float  # one run of the cell, as the suite estimate plans it

    @property
    def quiet_counted(self) -> int:
        """Quiet runs that passed: the goal is 3 passes, so any other verdict is run again."""
        return sum(1 for v in self.quiet if v == "pass")

    @property
    def missing_quiet(self) -> int:
        return max(0, GOAL_QUIET - self.quiet_counted)

    @property
    def loaded_counted(self) -> int:
        """Runs beside burners that passed or were `unknown` for the load; a failed one (it
        needs a fix and new runs) or one `unknown` for another reason is run again."""
        return sum(1 for v in self.loaded if v not in ("fail", NOT_THE_LOAD))

    @property
    def missing_loaded(self) -> int:
        return max(0, GOAL_LOADED - self.loaded_counted)


@dataclass(frozen=True)
class Batch:
    """One `harness calibrate` call: `runs` runs of `cells` (all of the spec's: empty)."""

    load: int
    runs: int
    cells: tuple[str, ...]
    planned_s: float

    def args(self) -> list[str]:
        out = ["--runs", str(self.runs)]
        if self.load:
            out += ["--load", str(self.load)]
        if self.cells:
            out += ["--cells", ",".join(self.cells)]
        return out


@dataclass(frozen=True)
class SpecDebt:
    name: str
    file: Path
    cells: tuple[CellRuns, ...]  # the cells with a numeric bound
    factors: tuple[float, float] = (1.0, 1.0)  # measured over planned: quiet, beside burners

    def factor(self, load: int) -> float:
        return self.factors[1 if load else 0]

    def batches(self, load: int) -> list[Batch]:
        """The calls that bring every cell to the goal: cells lacking the same number of runs
        share one call (most missing first)."""
        missing = {c.cell: (c.missing_loaded if load else c.missing_quiet) for c in self.cells}
        out = []
        for runs in sorted({m for m in missing.values() if m}, reverse=True):
            chosen = [c for c in self.cells if missing[c.cell] == runs]
            ids = () if len(chosen) == len(self.cells) else tuple(c.cell for c in chosen)
            planned = runs * sum(c.planned_s for c in chosen) + EXPERIMENT_S
            out.append(Batch(load, runs, ids, planned * self.factor(load)))
        return out

    @property
    def quiet_runs(self) -> int:
        """The fewest quiet runs that passed any cell has."""
        return min((c.quiet_counted for c in self.cells), default=GOAL_QUIET)

    @property
    def loaded_runs(self) -> int:
        return min((c.loaded_counted for c in self.cells), default=GOAL_LOADED)

    @property
    def loaded_not_the_load(self) -> int:
        """Runs beside burners `unknown` for another reason than the load (not counted)."""
        return sum(1 for c in self.cells for v in c.loaded if v == NOT_THE_LOAD)

    @property
    def quiet_not_passing(self) -> int:
        """Quiet runs that did not pass (issue 40: every experiment passes 3/3 quiet)."""
        return sum(1 for c in self.cells for v in c.quiet if v != "pass")

    @property
    def loaded_failing(self) -> int:
        """Runs beside burners that failed (they must pass or be `unknown`)."""
        return sum(1 for c in self.cells for v in c.loaded if v == "fail")

    def planned_s(self, load: int | None = None) -> float:
        """Machine time to close the gap (quiet, beside burners, or both: None)."""
        loads = (0, GOAL_BURNERS) if load is None else (load,)
        return sum(b.planned_s for lo in loads for b in self.batches(lo))


def _is_loaded(cal: Mapping[str, Any]) -> bool | None:
    """Quiet (False), beside >= GOAL_BURNERS burners (True), or neither (None: fewer burners
    are not the noise the nightly must stand)."""
    load = int(cal.get("load") or 0)
    return None if 0 < load < GOAL_BURNERS else load > 0


def measured_factors(
    record: Mapping[str, Any] | None, planned_by_cell: Mapping[str, float]
) -> tuple[float, float]:
    """What the record's calibrations took over what the estimate plans for them (the
    same runs of the same cells), quiet and beside burners; a class with no duration borrows
    the other's, and with neither the factor is 1."""
    took = [0.0, 0.0]
    plan = [0.0, 0.0]
    for cal in (record or {}).get("calibrations", []):
        loaded = _is_loaded(cal)
        ids = [str(c.get("cell")) for c in cal.get("cells", [])]
        duration = cal.get("duration_s")
        if loaded is None or not duration or not ids or any(i not in planned_by_cell for i in ids):
            continue
        took[loaded] += float(duration)
        plan[loaded] += int(cal.get("runs") or 1) * sum(planned_by_cell[i] for i in ids)
        plan[loaded] += EXPERIMENT_S
    own = [t / p if p else None for t, p in zip(took, plan, strict=True)]
    quiet = own[0] or own[1] or 1.0
    loaded_f = own[1] or own[0] or 1.0
    return round(quiet, 2), round(loaded_f, 2)


def recorded_runs(record: Mapping[str, Any] | None, cell_id: str) -> tuple[list[str], list[str]]:
    """The cell's verdicts in the record: quiet runs, and runs beside >= GOAL_BURNERS burners
    (fewer burners count as neither: they are not the noise the nightly must stand). A run
    beside burners `unknown` for another reason than the load is NOT_THE_LOAD; records from
    before `unknown_why` (2026-11-29) were read by hand and count as they are."""
    quiet: list[str] = []
    loaded: list[str] = []
    for cal in (record or {}).get("calibrations", []):
        is_loaded = _is_loaded(cal)
        if is_loaded is None:
            continue
        for cell in cal.get("cells", []):
            if cell.get("cell") != cell_id:
                continue
            verdicts = [str(v) for v in cell.get("verdicts") or []]
            if not is_loaded:
                quiet.extend(verdicts)
                continue
            why = list(cell.get("unknown_why") or [])
            why += [None] * (len(verdicts) - len(why))
            loaded.extend(
                NOT_THE_LOAD if v == "unknown" and w not in (None, LOAD) else v
                for v, w in zip(verdicts, why, strict=False)
            )
    return quiet, loaded


def spec_debt(
    name: str, file: Path, cells: Sequence[Cell], record: Mapping[str, Any] | None
) -> SpecDebt:
    planned = {cell.id: estimate_cell_s(cell.spec) for cell in cells}
    rows = []
    for cell in cells:
        if not has_numeric_bound(cell):
            continue
        quiet, loaded = recorded_runs(record, cell.id)
        rows.append(CellRuns(cell.id, tuple(quiet), tuple(loaded), planned[cell.id]))
    return SpecDebt(name, file, tuple(rows), measured_factors(record, planned))
