"""From a cell's result folder alone to its summary.json and report.html (also `verify`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from harness.report import write_cell_report
from harness.results import events as ev
from harness.results.events import Event
from harness.results.history_reader import read_jsonl
from harness.results.isr import isr_figures
from harness.results.layout import CellPaths
from harness.results.metrics import COUNT_NAMES, RECOVERED, Figures, Summary
from harness.results.timings import cell_timings
from harness.spec import Cell, Spec
from harness.spec.expect import Bound
from harness.spec.paths import number_at
from harness.verdict.checks import Judgement, evaluate, margins, overall, recovery
from harness.verdict.planned_faults import (
    LATE_S,
    PlannedKind,
    faults_check,
    off_schedule,
    on_time,
)

__all__ = ["LATE_S", "faults_check", "off_schedule", "on_time", "planned_kinds"]

NOTHING_EXPECTED = "the spec expects nothing of this cell, so it has shown nothing"


def run_check(history: list[Event]) -> Judgement:
    """Did the cell run its course? An infrastructure error, a crashed workload or a consumer
    member whose program could not start undecides it."""
    problems = list(
        dict.fromkeys(  # a member restarted (heal) fails again alike: said once
            f"{e['kind']}: "
            + (f"{e['consumer']}: " if e.get("consumer") else "")
            + str(e.get("error", ""))
            for e in history
            if e["kind"] in (ev.CELL_ERROR, ev.PRODUCER_CRASH, ev.CONSUMER_NOT_STARTED)
        )
    )
    if not history:
        return Judgement("run", "unknown", "no history.jsonl: the cell did not run")
    if problems:
        return Judgement("run", "unknown", "; ".join(problems))
    if not any(e["kind"] == ev.PHASE and e.get("phase") == ev.PHASE_COLLECT for e in history):
        return Judgement("run", "unknown", "the cell never reached its collect phase")
    return Judgement("run", "pass", "every phase ran")


def recovered(history: list[Event]) -> tuple[bool | None, str]:
    """What the last `recovery.end` says: healed or not (None: no such event), and its detail."""
    ends = [e for e in history if e["kind"] == ev.RECOVERY_END]
    if not ends:
        return None, ""
    value = ends[-1].get("recovered")
    detail = str(ends[-1].get("detail") or "")
    if not isinstance(value, bool):
        return None, f"recovery.end without a true/false `recovered` (got {value!r})"
    return value, detail


def evidence_check(summary: Figures) -> Judgement:
    """Do the cell's tables agree with what its history says was written and read
    (spark_jobs/checks/evidence.py)? A disagreement has undecided the figures it touches;
    this check shows it, and a cell with damaged evidence never passes."""
    evidence: object = summary.get("evidence")
    if not isinstance(evidence, dict):
        return Judgement("evidence", "unknown", "the checks left no evidence comparison")
    bad = [str(d) for d in evidence.get("disagreements") or []]
    if bad:
        return Judgement("evidence", "unknown", "; ".join(bad))
    compared = [str(c) for c in evidence.get("compared") or []]
    return Judgement("evidence", "pass", "; ".join(compared) or "nothing to compare")


def failed_checks_check(summary: Figures) -> Judgement | None:
    """A check of the cell's that raised (spark_jobs.check): its figures are undecided and
    so is the cell, though the other checks' figures stand."""
    failed = summary.get("failed_checks")
    if not failed:
        return None
    detail = "; ".join(f"the {name} check failed: {error}" for name, error in failed.items())
    return Judgement("verification", "unknown", detail)


def planned_kinds(spec: Spec) -> list[PlannedKind]:
    """The spec's faults as the `faults` check judges them (by their index in the list)."""
    return [
        PlannedKind(i, "isolate" if f.kind == "partition" else f.kind, f.at_s, f.optional)
        for i, f in enumerate(spec.faults)
    ]


def cell_checks(
    expect: dict[str, Bound | None],
    history: list[Event],
    summary: Figures,
    plan: list[PlannedKind] | None = None,
    measured: bool = True,
) -> list[Judgement]:
    """Infrastructure checks (the cell ran, its faults were done, the cluster healed, the
    tables agree with the history: `evidence`, when the checks ran), then one per expectation.

    The infrastructure checks can undecide a cell but never make it pass on their own: a
    cell whose spec expects nothing (or only nulls) gets an `expect` check that is unknown.
    """
    healed, detail = recovered(history)
    wanted = expect.get(RECOVERED)
    flag = None if wanted is None else wanted.expected_flag
    expectations = evaluate(expect, summary)
    checks = [run_check(history), faults_check(history, plan), recovery(healed, detail, flag)]
    if measured:
        checks.append(evidence_check(summary))
        broken = failed_checks_check(summary)
        if broken is not None:
            checks.append(broken)
    checks += expectations
    if not expectations and flag is None:
        checks.append(Judgement("expect", "unknown", NOTHING_EXPECTED))
    return checks


def resolved_expect(spec: Spec) -> dict[str, Bound | None]:
    """The spec's expectations with each relative bound's threshold for this cell (the spec
    was validated, so every reference names a number)."""
    return {
        metric: bound.resolve(number_at(spec, bound.ref))
        if bound is not None and bound.ref is not None
        else bound
        for metric, bound in spec.expect.items()
    }


def cell_params(cell: Cell) -> dict[str, Any]:
    """The cell's matrix values, plus the settings a reader of the table wants to see."""
    s = cell.spec
    params: dict[str, Any] = {
        "mode": s.cluster.mode,
        "version": s.cluster.version,
        "brokers": s.cluster.brokers,
        "acks": s.producer.acks,
        "idempotence": s.producer.idempotence,
        "topic_rf": s.topic.replication_factor,
        "partitions": s.topic.partitions,
    }
    if s.cluster.spare_brokers:
        params["spare_brokers"] = s.cluster.spare_brokers
    if s.cluster.dynamic_quorum:
        params["dynamic_quorum"] = True
    if s.cluster.spare_controllers:
        params["spare_controllers"] = s.cluster.spare_controllers
    for key in (
        "min.insync.replicas",
        "offsets.topic.replication.factor",
        "unclean.leader.election.enable",
    ):
        if key in s.cluster.broker_config:
            params[key] = s.cluster.broker_config[key]
    params.update(cell.params)
    return params


def gap_ms(cell: Cell) -> int:
    """Acks further apart than this count as unavailability: 1 s, or 3 records' spacing if slower."""
    return int(max(1000.0, 3000.0 / cell.spec.producer.rate))


def amend_timings(
    summary: dict[str, Any],
    cell_dir: Path,
    checks_s: float | None = None,
    checks_hidden_s: float | None = None,
) -> dict[str, Any]:
    """The summary (and its summary.json) with `timings.checks` and/or `checks_hidden` set
    anew and `total` moved by as much: the checks measured to the end of the cell's report,
    or how much of them ran behind the next cell (harness.verdict.checks_behind)."""
    timings = summary.get("timings")
    if not isinstance(timings, dict):
        return summary
    total = float(timings.get("total") or 0.0)
    if checks_s is not None:
        total += checks_s - float(timings.get("checks") or 0.0)
        timings["checks"] = round(checks_s, 3)
    if checks_hidden_s is not None:
        total -= checks_hidden_s - float(timings.get("checks_hidden") or 0.0)
        timings["checks_hidden"] = round(checks_hidden_s, 3)
    timings["total"] = round(total, 3)
    paths = CellPaths(cell_dir)
    paths.write_text(paths.summary, json.dumps(summary, indent=2, default=str) + "\n")
    return summary


def summarize(
    cell: Cell, cell_dir: Path, metrics: Figures | None, error: str = "", checks_s: float = 0.0
) -> dict[str, Any]:
    """summary.json of the cell (written) from the checks' metrics (None: verification crashed)
    and how long the checks took (`timings.checks`)."""
    paths = CellPaths(cell_dir)
    history = read_jsonl(paths.history)[0] if paths.history.exists() else []
    if metrics is None:
        metrics = {
            "counts": dict.fromkeys(COUNT_NAMES),
            "max_stall_s": None,
            "unavailable_s": None,
            "undecided": {"*": f"verification crashed: {error}"},
        }
        measured = False
    else:
        measured = True
    # The figures, then what the verdict adds below (mypy wants those among the ** items).
    summary: Summary = {"cell": cell.id, "params": cell_params(cell), **metrics}  # type: ignore[typeddict-item]
    summary["recovered"] = recovered(history)[0]  # RECOVERED
    summary["isr"] = isr_figures(history)  # before the checks: `isr.<figure>` expectations
    plan = planned_kinds(cell.spec)
    expect = resolved_expect(cell.spec)
    checks = cell_checks(expect, history, summary, plan, measured)
    if not measured:
        checks.append(Judgement("verification", "unknown", error))
    summary["checks"] = [c.as_dict() for c in checks]
    summary["verdict"] = overall(checks)
    summary["margins"] = margins(expect, summary)  # how close each bound came (history.parquet)
    ts = [int(e["ts"]) for e in history if "ts" in e]
    summary["duration_s"] = round((max(ts) - min(ts)) / 1000, 1) if ts else 0.0
    summary["timings"] = cell_timings(history, cell.spec.planned_workload_s, checks_s)
    paths.write_text(paths.summary, json.dumps(summary, indent=2, default=str) + "\n")
    write_cell_report(cell_dir)
    return cast("dict[str, Any]", summary)  # the callers' JSON object
