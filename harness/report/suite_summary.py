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
from harness.results.layout import SuitePaths, safe_write_text
from harness.results.timings import sum_timings


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


def params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def render_suite_markdown(summary: dict[str, Any]) -> str:
    experiments: list[dict[str, Any]] = summary.get("experiments") or []
    cells = all_cells(experiments)
    lines = [
        f"# suite {summary.get('suite', '?')} — {overall_verdict(cells)}",
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
        "| experiment | verdict | cells | pass | fail | unknown | duration | planned | run folder |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for e in experiments:
        verdicts = [cell_verdict(c) for c in e.get("cells") or []]
        lines.append(
            f"| {md_cell(str(e.get('experiment', '?')))} | {e.get('verdict', '?')} "
            f"| {len(verdicts)} | {verdicts.count('pass')} | {verdicts.count('fail')} "
            f"| {verdicts.count('unknown')} | {format_duration(e.get('duration_s'))} "
            f"| {format_duration(e.get('planned_s'))} | {md_cell(fmt(e.get('run_dir')))} |"
        )
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


def suite_junit(summary: dict[str, Any]) -> ET.ElementTree[ET.Element]:
    """<testsuites> for the suite: one <testsuite> per experiment, one <testcase> per cell."""
    experiments: list[dict[str, Any]] = summary.get("experiments") or []
    name = str(summary.get("suite", "kafka-chaos"))
    root = ET.Element("testsuites", {"name": name, **junit_counts(all_cells(experiments))})
    duration = summary.get("duration_s")
    root.set("time", f"{float(duration):.3f}" if isinstance(duration, int | float) else "0.000")
    for e in experiments:
        started = e.get("started")
        add_testsuite(
            root,
            str(e.get("experiment", "?")),
            e.get("cells") or [],
            started if isinstance(started, str) else None,
        )
    ET.indent(root)
    return ET.ElementTree(root)


def write_suite_summary(suite_dir: Path, info: dict[str, Any]) -> dict[str, Any]:
    """summary.json, summary.md and junit.xml of a suite run; returns summary.json's content.

    info: suite, run_id, file, seed, started, duration_s, planned_s, axes, experiments (each:
    experiment, file, run_dir, run_id, seed, started, duration_s, planned_s, added, kept,
    impossible, error, cells), left_out. `verdict` is computed: the worst of every cell
    (each experiment's likewise); `timings`: every cell's timings summed.
    """
    paths = SuitePaths(suite_dir)
    suite_dir.mkdir(parents=True, exist_ok=True)
    experiments: list[dict[str, Any]] = info.get("experiments") or []
    for e in experiments:
        e["verdict"] = overall_verdict(e.get("cells") or [])
    summary: dict[str, Any] = {
        "suite": info.get("suite"),
        "run_id": info.get("run_id"),
        "verdict": overall_verdict(all_cells(experiments)),
    }
    summary.update({k: v for k, v in info.items() if k not in summary})
    summary["timings"] = sum_timings(all_cells(experiments))  # null: no cell has timings
    summary["experiments"] = experiments
    safe_write_text(suite_dir, paths.summary, json.dumps(summary, indent=2, default=str) + "\n")
    safe_write_text(suite_dir, paths.summary_md, render_suite_markdown(summary))
    junit = io.BytesIO()
    suite_junit(summary).write(junit, encoding="utf-8", xml_declaration=True)
    safe_write_text(suite_dir, paths.junit, junit.getvalue().decode("utf-8"))
    return summary
