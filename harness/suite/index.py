"""results/index.html from the suite folders and history.parquet (`python -m harness index`).

The latest suite run is the newest suite folder under the results folder (by its summary's
`started`); with none, the newest run in the history (then without links). The folders and
the history are read by harness.suite.index_inputs. The latest run's cells are read as
history rows (`history.history_rows`), so the latest night and the earlier ones have the
same figures; `changes.cell_changes` says what changed. Written after every suite run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.errors import ConfigError
from harness.report.index_page import (
    FIGURE_COLUMNS,
    CellView,
    EarlierRun,
    ExperimentView,
    FigureView,
    IndexPage,
    MarginView,
    figure_view,
    render_index,
)
from harness.report.run_summary import overhead_line
from harness.report.suite_summary import format_duration
from harness.report.trends import TrendPoint, cost_svg, trend_svg
from harness.results.flips import counted
from harness.results.layout import (
    FIGURE_HISTORY,
    REPORT,
    RUN_SUMMARY_MD,
    RunPaths,
    SuitePaths,
    results_index,
)
from harness.results.verdicts import as_verdict, worst
from harness.suite.changes import (
    NIGHTS,
    CellChange,
    cell_changes,
    earlier_runs,
    row_figures,
)
from harness.suite.compare import Key
from harness.suite.cost import night_costs, summed
from harness.suite.index_explore import explore_views
from harness.suite.index_inputs import (
    Damage,
    SuiteFolder,
    all_rows,
    latest_from_history,
    read_figure_history,
    suite_folders,
)
from harness.suite.margins import MARGIN_LOW, MARGIN_RUNS, row_margins, thin_margins

TREND_RUNS = 30  # nights drawn in a trend plot (the latest included)
EARLIER_SHOWN = 60


def _href(*parts: str) -> str:
    """A relative URL of path parts (cell ids keep their `=`; anything odd is %-quoted)."""
    return "/".join(quote(p, safe="=,+@") for p in parts)


def _run_rel(results: Path, suite: SuiteFolder, run_dir: Any) -> Path | None:
    """An experiment's run folder relative to the results folder (None: not there)."""
    if not isinstance(run_dir, str) or not run_dir:
        return None
    path = Path(run_dir) if Path(run_dir).is_absolute() else suite.folder / run_dir
    try:
        return path.resolve().relative_to(results.resolve())
    except ValueError:
        return None


def _flags(change: CellChange | None) -> dict[str, FigureView]:
    """Out-of-range figures; a set's stall is left out when it says what max_stall_s says."""
    if change is None:
        return {}
    flagged = {o.figure: o for o in change.out_of_range}
    top = flagged.get("max_stall_s")
    return {
        o.figure: figure_view(o.figure, o.value, (o.low, o.high, o.nights))
        for o in flagged.values()
        if not (
            top is not None
            and o.figure.startswith("stall_s.")
            and (o.value, o.low, o.high) == (top.value, top.low, top.high)
        )
    }


def _params(text: Any) -> dict[str, Any]:
    """A history row's params (JSON text); {} for one that is not a JSON object."""
    try:
        params = json.loads(text) if isinstance(text, str) else {}
    except (ValueError, RecursionError):
        return {}
    return params if isinstance(params, dict) else {}


def _cell_view(
    row: Mapping[str, Any], change: CellChange | None, report_href: str | None
) -> CellView:
    figures = row_figures(row)
    flags = _flags(change)
    params = _params(row.get("params"))
    return CellView(
        experiment=str(row.get("experiment")),
        cell=str(row.get("cell")),
        verdict=as_verdict(row.get("verdict")),
        params=", ".join(f"{k}={v}" for k, v in params.items()),
        previous_verdict=None if change is None else change.previous_verdict,
        previous_run=None if change is None else change.previous_run,
        columns=[flags.get(n) or figure_view(n, figures.get(n)) for n in FIGURE_COLUMNS],
        flags=list(flags.values()),
        report_href=report_href,
        new=change is None or change.is_new,
        flipped=change is not None and change.flipped,
        flipped_from_pass=change is not None and change.flipped_from_pass,
        changed=change is not None and change.changed,
        confirmation=_text(row.get("confirmation")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _counted(rows: Sequence[Mapping[str, Any]]) -> str:
    """The run's verdict as its suite counts it: a flaky cell fails nothing."""
    return worst(counted(r.get("verdict"), r.get("confirmation")) for r in rows)


def _trend_series(
    experiment: str,
    latest: Sequence[Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    runs: Sequence[str],
) -> dict[str, list[TrendPoint]]:
    shown = set(runs[-(TREND_RUNS - 1) :]) if TREND_RUNS > 1 else set()
    series: dict[str, list[TrendPoint]] = {}
    past = [r for r in rows if r.get("suite_run") in shown and r.get("experiment") == experiment]
    for r in [*sorted(past, key=lambda r: (r["started"], r["suite_run"])), *latest]:
        if isinstance(r.get("started"), datetime):
            point = TrendPoint(r["started"], as_verdict(r.get("verdict")), row_figures(r))
            series.setdefault(str(r.get("cell")), []).append(point)
    return series


def _earlier(
    results: Path,
    folders: Sequence[SuiteFolder],
    rows: Sequence[Mapping[str, Any]],
    runs: Sequence[str],
) -> list[EarlierRun]:
    by_id = {f.run_id: f for f in folders}
    out = []
    for run in reversed(runs[-EARLIER_SHOWN:]):
        mine = [r for r in rows if r.get("suite_run") == run]
        folder = by_id.get(run)
        href = None
        if folder is not None:
            href = _href(*folder.folder.relative_to(results).parts, RUN_SUMMARY_MD)
        started = mine[0].get("started") if mine else None
        out.append(
            EarlierRun(
                run,
                started.isoformat(timespec="seconds") if isinstance(started, datetime) else "?",
                _counted(mine),
                href,
            )
        )
    return out


def build_index(
    results: Path, nights: int = NIGHTS, damaged: list[Damage] | None = None
) -> IndexPage:
    """The page for the results folder; ConfigError when it holds no suite run at all (or
    only damaged ones). Input files left out are noted on the page and added to `damaged`."""
    notes: list[str] = []
    damage: list[Damage] = [] if damaged is None else damaged
    folders = suite_folders(results, notes, damage)
    rows = all_rows(read_figure_history(results, notes, damage), folders)
    latest_folder = folders[-1] if folders else None
    if latest_folder is not None:
        latest = latest_folder.rows
        summary = latest_folder.summary
        suite = str(summary.get("suite") or "?")
        run_id, started = latest_folder.run_id, latest_folder.started
    else:
        latest = latest_from_history(rows)
        if not latest:
            if damage:  # say what is broken, not that there is nothing
                why = "\n".join([f"{results}: nothing to index", *(d.message for d in damage)])
                if all(d.infra for d in damage):
                    raise OSError(why)
                raise ConfigError(why)
            raise ConfigError(
                f"{results}: no suite folder and no {FIGURE_HISTORY}: nothing to index"
            )
        summary = {}
        suite, run_id = str(latest[0].get("suite") or "?"), str(latest[0]["suite_run"])
        started = latest[0].get("started")
        notes.append(f"the suite folder of {run_id} is not here: figures from {FIGURE_HISTORY}")
    runs = earlier_runs(rows, suite, run_id, started)
    changes = cell_changes(
        {
            (str(r["experiment"]), str(r["cell"])): (str(r["verdict"]), row_figures(r))
            for r in latest
        },
        rows,
        suite=suite,
        latest_run=run_id,
        latest_started=started,
        nights=nights,
    )
    cost_plot, overhead = _cost(rows, runs, latest)
    return IndexPage(
        suite=suite,
        run_id=run_id,
        started=started.isoformat(timespec="seconds") if isinstance(started, datetime) else "?",
        verdict=_counted(latest),
        experiments=_experiments(results, latest_folder, latest, changes, rows, runs),
        nights=nights,
        duration=format_duration(summary.get("duration_s")),
        previous_run=runs[-1] if runs else None,
        links=_links(results, latest_folder),
        earlier=_earlier(results, folders, rows, runs),
        notes=notes,
        generated=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        overhead=overhead,
        cost_svg=cost_plot,
        thin_margins=_margins(results, latest_folder, rows, runs, latest),
        margin_low=MARGIN_LOW,
        margin_runs=MARGIN_RUNS,
        margins_known=any(row_margins(r) for r in [*latest, *rows]),
        explorations=explore_views(results, notes, damage),
        harness=_harness(latest),
        previous_harness=_harness(r for r in rows if runs and r.get("suite_run") == runs[-1]),
    )


def _harness(rows: Iterable[Mapping[str, Any]]) -> str | None:
    """The commit a run's rows say its harness was at (the first that says)."""
    return next((str(r["harness"]) for r in rows if r.get("harness")), None)


def _margins(
    results: Path,
    folder: SuiteFolder | None,
    rows: Sequence[Mapping[str, Any]],
    runs: Sequence[str],
    latest: Sequence[Mapping[str, Any]],
) -> list[MarginView]:
    """The bounds that came close in the last MARGIN_RUNS runs, linked to the latest run's
    report of their cell when it is here."""
    reports = {}
    for e in folder.summary.get("experiments") or [] if folder is not None else []:
        run_rel = _run_rel(results, folder, e.get("run_dir")) if folder is not None else None
        if run_rel is None:
            continue
        for c in e.get("cells") or []:
            cell = str(c.get("cell"))
            if (RunPaths(results / run_rel).cell(cell).root / REPORT).is_file():
                reports[(str(e.get("experiment")), cell)] = _href(
                    *run_rel.parts, "cells", cell, REPORT
                )
    return [
        MarginView(
            metric=t.metric,
            experiment=t.experiment,
            cell=t.cell,
            margin=t.margin,
            run=t.run,
            started=t.started.isoformat(timespec="seconds") if t.started is not None else "?",
            under=t.under,
            report_href=reports.get((t.experiment, t.cell)),
        )
        for t in thin_margins(rows, runs, latest)
    ]


def _cost(
    rows: Sequence[Mapping[str, Any]], runs: Sequence[str], latest: Sequence[Mapping[str, Any]]
) -> tuple[str | None, str | None]:
    """The cost plot over the last TREND_RUNS nights (the latest included), and the latest
    night's overhead line (None: its cells have no timings)."""
    shown = runs[-(TREND_RUNS - 1) :] if TREND_RUNS > 1 else []
    nights = [[r for r in rows if r.get("suite_run") == run] for run in shown]
    line = overhead_line(summed(latest)[0])
    try:
        svg = cost_svg(night_costs([*nights, latest]))
    except Exception:  # a plot bug must not lose the page
        svg = None
    return svg, line


def _links(results: Path, latest: SuiteFolder | None) -> list[tuple[str, str]]:
    links = []
    if latest is not None:
        rel = latest.folder.relative_to(results).parts
        paths = SuitePaths(latest.folder)
        for label, path in (
            ("summary.md", paths.summary_md),
            ("junit.xml", paths.junit),
            ("suite.yaml", paths.suite),
        ):
            if path.is_file():
                links.append((label, _href(*rel, path.name)))
    if (results / FIGURE_HISTORY).is_file():
        links.append((FIGURE_HISTORY, _href(FIGURE_HISTORY)))
    return links


def _experiments(
    results: Path,
    folder: SuiteFolder | None,
    latest: Sequence[Mapping[str, Any]],
    changes: Mapping[Key, CellChange],
    history: Sequence[Mapping[str, Any]],
    runs: Sequence[str],
) -> list[ExperimentView]:
    records = (
        {}
        if folder is None
        else {str(e.get("experiment")): e for e in folder.summary.get("experiments") or []}
    )
    names = list(dict.fromkeys([*records, *(str(r["experiment"]) for r in latest)]))
    views = []
    for name in names:
        record = records.get(name, {})
        run_rel = None if folder is None else _run_rel(results, folder, record.get("run_dir"))
        mine = [r for r in latest if r.get("experiment") == name]
        cells = []
        for r in mine:
            href = None
            if run_rel is not None:
                report = RunPaths(results / run_rel).cell(str(r["cell"])).root / REPORT
                if report.is_file():
                    href = _href(*run_rel.parts, "cells", str(r["cell"]), REPORT)
            cells.append(_cell_view(r, changes.get((name, str(r["cell"]))), href))
        run_href = None
        if run_rel is not None and (results / run_rel / RUN_SUMMARY_MD).is_file():
            run_href = _href(*run_rel.parts, RUN_SUMMARY_MD)
        try:
            svg = trend_svg(name, _trend_series(name, mine, history, runs))
        except Exception:  # a plot bug must not lose the page
            svg = None
        views.append(
            ExperimentView(
                name=name,
                verdict=worst(counted(c.verdict, c.confirmation) for c in cells),
                cells=cells,
                run_href=run_href,
                error=record.get("error"),
                trend_svg=svg,
            )
        )
    return views


def write_index(results: Path, nights: int = NIGHTS, damaged: list[Damage] | None = None) -> Path:
    """Write `results/index.html` (replaced whole); ConfigError when there is nothing to index.
    Damaged input files are left out of the page and added to `damaged`."""
    page = build_index(results, nights, damaged)
    out = results_index(results)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_text(render_index(page), encoding="utf-8")
    os.replace(tmp, out)
    return out
