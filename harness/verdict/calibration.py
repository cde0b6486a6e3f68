"""`harness calibrate`'s figures, from ordinary run folders: per cell and per numeric bound of
its `expect:`, every run's figure (looked up and judged as the run's verdict did), the spread,
the margin of the worst figure and a bound with MARGIN_GOAL margin (harness.verdict.margins).

Kinds of bound: `count` (an equality, or a count held to 0 or 1: `lost: 0`, `lost >= 1`,
whether the thing happens at all; a looser number would change the claim, so nothing is
suggested unless it failed), `relative` (`>= 0.8 * faults.0.duration_s`: a factor is
suggested), `numeric` (a threshold is suggested). Every figure is non-negative (counts,
seconds, milliseconds), so a floor at 0 or below holds nothing and is not suggested.
`resumption` and `recovered` have no figure to calibrate.

`summary["overloaded"]` (metric -> reason; optional) flags a figure measured while the machine
was overloaded: listed and counted, but flagged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from harness.results.layout import RunPaths
from harness.results.metrics import BROKER_LOG_METRICS, Figures
from harness.spec import Cell
from harness.spec.expect import Bound, split_per_set, split_section
from harness.spec.paths import number_at
from harness.verdict.cell_verdict import resolved_expect
from harness.verdict.checks import evaluate, judged_value, why_undecided
from harness.verdict.margins import (
    MARGIN_GOAL,
    SIGNIFICANT_DIGITS,
    direction,
    meets_goal,
    suggest_factor,
    suggest_threshold,
    worst_figure,
    worst_margin,
)

Status = Literal["ok", "thin", "failed", "undecided"]
# Worst first: the calibration's status is its worst bound's.
STATUSES: tuple[Status, ...] = ("failed", "thin", "undecided", "ok")
ROUNDING = f"{SIGNIFICANT_DIGITS} significant digits, away from the figures (whole for a count)"
COUNT_NOTE = (
    "a count bound says whether the thing happens at all; a looser number would change "
    "the claim, so none is suggested"
)


@dataclass(frozen=True)
class CellRun:
    """One run's summary.json of a cell, or why there is none."""

    summary: dict[str, Any] | None
    missing: str = ""


def read_cell_runs(runs: Sequence[Path | str], cell_id: str) -> list[CellRun]:
    """The cell's summary in each run: `runs` holds each run's folder, or why it has none."""
    out = []
    for run in runs:
        if isinstance(run, str):
            out.append(CellRun(None, run or "the run left no folder"))
            continue
        path = RunPaths(run).cell(cell_id).summary
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            out.append(CellRun(None, f"no summary.json: the cell did not finish ({exc})"))
            continue
        if not isinstance(data, dict):
            out.append(CellRun(None, f"{path}: not a JSON object"))
        else:
            out.append(CellRun(data))
    return out


def is_count(metric: str) -> bool:
    """Whether the metric counts things (records, events) rather than time."""
    section, per_set = split_section(metric), split_per_set(metric)
    name = section[1] if section else per_set[0] if per_set else metric
    return not (name.endswith("_s") or "_ms" in name)


def bound_kind(metric: str, bound: Bound) -> str:
    threshold = bound.threshold
    assert threshold is not None
    if direction(bound.op) in ("equal", "unequal") or (is_count(metric) and abs(threshold) <= 1):
        return "count"
    return "relative" if bound.relative else "numeric"


def overload_reason(metric: str, summary: Mapping[str, Any]) -> str | None:
    """Why the figure's window was overloaded (`overloaded`: metric, or its section or set's
    name -> reason), None when it was not, or nobody said."""
    flags = summary.get("overloaded")
    if not isinstance(flags, Mapping):
        return None
    reason = flags.get(metric) or flags.get(metric.partition(".")[0])
    return str(reason) if reason else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def _threshold_text(op: str, value: float) -> str:
    return f"{op} {value:g}"


@dataclass(frozen=True)
class _Suggestion:
    text: str | None = None  # the bound as a spec would write it
    threshold: float | None = None
    op: str = ""
    note: str = ""


def _suggest(
    metric: str,
    bound: Bound,
    kind: str,
    figures: list[float],
    verdicts: list[str],
    ref_value: float | None,
) -> _Suggestion:
    threshold = bound.threshold
    assert threshold is not None
    if not figures:
        return _Suggestion(note="no run decided this figure")
    op = bound.op
    if kind == "count":
        if "fail" not in verdicts:
            return _Suggestion(note=COUNT_NOTE)
        if direction(op) in ("equal", "unequal"):
            above = all(f >= threshold for f in figures)
            below = all(f <= threshold for f in figures)
            if above == below:  # both sides (or `!=` met by its own threshold)
                return _Suggestion(note="the figures fail on both sides of the threshold")
            op = "<=" if above else ">="
    worst = worst_figure(op, threshold, figures)
    assert worst is not None
    lower = direction(op) == "lower"
    if bound.relative and ref_value is not None and kind != "count":
        factor = suggest_factor(op, worst, ref_value, bound.value or 0.0)
        if factor is None:
            return _Suggestion(note=f"{bound.ref} is 0 here or the worst figure is 0")
        suggested = Bound(op, bound.value, bound.ref, factor)
        new = factor * ref_value + (bound.value or 0.0)
        text = str(suggested)
    else:
        value = suggest_threshold(op, worst, integer=is_count(metric))
        if value is None:
            return _Suggestion(
                note="the worst figure is 0: no threshold is a fraction away from it"
            )
        new, text = value, _threshold_text(op, value)
    if lower and new <= 0:
        return _Suggestion(
            note=f"a floor {MARGIN_GOAL:.0%} below the worst figure ({worst:g}) is 0 or less, "
            "which every figure meets: the effect was too weak in some run"
        )
    return _Suggestion(text, new, op)


def bound_entry(
    metric: str, bound: Bound, runs: Sequence[CellRun], ref_value: float | None = None
) -> dict[str, Any]:
    """One bound over the runs: figures, spread, margin, verdicts and a suggestion."""
    threshold = bound.threshold
    assert threshold is not None, "resolved_expect resolves every relative bound"
    figures: list[float | None] = []
    verdicts: list[str] = []
    undecided: list[dict[str, Any]] = []
    overloaded: list[dict[str, Any]] = []
    for run_no, run in enumerate(runs, start=1):
        if run.summary is None:
            figures.append(None)
            verdicts.append("unknown")
            undecided.append({"run": run_no, "reason": run.missing})
            continue
        summary = cast("Figures", run.summary)
        (judgement,) = evaluate({metric: bound}, summary)
        verdicts.append(judgement.verdict)
        raw = judged_value(metric, summary, bound)  # what the verdict judged: the same figure
        value = _number(raw)
        figures.append(value)
        if value is None:
            why = why_undecided(metric, summary) if raw is None else f"{raw!r} is not a number"
            undecided.append({"run": run_no, "reason": why})
        reason = overload_reason(metric, run.summary)
        if reason is not None:
            overloaded.append({"run": run_no, "reason": reason})
    decided = [f for f in figures if f is not None]
    kind = bound_kind(metric, bound)
    margin = worst_margin(bound.op, threshold, decided)
    suggestion = _suggest(metric, bound, kind, decided, verdicts, ref_value)
    status: Status
    if not decided:
        status = "undecided"
    elif "fail" in verdicts:
        status = "failed"
    elif kind == "count" or meets_goal(margin):
        status = "ok"
    else:
        status = "thin"
    suggested_margin = (
        None
        if suggestion.threshold is None
        else worst_margin(suggestion.op, suggestion.threshold, decided)
    )
    entry: dict[str, Any] = {
        "metric": metric,
        "bound": str(bound),
        "threshold": threshold,
        "direction": direction(bound.op),
        "kind": kind,
        "figures": figures,
        "undecided": undecided,
        "overloaded": overloaded,
        "min": min(decided, default=None),
        "max": max(decided, default=None),
        "margin": None if margin is None else round(margin, 6),
        "verdicts": verdicts,
        "status": status,
        "suggested": suggestion.text,
        "suggested_threshold": suggestion.threshold,
        "suggested_margin": None if suggested_margin is None else round(suggested_margin, 6),
        "note": suggestion.note,
    }
    if metric in BROKER_LOG_METRICS:
        entry["counted"] = [counted_templates(run) for run in runs]
    return entry


COUNTED_KEYS = ("template", "example", "detail", "count")
COUNTED_CAP = 50  # templates kept per run; more and the run cannot be re-judged (None)


def counted_templates(run: CellRun) -> list[dict[str, Any]] | None:
    """The broker-log templates a run counted in `broker_errors` (the ones its allow-list did
    not allow), so that the figure can be judged again under a changed `broker_logs.allow`
    (harness.verdict.calibrated); None when the summary has no rows or too many."""
    rows = run.summary.get("broker_errors_by_template") if run.summary else None
    if not isinstance(rows, list):
        return None
    counted = [
        {k: r.get(k) for k in COUNTED_KEYS}
        for r in rows
        if isinstance(r, Mapping) and not r.get("allowed")
    ]
    return counted if len(counted) <= COUNTED_CAP else None


LOAD = "load"
WHY_CAP = 300  # characters of the other reasons kept per run


def unknown_why(run: CellRun) -> str | None:
    """Why a run of the cell is `unknown`: LOAD when every check it left undecided is a figure
    the overload rule took (issue 40: beside burners a run must pass, or be unknown naming the
    load), else the other checks' names and details; None for a run judged pass or fail."""
    if run.summary is None:
        return run.missing[:WHY_CAP] or "no summary"
    if run.summary.get("verdict") != "unknown":
        return None
    checks = [c for c in run.summary.get("checks") or [] if isinstance(c, Mapping)]
    undecided = [c for c in checks if c.get("verdict") != "pass"]
    if not undecided:
        return "unknown with no check saying why"
    others = [
        f"{c.get('name')}: {c.get('detail') or 'unknown'}"
        for c in undecided
        if overload_reason(str(c.get("name")), run.summary) is None
    ]
    return "; ".join(others)[:WHY_CAP] if others else LOAD


def cell_entry(cell: Cell, runs: Sequence[CellRun]) -> dict[str, Any]:
    """Every numeric bound of the cell (its relative ones resolved for it) over the runs."""
    bounds = []
    for metric, bound in resolved_expect(cell.spec).items():
        if bound is None or bound.op in ("exact", "is"):  # resumption, recovered: no figure
            continue
        ref_value = number_at(cell.spec, bound.ref) if bound.ref is not None else None
        bounds.append(bound_entry(metric, bound, runs, ref_value))
    verdicts = [str(r.summary.get("verdict")) if r.summary else "unknown" for r in runs]
    why = [unknown_why(r) for r in runs]
    return {
        "cell": cell.id,
        "verdicts": verdicts,
        "unknown_why": why,
        # what broker_errors was judged with (a record re-judges it when the spec's changed)
        "broker_logs_allow": list(cell.spec.broker_logs.allow),
        "bounds": bounds,
    }


def has_numeric_bound(cell: Cell) -> bool:
    """Whether the cell has a bound `calibrate` can measure (not only resumption/recovered)."""
    return any(b is not None and b.op not in ("exact", "is") for b in cell.spec.expect.values())


def worst_status(statuses: Sequence[str]) -> Status:
    """The calibration's status: its worst bound's (`ok` with no bound at all)."""
    return next((s for s in STATUSES if s in statuses), "ok")


def calibration(
    info: Mapping[str, Any], cells: Sequence[Cell], runs: Sequence[Path | str]
) -> dict[str, Any]:
    """calibration.json: `info` (spec, runs, load, …), then every cell's bounds over `runs`
    (each run's folder, or why it has none) and the worst status."""
    entries = [cell_entry(cell, read_cell_runs(runs, cell.id)) for cell in cells]
    statuses = [b["status"] for e in entries for b in e["bounds"]]
    return {
        **info,
        "margin_goal": MARGIN_GOAL,
        "rounding": ROUNDING,
        "status": worst_status(statuses),
        "cells": entries,
    }
