"""Run a planned suite: each experiment into one suite folder, one summary, history appended.

```
<out>/<UTC start>-suite-<name>/
  suite.yaml              the suite as planned: seed, axes, each experiment's file, cells, seed
  summary.json            {suite, run_id, verdict, file, seed, started, duration_s, planned_s,
                           axes, experiments: [{experiment, file, run_dir, run_id, seed, started,
                           verdict, duration_s, planned_s, planned_by_cell, added, kept,
                           impossible, error, cells: [cell summaries]}], left_out}
  summary.md, junit.xml   one <testsuite> per experiment, one <testcase> per cell
  experiments/<run-id>/   each experiment's own run folder (harness.experiment.run_plan)
<out>/history.parquet     one row per cell, appended (harness.suite.history)
<out>/index.html          the latest run, what changed, trends (harness.suite.index)
```

The experiment runner is a parameter (`RunExperiment`): the CLI passes `run_plan` with its
progress display, unit tests pass a fake that writes hand-built run folders.
"""

from __future__ import annotations

import functools
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from harness._version import revision
from harness.errors import ConfigError
from harness.experiment import Plan
from harness.report.suite_summary import format_duration, write_suite_summary
from harness.results.layout import ResultFolderError, SuitePaths, figure_history, results_index
from harness.suite.confirm import CONFIRM_FLIPS, Previous, confirm_flips, previous_verdicts
from harness.suite.history import append_history, history_rows
from harness.suite.index import write_index
from harness.suite.plan import ExperimentPlan, SuitePlan
from harness.suite.shards import merged_info, read_shards, unknown_cell
from harness.verdict.cell_verdict import cell_params

CellDone = Callable[[dict[str, Any]], None]
# (the experiment's plan, the folder its run folder goes in, called with each cell's summary)
#   -> (its run folder, its summary.json content)
RunExperiment = Callable[[Plan, Path, CellDone], tuple[Path, dict[str, Any]]]
Say = Callable[[str], None]


@dataclass
class SuiteResult:
    folder: Path
    summary: dict[str, Any]
    history: Path | None  # the history file appended to (None: not appended)
    history_error: str = ""  # why appending failed ("" when it did not)
    index: Path | None = None  # <out>/index.html written after the run (None: not written)
    index_error: str = ""  # why it was not written


def new_suite_run_id(name: str) -> str:
    return f"{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}-suite-{name}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"


def _impossible(e: ExperimentPlan) -> list[dict[str, Any]]:
    return [{"params": i.params, "reason": i.reason} for i in e.impossible]


def planned_suite_yaml(plan: SuitePlan) -> str:
    """suite.yaml of a suite folder: what was planned, enough to read the run without the file."""
    suite = plan.suite
    data = {
        "suite": suite.name,
        "file": suite.shown(suite.path),
        "root": str(suite.root),
        "seed": plan.seed,
        "axes": {a.key: list(a.values) for a in suite.axes},
        **({"replace": [a.key for a in suite.axes if a.replace]} if suite.model.replace else {}),
        "planned_s": round(plan.total_planned_s, 1),
        **(
            {"shard": plan.shard.as_json(), "shard_planned_s": round(plan.planned_s, 1)}
            if plan.shard is not None
            else {}
        ),
        "experiments": [
            {
                "experiment": e.name,
                "file": e.file,
                "seed": e.plan.seed,
                "added": e.added,
                "kept": e.kept,
                "replaced": e.replaced,
                "cells": [c.id for c in e.cells],
                "impossible": _impossible(e),
                **({"left_out": e.left_out} if e.left_out else {}),
                **({"shard": e.shard} if plan.shard is not None else {}),
            }
            for e in plan.experiments
        ],
    }
    header = f"# suite {suite.name}: planned by kafka-chaos, seed {plan.seed}\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _stub(cell: Any, detail: str) -> dict[str, Any]:
    return unknown_cell(cell.id, detail, cell_params(cell))


class _Run:
    """The running suite's bookkeeping: records, cell counts, the summary written at the end."""

    def __init__(self, plan: SuitePlan, folder: Path, run_id: str, say: Say) -> None:
        self.plan, self.folder, self.say = plan, folder, say
        self.total = plan.cell_count
        self.done = 0
        self.t0 = time.monotonic()
        self.info: dict[str, Any] = {
            "suite": plan.suite.name,
            "run_id": run_id,
            "file": plan.suite.shown(plan.suite.path),
            "seed": plan.seed,
            "started": _now(),
            "duration_s": None,
            "harness": revision(),  # the code that runs and judges the night
            "planned_s": round(plan.planned_s, 1),
            "axes": {a.key: list(a.values) for a in plan.suite.axes},
            **({"shard": plan.shard.as_json()} if plan.shard is not None else {}),
            "experiments": [],
            "left_out": [
                {
                    "experiment": e.name,
                    "file": e.file,
                    "reason": e.left_out,
                    "impossible": _impossible(e),
                }
                for e in plan.left_out
            ],
        }

    def record(self, e: ExperimentPlan) -> dict[str, Any]:
        record: dict[str, Any] = {
            "experiment": e.name,
            "file": e.file,
            "run_dir": None,
            "run_id": None,
            "seed": e.plan.seed,
            "started": _now(),
            "duration_s": None,
            "planned_s": round(e.planned_s, 1),
            "planned_by_cell": {k: round(v, 1) for k, v in e.estimates.items()},
            "added": e.added,
            "kept": e.kept,
            "replaced": e.replaced,
            "impossible": _impossible(e),
            "error": None,
            "cells": [],
        }
        self.info["experiments"].append(record)
        return record

    def announce(self, index: int, e: ExperimentPlan) -> None:
        elapsed = time.monotonic() - self.t0
        left = sum(x.planned_s for x in self.plan.runnable[index:])
        self.say(
            f"[{index + 1}/{len(self.plan.runnable)}] {e.name} ({e.file}): {len(e.cells)} cell(s), "
            f"planned {format_duration(e.planned_s)} — suite: {self.done}/{self.total} cells done, "
            f"{format_duration(elapsed)} elapsed, ~{format_duration(left)} planned left"
        )

    def cell_done(self, e: ExperimentPlan, record: dict[str, Any], summary: dict[str, Any]) -> None:
        self.done += 1
        record["cells"].append(summary)
        self.say(
            f"[{self.done}/{self.total} cells] {e.name} {summary.get('cell', '?')} "
            f"verdict {summary.get('verdict', '?')}"
        )

    def write(self) -> dict[str, Any]:
        self.info["duration_s"] = round(time.monotonic() - self.t0, 1)
        return write_suite_summary(self.folder, self.info)


def run_suite(
    plan: SuitePlan,
    out: Path,
    run_experiment: RunExperiment,
    say: Say,
    history: bool = True,
    confirm: int = CONFIRM_FLIPS,
) -> SuiteResult:
    """Run every experiment that has cells, in order. An experiment whose run raises is
    recorded (its cells not done are `unknown`, with the error) and the next one runs.
    After each experiment its flipped cells are run again, up to `confirm` times
    (harness.suite.confirm; 0: never), against `<out>/history.parquet`.
    Ctrl-C: the summary of what ran is written, the history is left alone, and it propagates.
    Then the history is appended and `<out>/index.html` written again; a failure of either is
    recorded in the result (`history_error`, `index_error`), not raised.
    """
    suffix = f"-{plan.shard.suffix}" if plan.shard is not None else ""
    run_id = _free_run_id(out, plan.suite.name, suffix)
    paths = SuitePaths(out / run_id)
    paths.experiments.mkdir(parents=True)
    paths.suite.write_text(planned_suite_yaml(plan), encoding="utf-8")
    run = _Run(plan, paths.root, run_id, say)
    run.info["confirm_flips"] = max(confirm, 0)
    previous = _previous(out, plan, confirm, say)
    for index, e in enumerate(plan.runnable):
        run.announce(index, e)
        record = run.record(e)
        t0 = time.monotonic()
        try:
            run_dir, summary = run_experiment(
                e.plan, paths.experiments, functools.partial(run.cell_done, e, record)
            )
        except KeyboardInterrupt:
            _close(record, e, "interrupted (Ctrl-C)", t0)
            run.write()
            raise
        except Exception as exc:  # recorded; the next experiment still runs
            say(f"{e.name}: error: {_first_line(exc)}")
            _close(record, e, _first_line(exc), t0)
        else:
            record["run_dir"] = _relative(run_dir, paths.root)
            record["run_id"] = summary.get("run_id", run_dir.name)
            record["cells"] = list(summary.get("cells") or record["cells"])
            _close(record, e, None, t0)
        if previous:
            try:
                confirm_flips(
                    e.name,
                    e.plan,
                    record,
                    previous,
                    confirm,
                    run_experiment,
                    paths.confirmations,
                    lambda p: _relative(p, paths.root),
                    say,
                )
            except KeyboardInterrupt:
                run.write()
                raise
    summary = run.write()
    if plan.shard is not None:  # a part of a night: its merge appends and indexes (shards.py)
        return SuiteResult(paths.root, summary, None)
    return _finish(out, paths.root, summary, history)


def _previous(out: Path, plan: SuitePlan, confirm: int, say: Say) -> Previous:
    """The cells' previous verdicts to confirm flips against ({}: confirmation is off, or
    there is no history; an unreadable one is said, and nothing is confirmed)."""
    if confirm < 1:
        return {}
    try:
        return previous_verdicts(out, plan.suite.name)
    except Exception as exc:  # no confirmation is no reason to stop the night
        say(f"flips not confirmed: {figure_history(out)}: {_first_line(exc)}")
        return {}


def _free_run_id(out: Path, name: str, suffix: str = "") -> str:
    run_id = f"{new_suite_run_id(name)}{suffix}"
    while (out / run_id).exists():
        run_id = f"{new_suite_run_id(name)}-{uuid.uuid4().hex[:4]}{suffix}"
    return run_id


def _finish(out: Path, folder: Path, summary: dict[str, Any], history: bool) -> SuiteResult:
    """Append the history and write `<out>/index.html` again; a failure of either is recorded
    in the result (`history_error`, `index_error`), not raised."""
    result = SuiteResult(folder, summary, None)
    if history:
        target = figure_history(out)
        try:
            append_history(target, history_rows(summary))
            result.history = target
        except Exception as exc:  # the suite's own folder is written; the trend file is not
            result.history_error = f"{target}: {_first_line(exc)}"
    try:
        result.index = write_index(out)
    except Exception as exc:  # the page is a view of the folders; the run stands without it
        result.index_error = f"{results_index(out)}: {_first_line(exc)}"
    return result


def merge_shards(folders: list[Path], out: Path, history: bool = True) -> SuiteResult:
    """One suite folder under `out` from the shard folders of one sharded run, as if it had run
    on one machine: every experiment's run folder copied in, one summary and JUnit, the history
    appended, the index written. A shard that did not report leaves its cells `unknown`.
    ConfigError when the folders are not the shards of one run, or a count or path in them is
    out of bounds; every shard is checked before anything is written under `out`, and a merge
    that fails part way (OSError) removes its half-written folder."""
    try:
        shards = read_shards(folders)
    except ResultFolderError as exc:
        raise ConfigError(str(exc)) from None
    name = str(shards[0].planned.get("suite") or "suite")
    paths = SuitePaths(out / _free_run_id(out, name))
    paths.experiments.mkdir(parents=True)
    try:
        info = merged_info(shards, paths.root.name, paths)
        planned = {
            k: v for k, v in shards[0].planned.items() if k not in ("shard", "shard_planned_s")
        }
        header = f"# suite {name}: merged by kafka-chaos from {len(shards)} shard folder(s)\n"
        paths.suite.write_text(
            header + yaml.safe_dump(planned, sort_keys=False, allow_unicode=True, width=100),
            encoding="utf-8",
        )
        summary = write_suite_summary(paths.root, info)
    except BaseException as exc:
        shutil.rmtree(paths.root, ignore_errors=True)
        if isinstance(exc, ResultFolderError):
            raise ConfigError(str(exc)) from None
        raise
    return _finish(out, paths.root, summary, history)


def _close(record: dict[str, Any], e: ExperimentPlan, error: str | None, t0: float) -> None:
    """Duration, error, and an `unknown` stub for each planned cell with no summary."""
    record["duration_s"] = round(time.monotonic() - t0, 1)
    if error is not None:
        record["error"] = error
    have = {c.get("cell") for c in record["cells"]}
    detail = f"the experiment stopped: {error}" if error else "the run returned no summary"
    record["cells"] += [_stub(c, detail) for c in e.cells if c.id not in have]


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
