"""Small trend plots for results/index.html: one figure per experiment, one line per cell over
the nights (its longest stall and its lost records), drawn as inline SVG.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import matplotlib
import matplotlib.dates as mdates
from matplotlib.figure import Figure

VERDICT_MARKERS = {"pass": ("o", "tab:green"), "fail": ("X", "tab:red"), "unknown": ("s", "grey")}
PANELS = (("max_stall_s", "longest stall (s)"), ("lost", "lost records"))


@dataclass(frozen=True)
class TrendPoint:
    started: datetime
    verdict: str
    values: Mapping[str, float | None]  # figure -> value (None: undecided)


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
        locator = mdates.AutoDateLocator(maxticks=6)  # type: ignore[no-untyped-call]
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
        ax.set_title(label, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_ylim(0, max(1.0, top * 1.1))
        ax.margins(x=0.05)
    axes[-1].legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5), title="cell")
    fig.suptitle(experiment, fontsize=9)
    return _svg(fig, experiment)
