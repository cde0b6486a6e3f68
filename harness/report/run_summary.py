"""Run-level outputs: summary.json, summary.md, junit.xml, and the same table for the terminal."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.table import Table

from harness.report.cell_report import fmt
from harness.results.layout import RunPaths, safe_write_text
from harness.results.metrics import (
    COUNT_NAMES,
    LATENCY_METRICS,
    PER_SET_KEYS,
    SECTION_FIGURES,
    SPARK_FIGURES,
    TIME_METRICS,
)
from harness.results.timings import overhead_per_100s, sum_timings
from harness.results.verdicts import Verdict, as_verdict, worst

VERDICT_STYLES = {"pass": "green", "fail": "bold red", "unknown": "yellow"}
# Top-level figures shown as columns: the times, and of the ack latencies only the p99 (the
# table is wide already; every latency figure is in the cell report and the JUnit output).
METRIC_COLUMNS = (*TIME_METRICS, "ack_p99_ms")
NOT_APPLICABLE = "-"  # a cell without that consumer set, unlike "?" (undecided)
# Kafka's own view (issue 30) beside the clients': what an SRE's dashboard would have shown and
# where the lost records went; columns only when some cell of the run has the figure at all
# (a run from before them, or with cluster.metrics false, keeps the older table).
KAFKA_VIEW_COLUMNS = (
    "broker.under_replicated_s",
    "broker.offline_partitions_s",
    "broker.unclean_elections",
    "broker_errors",
    "lost_where.truncated",
    "lost_where.never_appended",
    "lost_where.deleted",
    "lost_where.unsynced",
    "lost_where.corrupted",
    "lost_where.unknown",
)
# Places only a power-loss or corrupt fault gives: their columns only when some cell has one.
RARE_COLUMNS = frozenset({"lost_where.unsynced", "lost_where.corrupted"})


def cell_verdict(cell: dict[str, Any]) -> Verdict:
    """Anything other than pass/fail counts as unknown: it must never read as a pass."""
    return as_verdict(cell.get("verdict"))


def overall_verdict(cells: list[dict[str, Any]]) -> Verdict:
    """fail beats unknown beats pass; no cells decide nothing, so unknown."""
    return worst(cell_verdict(cell) for cell in cells)


def stall_sets(cells: list[dict[str, Any]]) -> list[str]:
    """Consumer sets with a stall figure in any cell, in first-seen order."""
    sets: list[str] = []
    for cell in cells:
        sets += [name for name in cell.get("stalls_by_set") or {} if name not in sets]
    return sets


# Figures of a Spark consumer set shown in the run table, as `<figure>.<set>` columns.
SPARK_COLUMNS = SPARK_FIGURES


def spark_sets(cells: list[dict[str, Any]]) -> list[str]:
    """Spark consumer sets with figures in any cell, in first-seen order."""
    sets: list[str] = []
    for cell in cells:
        sets += [name for name in cell.get("spark_by_set") or {} if name not in sets]
    return sets


def table_columns(cells: list[dict[str, Any]]) -> list[str]:
    sets = [f"stall_s.{name}" for name in stall_sets(cells)]
    spark = [f"{figure}.{name}" for name in spark_sets(cells) for figure in SPARK_COLUMNS]
    kafka = [name for name in KAFKA_VIEW_COLUMNS if _in_any(cells, name)]
    return ["cell", "verdict", *COUNT_NAMES, *METRIC_COLUMNS, *sets, *spark, *kafka]


def _in_any(cells: list[dict[str, Any]], name: str) -> bool:
    """Whether some cell has the figure, decided or not (its section or key is there); a
    rare place only where some cell counts one."""
    section, dot, key = name.partition(".")
    if name in RARE_COLUMNS:
        return any(((cell.get(section) or {}).get(key) or 0) > 0 for cell in cells)
    return any((section if dot else name) in cell for cell in cells)


def table_rows(cells: list[dict[str, Any]]) -> list[list[str]]:
    """One row of display strings per cell: None is "?", floats have one decimal."""
    sets = stall_sets(cells)
    queries = spark_sets(cells)
    kafka = [name for name in KAFKA_VIEW_COLUMNS if _in_any(cells, name)]
    rows = []
    for cell in cells:
        counts = cell.get("counts") or {}
        stalls = cell.get("stalls_by_set") or {}
        spark = cell.get("spark_by_set") or {}
        rows.append(
            [
                str(cell.get("cell", "?")),
                cell_verdict(cell),
                *(fmt(counts.get(name)) for name in COUNT_NAMES),
                *(fmt(cell.get(name)) for name in METRIC_COLUMNS),
                *(fmt(stalls[name]) if name in stalls else NOT_APPLICABLE for name in sets),
                *(
                    fmt(spark[name].get(figure)) if name in spark else NOT_APPLICABLE
                    for name in queries
                    for figure in SPARK_COLUMNS
                ),
                *(fmt(None if (v := figure(cell, name)) is _ABSENT else v) for name in kafka),
            ]
        )
    return rows


TERMINAL_WIDTH = 100  # the end-of-run table fits an ordinary terminal; summary.md has all
TERMINAL_COLUMNS = ("cell", "verdict", "acked", "figures", "stall_s", "unavailable_s")
_VOLUME = ("attempted", "acked")  # how much was written, not an anomaly: its own column
_ABSENT = object()


def figure(cell: dict[str, Any], name: str) -> Any:
    """A figure of a cell summary by the name a check gives it (`lost`, `ack_p99_ms`,
    `stall_s.group`, `read_twice.spark`); _ABSENT when the name is no figure (`run`, `faults`)."""
    counts = cell.get("counts") or {}
    if name in counts:
        return counts[name]
    base, _, member = name.partition(".")
    if member and member in SECTION_FIGURES.get(base, ()):  # broker.x, lost_where.x
        section = cell.get(base)
        value = section.get(member) if isinstance(section, dict) else None
        return value if value is None or isinstance(value, int | float) else _ABSENT
    if member and base in PER_SET_KEYS:
        by_set = cell.get(PER_SET_KEYS[base]) or {}
        value = by_set.get(member, _ABSENT)
        return value.get(base, _ABSENT) if isinstance(value, dict) else value
    value = cell.get(name, _ABSENT) if not member else _ABSENT
    return value if value is None or isinstance(value, int | float) else _ABSENT


def terminal_figures(cell: dict[str, Any]) -> str:
    """The figures worth a glance: every count that is not zero, then every figure the cell's
    expectations judged (even zero: it is the claim), each once, `?` when undecided."""
    counts = cell.get("counts") or {}
    names = [n for n in COUNT_NAMES if n not in _VOLUME and counts.get(n, 0) != 0]
    for check in cell.get("checks") or []:
        name = str(check.get("name"))
        if name not in names and name not in _VOLUME and figure(cell, name) is not _ABSENT:
            names.append(name)
    values = {n: figure(cell, n) for n in names if n not in TIME_METRICS}  # their own columns
    shown = [f"{n} {fmt(v)}" for n, v in values.items() if v != 0]
    zeros = [n for n, v in values.items() if v == 0]
    return " · ".join([*shown, *(["0: " + ", ".join(zeros)] if zeros else [])])


def terminal_rows(cells: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for cell in cells:
        counts = cell.get("counts") or {}
        acked = f"{fmt(counts.get('acked'))}/{fmt(counts.get('attempted'))}" if counts else "?"
        rows.append(
            [
                str(cell.get("cell", "?")),
                cell_verdict(cell),
                acked,
                terminal_figures(cell),
                fmt(cell.get("max_stall_s")),
                fmt(cell.get("unavailable_s")),
            ]
        )
    return rows


def overhead_line(timings: dict[str, Any] | None) -> str | None:
    """`harness overhead: N s per 100 s of workload` of summed timings (sum_timings); None
    when it cannot be said (no cell has timings, or no workload was scheduled)."""
    n = overhead_per_100s(timings)
    return None if n is None else f"harness overhead: {n} s per 100 s of workload"


def render_table(cells: list[dict[str, Any]]) -> Table:
    """The end-of-run table for the terminal, verdicts coloured, its footer the cells' harness
    overhead (overhead_line): print it at most TERMINAL_WIDTH wide (`console.print(table,
    width=...)`); the full table is summary.md's."""
    table = Table(
        title="cells (every figure: summary.md)",
        caption=overhead_line(sum_timings(cells)),
        caption_justify="left",
        expand=True,
    )
    for column in TERMINAL_COLUMNS:
        table.add_column(
            "unavail_s" if column == "unavailable_s" else column,
            justify="left" if column in ("cell", "verdict", "figures") else "right",
            overflow="fold",
            ratio={"cell": 2, "figures": 3}.get(column),
            no_wrap=column not in ("cell", "figures"),  # the rest keep one line
        )
    for row in terminal_rows(cells):
        verdict = row[1]
        table.add_row(row[0], f"[{VERDICT_STYLES[verdict]}]{verdict}[/]", *row[2:])
    return table


def bad_checks(cell: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in cell.get("checks") or [] if c.get("verdict") != "pass"]


def md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(run_info: dict[str, Any], cells: list[dict[str, Any]]) -> str:
    lines = [
        f"# {run_info.get('spec', '?')} — {overall_verdict(cells)}",
        "",
        f"Run `{run_info.get('run_id', '?')}`, seed `{run_info.get('seed', '?')}`, "
        f"started {run_info.get('started', '?')}, {fmt(run_info.get('duration_s'))} s. "
        "`?` = undecided, `-` = not applicable.",
        "",
        *missing_markdown(run_info),
        *cells_markdown(cells),
    ]
    return "\n".join(lines) + "\n"


def missing_markdown(run_info: dict[str, Any]) -> list[str]:
    """A line naming the planned cells whose folders are not in the run folder (`verify`)."""
    missing = run_info.get("missing_cells") or []
    if not missing:
        return []
    names = ", ".join(f"`{md_cell(str(c))}`" for c in missing)
    return [f"**Missing cells** (planned, no folder; verdict unknown): {names}", ""]


def cells_markdown(cells: list[dict[str, Any]]) -> list[str]:
    """The cells table (Markdown lines), then one line per check of a cell that did not pass."""
    columns = table_columns(cells)
    lines = [
        "| " + " | ".join(columns) + " |",
        "|" + "|".join("---" if i < 2 else "---:" for i in range(len(columns))) + "|",
    ]
    lines += ["| " + " | ".join(md_cell(v) for v in row) + " |" for row in table_rows(cells)]
    notes = [line for cell in cells if (line := unsettled_line(cell))]
    for cell in cells:
        if cell_verdict(cell) == "pass":
            continue
        checks = bad_checks(cell)
        name = cell.get("cell", "?")
        notes += [
            f"- `{name}` — {md_cell(fmt(c.get('name')))}: **{md_cell(fmt(c.get('verdict')))}**"
            f" — {md_cell(str(c.get('detail') or ''))}"
            for c in checks
        ]
        if not checks:
            notes.append(f"- `{name}` — **{cell_verdict(cell)}** (no check says why)")
    if notes:
        lines += ["", *notes]
    return lines


def unsettled_line(cell: dict[str, Any]) -> str | None:
    """A note for a cell whose warm-up did not settle (its workload started anyway; its
    timing figures met the overload rule as always)."""
    warm = cell.get("warm_up")
    if not isinstance(warm, dict) or warm.get("settled") is not False:
        return None
    windows = ", ".join(fmt(p) for p in warm.get("window_p99_ms") or []) or "none"
    why = f"; {warm['error']}" if warm.get("error") else ""
    return (
        f"- `{cell.get('cell', '?')}` — warm-up: **not settled** after"
        f" {fmt(warm.get('seconds'))} s (ack p99 by 2-s window, ms: {md_cell(windows)}{why})"
    )


def _check_lines(checks: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"{c.get('name', '?')}: {c.get('verdict', '?')} — {c.get('detail') or ''}" for c in checks
    )


def _system_out(cell: dict[str, Any]) -> str:
    counts = cell.get("counts") or {}
    lines = [f"{name}={fmt(counts.get(name))}" for name in COUNT_NAMES]
    lines += [f"{name}={fmt(cell.get(name))}" for name in (*TIME_METRICS, *LATENCY_METRICS)]
    lines += [f"stall_s.{k}={fmt(v)}" for k, v in (cell.get("stalls_by_set") or {}).items()]
    for name, figures in (cell.get("spark_by_set") or {}).items():
        lines += [f"{k}.{name}={v}" for k, v in figures.items()]
    lines += [f"undecided.{k}: {v}" for k, v in (cell.get("undecided") or {}).items()]
    lines += [f"machine.{k}={fmt(v)}" for k, v in (cell.get("machine") or {}).items()]
    lines += [f"overloaded.{k}: {v}" for k, v in (cell.get("overloaded") or {}).items()]
    lines += [f"warm_up.{k}={fmt(v)}" for k, v in (cell.get("warm_up") or {}).items()]
    return "\n".join(lines) + "\n"


def _seconds(value: Any) -> str:
    return f"{float(value):.3f}" if isinstance(value, int | float) else "0.000"


def junit_xml(run_info: dict[str, Any], cells: list[dict[str, Any]]) -> ET.ElementTree[ET.Element]:
    """One testsuite, one testcase per cell; unknown is an <error>, so CI cannot go green on it."""
    spec = str(run_info.get("spec", "kafka-chaos"))
    root = ET.Element("testsuites", {"name": spec, **junit_counts(cells)})
    root.set("time", _seconds(run_info.get("duration_s")))
    started = run_info.get("started")
    add_testsuite(root, spec, cells, started if isinstance(started, str) else None)
    ET.indent(root)
    return ET.ElementTree(root)


def junit_counts(
    cells: list[dict[str, Any]], flaky: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Testcase counts; a flaky cell (`flaky`: cell id -> why) is skipped, whatever its verdict."""
    flaky = flaky or {}
    verdicts = [cell_verdict(cell) for cell in cells if str(cell.get("cell", "?")) not in flaky]
    return {
        "tests": str(len(cells)),
        "failures": str(verdicts.count("fail")),
        "errors": str(verdicts.count("unknown")),
        "skipped": str(len(cells) - len(verdicts)),
    }


def add_testsuite(
    parent: ET.Element,
    name: str,
    cells: list[dict[str, Any]],
    started: str | None,
    flaky: Mapping[str, str] | None = None,
) -> ET.Element:
    """A <testsuite> named `name` with one <testcase> per cell: fail → <failure>, unknown →
    <error> (with the checks that were not pass), the cell's figures in <system-out>. A
    flaky cell of a suite (`flaky`: cell id -> why) is <skipped message="flaky: …">: every
    CI reader shows a skipped test with its message and counts it apart, none fails on it."""
    flaky = flaky or {}
    suite = ET.SubElement(parent, "testsuite", {"name": name, **junit_counts(cells, flaky)})
    suite.set("time", _seconds(sum(float(c.get("duration_s") or 0) for c in cells)))
    if started is not None:
        suite.set("timestamp", started)
    for cell in cells:
        verdict = cell_verdict(cell)
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": name,
                "name": str(cell.get("cell", "?")),
                "time": _seconds(cell.get("duration_s")),
            },
        )
        checks = bad_checks(cell)
        why = flaky.get(str(cell.get("cell", "?")))
        if why is not None:
            ET.SubElement(case, "skipped", {"message": f"flaky: {why}"}).text = _check_lines(checks)
        elif verdict == "fail":
            failed = [c for c in checks if c.get("verdict") == "fail"] or checks
            names = ", ".join(str(c.get("name", "?")) for c in failed) or "verdict fail"
            element = ET.SubElement(case, "failure", {"message": f"failed checks: {names}"})
            element.text = _check_lines(checks)
        elif verdict == "unknown":
            undecided = [c for c in checks if c.get("verdict") != "fail"]
            names = ", ".join(str(c.get("name", "?")) for c in undecided) or "verdict unknown"
            element = ET.SubElement(case, "error", {"message": f"undecided checks: {names}"})
            element.text = _check_lines(checks)
        ET.SubElement(case, "system-out").text = _system_out(cell)
    return suite


def write_run_summary(
    run_dir: Path, run_info: dict[str, Any], cells: list[dict[str, Any]]
) -> dict[str, Any]:
    """summary.json, summary.md and junit.xml in the run folder; returns summary.json's content.

    run_info: run_id, spec (the spec's name), seed, started, duration_s; extra keys are kept
    in summary.json after the fixed ones (`planned_cells`, `cells_filter`, `missing_cells`),
    then `timings` (the cells' summed) and `cells`.
    Planned cells missing from the folder make the run `unknown`. Written with
    safe_write_text: a symlink in the folder is replaced, never written through.
    """
    paths = RunPaths(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    fixed = ("run_id", "spec", "seed")
    summary: dict[str, Any] = {key: run_info.get(key) for key in fixed}
    summary["verdict"] = worst(
        [overall_verdict(cells), "unknown" if run_info.get("missing_cells") else "pass"]
    )
    summary["started"] = run_info.get("started")
    summary["duration_s"] = run_info.get("duration_s")
    summary.update({k: v for k, v in run_info.items() if k not in summary})
    summary["timings"] = sum_timings(cells)  # every cell's timings summed (null: none has them)
    summary["cells"] = cells
    safe_write_text(run_dir, paths.summary, json.dumps(summary, indent=2, default=str) + "\n")
    safe_write_text(run_dir, paths.summary_md, render_markdown(run_info, cells))
    junit = io.BytesIO()
    junit_xml(run_info, cells).write(junit, encoding="utf-8", xml_declaration=True)
    safe_write_text(run_dir, paths.junit, junit.getvalue().decode("utf-8"))
    return summary
