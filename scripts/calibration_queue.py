"""The calibration still to run, and running it down (`make calibrate`).

    python scripts/calibration_queue.py [SPEC|SUITE ...] [--json]
    python scripts/calibration_queue.py [SPEC|SUITE ...] --run [--phase quiet|loaded|both]
                                        [--budget-minutes M] [--out DIR]

Without --run: per shipped experiment (or the given specs, or a suite's experiments), how many
runs its calibration record holds per cell against the goal (harness.suite.calibration_debt:
3 quiet, 3 beside 2 CPU burners) and the planned machine time to close the gap: the suite
estimate scaled by what the spec's recorded calibrations took against it. --json prints
the specs that still lack runs (the calibrate workflow's matrix).

With --run: `harness calibrate SPEC --record` for each batch, one at a time (a calibration
is only as quiet as the machine: never run two side by side), every quiet batch before any
beside burners; a batch that would end past --budget-minutes is skipped (the next that fits
runs). Exit 0 when every batch ran and recorded, 1 when a calibration found a bound failed or
thin (its own exit 1), 2 on bad input, 3 when a batch was left undecided or unbuilt or the
budget skipped one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "scripts"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from docs_calibration import debt_of, spec_files  # noqa: E402

from harness.errors import ConfigError  # noqa: E402
from harness.report.suite_summary import format_duration  # noqa: E402
from harness.suite.calibration_debt import (  # noqa: E402
    GOAL_BURNERS,
    GOAL_LOADED,
    GOAL_QUIET,
    Batch,
    SpecDebt,
)
from harness.suite.model import is_suite_file, load_suite  # noqa: E402

PHASES = {"quiet": (0,), "loaded": (GOAL_BURNERS,), "both": (0, GOAL_BURNERS)}


def specs_of(args: list[str]) -> list[Path]:
    """The spec files: the arguments (a suite gives its experiments), or every shipped one."""
    if not args:
        return spec_files(ROOT)
    out: list[Path] = []
    for arg in args:
        path = Path(arg)
        if not path.is_file():
            raise ConfigError(f"{arg}: no such spec or suite file")
        out += load_suite(path).files if is_suite_file(path) else [path]
    return out


def shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def table(debts: list[SpecDebt]) -> str:
    lines = [
        f"{'experiment':<30} {'cells':>5} {'quiet':>7} {'burners':>7} {'to close':>12} "
        f"{'x plan':>13}  notes",
    ]
    for d in debts:
        notes = []
        if d.quiet_not_passing:
            notes.append(f"{d.quiet_not_passing} quiet run(s) not passing")
        if d.loaded_failing:
            notes.append(f"{d.loaded_failing} run(s) beside burners failed")
        if d.loaded_not_the_load:
            notes.append(f"{d.loaded_not_the_load} run(s) beside burners unknown, not for the load")
        lines.append(
            f"{d.name:<30} {len(d.cells):>5} {d.quiet_runs:>4}/{GOAL_QUIET} "
            f"{d.loaded_runs:>5}/{GOAL_LOADED} {format_duration(d.planned_s()):>12} "
            f"{d.factors[0]:>6.2f} {d.factors[1]:>6.2f}  {'; '.join(notes)}"
        )
    total = sum(d.planned_s() for d in debts)
    quiet = sum(d.planned_s(0) for d in debts)
    lines.append(
        f"planned machine time to close: {format_duration(total)} ({format_duration(quiet)} quiet, "
        f"{format_duration(total - quiet)} beside {GOAL_BURNERS} burners), one calibration at a time;\n"
        "x plan: what the spec's recorded calibrations took over the suite estimate, quiet and "
        "beside burners (the plan above is scaled by it)"
    )
    return "\n".join(lines)


def run_batch(debt: SpecDebt, batch: Batch, out: Path, n: int) -> int:
    mode = f"load{batch.load}" if batch.load else "quiet"
    folder = out / f"{debt.name}-{mode}-{n}"
    cmd = [sys.executable, "-m", "harness", "calibrate", str(debt.file), *batch.args()]
    cmd += ["--record", "--out", str(folder)]
    print(f"[{time.strftime('%H:%M:%S')}] {' '.join(cmd[2:])}", flush=True)
    return subprocess.run(cmd, cwd=ROOT, check=False).returncode


def run_queue(debts: list[SpecDebt], phase: str, budget_s: float | None, out: Path) -> int:
    """Every batch in order; one that would end past the budget is skipped and the next that
    fits runs (a long spec does not idle the rest of a session)."""
    t0 = time.monotonic()
    worst = 0
    n = 0
    skipped = False
    for load in PHASES[phase]:
        for debt in debts:
            for batch in debt.batches(load):
                elapsed = time.monotonic() - t0
                if budget_s is not None and elapsed + batch.planned_s > budget_s:
                    print(
                        f"budget: {debt.name} {' '.join(batch.args())} (planned "
                        f"{format_duration(batch.planned_s)}) would end past it; skipped",
                        flush=True,
                    )
                    skipped = True
                    continue
                n += 1
                rc = run_batch(debt, batch, out, n)
                if rc == 2:
                    return 2
                worst = max(worst, rc)
    return 3 if skipped else worst


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="*", help="spec or suite files (default: every shipped)")
    parser.add_argument("--json", action="store_true", help="the specs still lacking runs")
    parser.add_argument("--run", action="store_true", help="run the batches")
    parser.add_argument("--phase", choices=sorted(PHASES), default="both")
    parser.add_argument("--budget-minutes", type=float, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "calibration-queue")
    args = parser.parse_args(argv)
    if args.budget_minutes is not None and args.budget_minutes <= 0:
        parser.error(f"--budget-minutes: must be above 0 (got {args.budget_minutes:g})")
    try:
        debts = [debt_of(p) for p in specs_of(args.specs)]
    except (ConfigError, ValueError) as exc:  # SpecError is a ConfigError; ValueError: a record
        print(f"error: {exc}", file=sys.stderr)
        return 2
    debts = [d for d in debts if d.cells]
    if args.json:
        lacking = [d for d in debts if any(d.batches(lo) for lo in PHASES[args.phase])]
        print(json.dumps([{"spec": shown(d.file), "name": d.name} for d in lacking]))
        return 0
    print(table(debts), flush=True)
    if not args.run:
        return 0
    budget = None if args.budget_minutes is None else args.budget_minutes * 60
    return run_queue(debts, args.phase, budget, args.out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
