"""A suite run's summary.json, summary.md and junit.xml (one <testsuite> per experiment)."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from harness.report.cell_report import fmt
from harness.report.run_summary import (
    add_testsuite,
    cell_verdict,
    cells_markdown,
    junit_counts,
    md_cell,
    overall_verdict,
)
from harness.results.flips import FLAKY, counted
from harness.results.layout import SuitePaths, safe_write_text
from harness.results.timings import sum_timings
from harness.results.verdicts import Verdict, worst


def format_duration(seconds: Any) -> str:
    """`45 s`, `3 min 20 s`, `1 h 05 min`; `?` when unknown."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return "?"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        m, rest = divmod(s, 60)
        return f"{m} min {rest:02d} s"
    h, rest = divmod(s, 3600)
    return f"{h} h {rest // 60:02d} min"


def all_cells(experiments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [cell for e in experiments for cell in e.get("cells") or []]


def confirmations(e: dict[str, Any]) -> list[dict[str, Any]]:
    """An experiment record's re-runs of flipped cells (harness.suite.confirm)."""
    return [c for c in e.get("confirmations") or [] if isinstance(c, dict)]


def flip_text(c: dict[str, Any]) -> str:
    """`pass → fail (previous run R), re-run(s) with the same seed: pass`."""
    reruns = ", ".join(str(r.get("verdict")) for r in c.get("reruns") or []) or "none"
    return (
        f"{c.get('previous_verdict')} → {c.get('verdict')} (previous run {c.get('previous_run')}),"
        f" re-run(s) with the same seed: {reruns}"
    )


def flaky_by_cell(e: dict[str, Any]) -> dict[str, str]:
    """An experiment's flaky cells: cell id -> what the flip and its re-runs were."""
    return {str(c.get("cell")): flip_text(c) for c in confirmations(e) if c.get("status") == FLAKY}


def suite_verdict(e: dict[str, Any]) -> Verdict:
    """An experiment's verdict in its suite: the worst of its cells, a flaky one counted as
    a pass (harness.results.flips); no cells decide nothing, so unknown."""
    flaky = flaky_by_cell(e)
    return worst(
        counted(c.get("verdict"), FLAKY if str(c.get("cell")) in flaky else None)
        for c in e.get("cells") or []
    )


def cell_counts(e: dict[str, Any]) -> dict[str, int]:
    """pass / fail / unknown / flaky cells of an experiment record: a flaky cell under
    flaky only."""
    flaky = flaky_by_cell(e)
    verdicts = [cell_verdict(c) for c in e.get("cells") or [] if str(c.get("cell")) not in flaky]
    return {**{v: verdicts.count(v) for v in ("pass", "fail", "unknown")}, FLAKY: len(flaky)}


def params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def render_suite_markdown(summary: dict[str, Any]) -> str:
    experiments: list[dict[str, Any]] = summary.get("experiments") or []
    cells = all_cells(experiments)
    lines = [
        f"# suite {summary.get('suite', '?')} — {summary.get('verdict') or overall_verdict(cells)}",
        "",
        f"Run `{summary.get('run_id', '?')}`, started {summary.get('started', '?')}, "
        f"{format_duration(summary.get('duration_s'))} (planned "
        f"{format_duration(summary.get('planned_s'))}); {len(experiments)} experiment(s), "
        f"{len(cells)} cell(s). `?` = undecided, `-` = not applicable.",
        "",
    ]
    shards: list[dict[str, Any]] = summary.get("shards") or []
    if shards:
        lines += [
            f"Ran as {len(shards)} shards side by side (the duration is the longest shard's):",
            "",
        ]
        lines += [
            f"- shard {s.get('index')}/{s.get('count')}: "
            + (
                "no experiment fell to it"
                if s.get("empty")
                else f"{s.get('verdict', '?')}, {format_duration(s.get('duration_s'))} (planned "
                f"{format_duration(s.get('planned_s'))}), `{s.get('folder')}`"
                if s.get("finished")
                else f"**did not report** (`{s.get('folder') or 'no folder'}`): its cells are unknown"
            )
            for s in shards
        ]
        lines.append("")
    lines += [
        "| experiment | verdict | cells | pass | fail | unknown | flaky | duration | planned "
        "| run folder |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for e in experiments:
        n = cell_counts(e)
        lines.append(
            f"| {md_cell(str(e.get('experiment', '?')))} | {e.get('verdict', '?')} "
            f"| {len(e.get('cells') or [])} | {n['pass']} | {n['fail']} | {n['unknown']} "
            f"| {n[FLAKY]} | {format_duration(e.get('duration_s'))} "
            f"| {format_duration(e.get('planned_s'))} | {md_cell(fmt(e.get('run_dir')))} |"
        )
    lines += _confirmations_markdown(experiments, summary.get("confirm_flips"))
    impossible = [(e, i) for e in experiments for i in e.get("impossible") or []]
    impossible += [(e, i) for e in summary.get("left_out") or [] for i in e.get("impossible") or []]
    if impossible:
        lines += ["", "Cells that cannot exist (left out, not run):", ""]
        lines += [
            f"- `{e.get('experiment', '?')}` {md_cell(params_text(i.get('params') or {}))}"
            f" — {md_cell(str(i.get('reason', '')))}"
            for e, i in impossible
        ]
    for e in summary.get("left_out") or []:
        lines.append(f"- `{e.get('experiment', '?')}` left out: {md_cell(str(e.get('reason')))}")
    for e in experiments:
        lines += ["", f"## {e.get('experiment', '?')} — {e.get('verdict', '?')}", ""]
        if e.get("error"):
            lines += [f"Error: {md_cell(str(e['error']))}", ""]
        if e.get("cells"):
            lines += cells_markdown(e["cells"])
    return "\n".join(lines) + "\n"


def _confirmations_markdown(experiments: list[dict[str, Any]], times: Any) -> list[str]:
    """Each flip and what its re-runs made of it (nothing when no cell flipped)."""
    entries = [(e, c) for e in experiments for c in confirmations(e)]
    if not entries:
        return []
    upto = f" (up to {times} re-run(s) each)" if isinstance(times, int) else ""
    lines = [
        "",
        f"Flips against the previous run, run again with the same seed{upto}; a **flaky** "
        "cell does not fail the suite:",
        "",
    ]
    for e, c in entries:
        folders = ", ".join(
            f"`{r.get('run_dir')}`" for r in c.get("reruns") or [] if r.get("run_dir")
        )
        lines.append(
            f"- `{e.get('experiment', '?')}` `{c.get('cell')}`: {md_cell(flip_text(c))} — "
            f"**{c.get('status')}**" + (f" ({folders})" if folders else "")
        )
    return lines


def suite_junit(summary: dict[str, Any]) -> ET.ElementTree[ET.Element]:
    """<testsuites> for the suite: one <testsuite> per experiment, one <testcase> per cell."""
    experiments: list[dict[str, Any]] = summary.get("experiments") or []
    name = str(summary.get("suite", "kafka-chaos"))
    counts = [junit_counts(e.get("cells") or [], flaky_by_cell(e)) for e in experiments]
    totals = {
        k: str(sum(int(c[k]) for c in counts)) for k in ("tests", "failures", "errors", "skipped")
    }
    root = ET.Element("testsuites", {"name": name, **totals})
    duration = summary.get("duration_s")
    root.set("time", f"{float(duration):.3f}" if isinstance(duration, int | float) else "0.000")
    for e in experiments:
        started = e.get("started")
        add_testsuite(
            root,
            str(e.get("experiment", "?")),
            e.get("cells") or [],
            started if isinstance(started, str) else None,
            flaky_by_cell(e),
        )
    ET.indent(root)
    return ET.ElementTree(root)


def write_suite_summary(suite_dir: Path, info: dict[str, Any]) -> dict[str, Any]:
    """summary.json, summary.md and junit.xml of a suite run; returns summary.json's content.

    info: suite, run_id, file, seed, started, duration_s, planned_s, axes, experiments (each:
    experiment, file, run_dir, run_id, seed, started, duration_s, planned_s, added, kept,
    impossible, error, cells, confirmations), left_out. `verdict` is computed: the worst of
    every cell, a flaky one counted as a pass (each experiment's likewise); `flaky`: the flaky
    cells ({experiment, cell}); `timings`: every cell's timings summed.
    """
    paths = SuitePaths(suite_dir)
    suite_dir.mkdir(parents=True, exist_ok=True)
    experiments: list[dict[str, Any]] = info.get("experiments") or []
    for e in experiments:
        e["verdict"] = suite_verdict(e)
    summary: dict[str, Any] = {
        "suite": info.get("suite"),
        "run_id": info.get("run_id"),
        "verdict": worst(
            counted(c.get("verdict"), FLAKY if str(c.get("cell")) in flaky_by_cell(e) else None)
            for e in experiments
            for c in e.get("cells") or []
        ),
    }
    summary.update({k: v for k, v in info.items() if k not in summary})
    summary["flaky"] = [
        {"experiment": e.get("experiment"), "cell": cell}
        for e in experiments
        for cell in flaky_by_cell(e)
    ]
    summary["timings"] = sum_timings(all_cells(experiments))  # null: no cell has timings
    summary["experiments"] = experiments
    safe_write_text(suite_dir, paths.summary, json.dumps(summary, indent=2, default=str) + "\n")
    safe_write_text(suite_dir, paths.summary_md, render_suite_markdown(summary))
    junit = io.BytesIO()
    suite_junit(summary).write(junit, encoding="utf-8", xml_declaration=True)
    safe_write_text(suite_dir, paths.junit, junit.getvalue().decode("utf-8"))
    return summary
