"""A suite confirms a flip before it alarms (`run SUITE --confirm-flips N`, default 1).

After an experiment ran, each of its cells whose verdict flipped (harness.results.flips)
against the cell's previous run of the suite in history.parquet is run again with the same
seed and the same fault schedule: one run of the experiment holding only its flipped cells,
into `<suite folder>/confirm/`, up to N times (a cell a re-run contradicted is not run
again). The experiment's record gets `confirmations`: one entry per flipped cell

    {"cell", "verdict", "previous_verdict", "previous_run",
     "reruns": [{"run_dir", "run_id", "verdict", "error"}], "status"}

with status confirmed | flaky | unconfirmed. The experiment's own run folder is untouched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.experiment import Plan
from harness.results.flips import CONFIRM_FLIPS, confirmation, contradicts, is_flip
from harness.results.layout import figure_history
from harness.results.verdicts import as_verdict
from harness.suite.changes import earlier_runs, history_records
from harness.suite.compare import Key
from harness.suite.history import read_history

__all__ = ["CONFIRM_FLIPS", "confirm_flips", "last_verdicts", "previous_verdicts"]
Previous = Mapping[Key, tuple[str, str]]  # (experiment, cell) -> (verdict, suite run)
CellDone = Callable[[dict[str, Any]], None]
RunExperiment = Callable[[Plan, Path, CellDone], tuple[Path, dict[str, Any]]]


def last_verdicts(rows: Sequence[Mapping[str, Any]], suite: str) -> dict[Key, tuple[str, str]]:
    """Each cell's verdict in the most recent run of `suite` that had it, with that run."""
    order = {run: i for i, run in enumerate(earlier_runs(rows, suite, "", None))}
    out: dict[Key, tuple[str, str]] = {}
    ranked = sorted(
        (r for r in rows if r.get("suite_run") in order), key=lambda r: order[r["suite_run"]]
    )
    for row in ranked:
        key = (str(row.get("experiment")), str(row.get("cell")))
        out[key] = (as_verdict(row.get("verdict")), str(row["suite_run"]))
    return out


def previous_verdicts(out: Path, suite: str) -> dict[Key, tuple[str, str]]:
    """last_verdicts of `<out>/history.parquet` (none yet: {}); raises what reading raises."""
    return last_verdicts(history_records(read_history(figure_history(out))), suite)


def _rerun_plan(plan: Plan, cell_ids: list[str]) -> Plan:
    """The experiment's plan narrowed to these cells: same seed, same fault schedules."""
    chosen = [c for c in plan.cells if c.id in cell_ids]
    return dataclasses.replace(
        plan,
        cells=chosen,
        schedules={c.id: plan.schedules[c.id] for c in chosen},
        cells_filter=",".join(c.id for c in chosen),
    )


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"


def confirm_flips(
    name: str,
    plan: Plan,
    record: dict[str, Any],
    previous: Previous,
    times: int,
    run_experiment: RunExperiment,
    folder: Path,
    relative: Callable[[Path], str],
    say: Callable[[str], None],
) -> list[dict[str, Any]]:
    """Run the experiment's flipped cells again (at most `times` runs) and set the record's
    `confirmations` (returned). A re-run that raises leaves its cells `unknown` (with the
    error) for that round; Ctrl-C propagates with what was confirmed so far recorded."""
    planned = {c.id for c in plan.cells}
    entries: list[dict[str, Any]] = []
    for cell in record.get("cells") or []:
        cell_id, verdict = str(cell.get("cell")), as_verdict(cell.get("verdict"))
        before = previous.get((name, cell_id))
        if before is not None and cell_id in planned and is_flip(before[0], verdict):
            entries.append(
                {
                    "cell": cell_id,
                    "verdict": verdict,
                    "previous_verdict": before[0],
                    "previous_run": before[1],
                    "reruns": [],
                    "status": None,
                }
            )
    record["confirmations"] = entries
    for round_ in range(1, times + 1):
        todo = [
            e
            for e in entries
            if not any(contradicts(e["verdict"], r["verdict"]) for r in e["reruns"])
        ]
        if not todo:
            break
        ids = [e["cell"] for e in todo]
        for e in todo:
            say(
                f"confirm [{round_}/{times}] {name} {e['cell']}: {e['previous_verdict']} → "
                f"{e['verdict']} (previous run {e['previous_run']}), running it again, seed {plan.seed}"
            )
        try:
            run_dir, summary = run_experiment(_rerun_plan(plan, ids), folder, lambda _: None)
        except KeyboardInterrupt:
            _settle(entries)
            raise
        except Exception as exc:  # this round is undecided; the next may still run
            for e in todo:
                e["reruns"].append(
                    {
                        "run_dir": None,
                        "run_id": None,
                        "verdict": "unknown",
                        "error": _first_line(exc),
                    }
                )
            continue
        verdicts = {
            str(c.get("cell")): as_verdict(c.get("verdict")) for c in summary.get("cells") or []
        }
        for e in todo:
            e["reruns"].append(
                {
                    "run_dir": relative(run_dir),
                    "run_id": summary.get("run_id", run_dir.name),
                    "verdict": verdicts.get(e["cell"], "unknown"),
                    "error": None,
                }
            )
    _settle(entries)
    for e in entries:
        shown = ", ".join(r["verdict"] for r in e["reruns"]) or "none"
        say(
            f"confirm {name} {e['cell']}: {e['previous_verdict']} → {e['verdict']}, re-run(s) {shown}: {e['status']}"
        )
    return entries


def _settle(entries: list[dict[str, Any]]) -> None:
    for e in entries:
        e["status"] = confirmation(e["verdict"], [r["verdict"] for r in e["reruns"]])
