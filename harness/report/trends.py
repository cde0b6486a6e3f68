"""Small trend plots for results/index.html: one figure per experiment, one line per cell over
the nights (its longest stall and its lost records), and one of what the nights cost (harness
overhead, mean seconds per phase), drawn as inline SVG.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import matplotlib
import matplotlib.dates as mdates
from matplotlib.axes import Axes
from matplotlib.figure import Figure

VERDICT_MARKERS = {"pass": ("o", "tab:green"), "fail": ("X", "tab:red"), "unknown": ("s", "grey")}
PANELS = (("max_stall_s", "longest stall (s)"), ("lost", "lost records"))


@dataclass(frozen=True)
class TrendPoint:
    started: datetime
    verdict: str
    values: Mapping[str, float | None]  # figure -> value (None: undecided)


@dataclass(frozen=True)
class CostPoint:
    """One night's cost (harness.suite.cost): over its cells that have timings."""

    started: datetime
    cells: int
    overhead: int | None  # s per 100 s of scheduled workload (None: none was scheduled)
    mean_s: Mapping[str, float]  # timing key (harness.results.timings) -> mean s per cell


# The parts of a cell stacked in the cost plot (timings keys), and the planned workload drawn
# over them as a dashed line.
COST_PARTS = ("cluster", "steady_state", "workload", "heal", "recovery", "drain", "collect")
COST_PARTS_CHECKS = (*COST_PARTS, "checks")


def short_label(cell: str) -> str:
    """A cell id's number (`05` of `05_acks=1_…`), the whole id when it has none."""
    head = cell.split("_", 1)[0]
    return head if head.isdigit() else cell


def _svg(fig: Figure, salt: str) -> str:
    buffer = io.StringIO()
    # Text stays text (small files); the salt keeps clip-path ids unique across the page's SVGs.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # inline: no XML declaration or doctype


def _date_axis(ax: Axes, title: str) -> None:
    # minticks 3: a 3-day span is 3 daily ticks, not 79 hourly ones past maxticks (a warning)
    locator = mdates.AutoDateLocator(minticks=3, maxticks=6)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    ax.set_title(title, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.margins(x=0.05)


def cost_svg(points: Sequence[CostPoint]) -> str | None:
    """The nights' cost as an `<svg>` element: harness overhead per 100 s of workload, and
    mean seconds per cell stacked by phase (checks on top) under the scheduled workload
    (dashed); None before a second night with timings."""
    if len({p.started for p in points}) < 2:
        return None
    fig = Figure(figsize=(7.5, 2.4), dpi=100, layout="constrained")
    left, right = fig.subplots(1, 2)
    days = [p.started for p in points]
    overheads = [float("nan") if p.overhead is None else float(p.overhead) for p in points]
    left.plot(days, overheads, marker="o", markersize=4, linewidth=1, color="tab:blue")
    _date_axis(left, "harness overhead (s per 100 s of workload)")
    known = [p.overhead * 1.1 for p in points if p.overhead is not None]
    left.set_ylim(min([0.0, *known]), max([1.0, *known]))  # below 0: took less than planned
    parts = [[p.mean_s.get(k, 0.0) for p in points] for k in COST_PARTS_CHECKS]
    right.stackplot(days, parts, labels=[k.replace("_", " ") for k in COST_PARTS_CHECKS])
    scheduled = [p.mean_s.get("workload_scheduled", 0.0) for p in points]
    right.plot(days, scheduled, "k--", linewidth=1, label="scheduled workload")
    _date_axis(right, "mean seconds per cell")
    right.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle("cost per night", fontsize=9)
    return _svg(fig, "cost")


def trend_svg(experiment: str, series: Mapping[str, Sequence[TrendPoint]]) -> str | None:
    """The experiment's trend figure as an `<svg>` element; None before a second night."""
    if len({p.started for points in series.values() for p in points}) < 2:
        return None
    fig = Figure(figsize=(7.5, 2.2), dpi=100, layout="constrained")
    axes = fig.subplots(1, len(PANELS))
    for ax, (figure, label) in zip(axes, PANELS, strict=True):
        top = 0.0
        for cell, points in series.items():
            ys = [p.values.get(figure) for p in points]
            ax.plot(
                [p.started for p in points],
                [float("nan") if y is None else y for y in ys],
                linewidth=1,
                alpha=0.8,
                label=short_label(cell),
            )
            for verdict, (marker, colour) in VERDICT_MARKERS.items():
                mine = [
                    (p.started, y)
                    for p, y in zip(points, ys, strict=True)
                    if y is not None and p.verdict == verdict
                ]
                if mine:
                    xs, vs = zip(*mine, strict=True)
                    ax.plot(xs, vs, linestyle="none", marker=marker, color=colour, markersize=4)
            top = max([top, *(y for y in ys if y is not None)])
        _date_axis(ax, label)
        ax.set_ylim(0, max(1.0, top * 1.1))
    axes[-1].legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5), title="cell")
    fig.suptitle(experiment, fontsize=9)
    return _svg(fig, experiment)
