"""Kafka's own view of a cell over time, drawn to a PNG for the cell report: stacked panels on
the timeline's axis (seconds since the cell's first record or event), fault windows shaded
as in the timeline, and a band of each node's scrapes, so a gap reads as a gap, not as 0.

Panels (harness.report.broker_series computes them from metrics.parquet):
under-replicated partitions (the brokers' sum and each broker's), offline partitions (the
active controller's), ISR shrinks and expands per second (from the counters), the active
controller, leader and unclean elections (cumulative), produce and fetch request p99 (ms)
per broker, the scrapes.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from harness.report.broker_series import BrokerSeries
from harness.report.timeline import FAULT_COLOURS, utc
from harness.results import broker_metrics as bm
from harness.results import events as ev
from harness.results.tables import METRICS
from harness.results.windows import fault_windows

NODE_COLOURS = ("tab:blue", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:olive")
PANELS = (
    "under-replicated",
    "offline",
    "ISR changes / s",
    "active controller",
    "elections",
    "request p99 (ms)",
    "scrapes",
)
HEIGHTS = (2.0, 1.1, 1.6, 1.1, 1.3, 1.8, 0.3)  # inches; the scrapes band grows per node
GAP_STYLE: dict[str, Any] = {
    "facecolor": "#ffcdd2",
    "edgecolor": "#c62828",
    "hatch": "////",
    "linewidth": 0.5,
}


@dataclass(frozen=True)
class Axis:
    """The cell's time axis: t0 (ms) is the timeline's, so both plots line up."""

    t0: int
    t_end: int

    def s(self, ts: Any) -> Any:
        return (np.asarray(ts, dtype="float64") - self.t0) / 1000.0


def ran_without_metrics(events: list[dict[str, Any]]) -> bool:
    """The cell's cluster started without the exporters (its cluster.start names no ports)."""
    starts = [e for e in events if e.get("kind") == ev.CLUSTER_START]
    return bool(starts) and not any(e.get("metrics_ports") for e in starts)


def broker_figure(frame: pd.DataFrame, events: list[dict[str, Any]], axis: Axis) -> Figure:
    """The panels of PANELS, sharing x; raises ValueError when the frame holds no scrape."""
    series = BrokerSeries(frame)
    if not len(series.rounds) or series.up.empty:
        raise ValueError("metrics.parquet holds no scrape")
    heights = (*HEIGHTS[:-1], 0.35 + 0.22 * len(series.nodes))
    fig = Figure(figsize=(11, sum(heights) + 0.6), layout="constrained")
    axes = fig.subplots(len(PANELS), 1, sharex=True, height_ratios=heights)
    colours = {n: NODE_COLOURS[i % len(NODE_COLOURS)] for i, n in enumerate(series.nodes)}
    x = axis.s(series.rounds)
    _under_replicated(axes[0], series, x, colours)
    _offline(axes[1], series, x)
    _isr_changes(axes[2], series, x)
    _controller(axes[3], series, x, colours)
    _elections(axes[4], series, x)
    _p99(axes[5], series, x, colours)
    _scrapes(axes[6], series, axis)
    _faults(axes, events, axis, max(float(x.max()), axis.s(axis.t_end)))
    for ax in axes[:-1]:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="center left", bbox_to_anchor=(1.005, 0.5), fontsize=7)
    axes[-1].set_xlabel(f"seconds since {utc(axis.t0)} UTC")
    # The timeline's limits: matplotlib's 5 % margins around [0, its end] (so both line up).
    first, last = min(0.0, float(x.min())), max(float(x.max()), float(axis.s(axis.t_end)))
    axes[-1].set_xlim(first - 0.05 * (last - first), last + 0.05 * (last - first))
    fig.suptitle("Kafka's own metrics (JMX, scraped about once a second)", fontsize=10)
    return fig


def _counts_axis(ax: Axes) -> None:
    """Whole numbers from 0, at least up to 1 (a flat 0 is not drawn as a sliver of 0.05)."""
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
    ax.set_ylim(0, max(1.0, ax.get_ylim()[1]))


def _nothing(ax: Axes, text: str) -> None:
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        fontsize=8,
        color="dimgrey",
        transform=ax.transAxes,
    )


def _under_replicated(ax: Axes, series: BrokerSeries, x: Any, colours: dict[str, str]) -> None:
    per_node = series.per_node(bm.UNDER_REPLICATED, nodes=series.brokers)
    total, complete = series.summed(per_node, series.brokers)
    for node in series.brokers:
        ax.step(
            x,
            per_node[node],
            where="post",
            color=colours[node],
            linewidth=0.9,
            alpha=0.8,
            label=node,
        )
    ax.step(x, total.where(complete), where="post", color="black", linewidth=1.8, label="sum")
    partial = total.where(~complete)
    if partial.notna().any():
        ax.plot(
            x,
            partial,
            "o",
            mfc="none",
            color="black",
            markersize=4,
            label="sum of those that answered",
        )
    ax.set_ylabel("under-replicated\npartitions", fontsize=8)
    _counts_axis(ax)


def _offline(ax: Axes, series: BrokerSeries, x: Any) -> None:
    if bm.OFFLINE_PARTITIONS not in series.exposed:
        _nothing(ax, f"no node exposed {bm.OFFLINE_PARTITIONS}")
    else:
        values = series.controller_value(bm.OFFLINE_PARTITIONS)
        ax.step(
            x, values, where="post", color="tab:red", linewidth=1.4, label="active controller's"
        )
    ax.set_ylabel("offline\npartitions", fontsize=8)
    _counts_axis(ax)


def _isr_changes(ax: Axes, series: BrokerSeries, x: Any) -> None:
    for metric, colour, label in (
        (bm.ISR_SHRINKS, "tab:red", "shrinks/s"),
        (bm.ISR_EXPANDS, "tab:green", "expands/s"),
    ):
        if metric not in series.exposed:
            continue
        rates = series.counter_rates(metric, series.brokers)
        total, _complete = series.summed(rates, series.brokers)
        ax.step(x, total, where="pre", color=colour, linewidth=1.3, label=f"{label}, all brokers")
    ax.set_ylabel("ISR changes\nper second", fontsize=8)
    _counts_axis(ax)


def _controller(ax: Axes, series: BrokerSeries, x: Any, colours: dict[str, str]) -> None:
    if bm.ACTIVE_CONTROLLER not in series.exposed:
        _nothing(ax, f"no node exposed {bm.ACTIVE_CONTROLLER}")
        return
    active = series.active_controller()
    rows = {n: i for i, n in enumerate(series.controllers)}
    y = np.array([np.nan if n is None else rows[n] for n in active], dtype="float64")
    ax.step(x, y, where="post", color="black", linewidth=1.2)
    for node, row in rows.items():
        mask = y == row
        ax.scatter(x[mask], y[mask], s=9, color=colours[node], zorder=3)
    none = np.isnan(y)
    if none.any():
        ax.scatter(
            x[none],
            np.full(int(none.sum()), -0.6),
            marker="x",
            s=14,
            color="tab:red",
            label="no active controller answered",
            zorder=3,
        )
    ax.set_yticks(list(rows.values()), list(rows), fontsize=7)
    ax.set_ylim(-1, len(rows))
    ax.set_ylabel("active\ncontroller", fontsize=8)


def _elections(ax: Axes, series: BrokerSeries, x: Any) -> None:
    drawn = []
    for metric, colour, label in (
        (bm.LEADER_ELECTIONS, "tab:blue", "leader elections"),
        (bm.UNCLEAN_ELECTIONS, "tab:red", "unclean elections"),
    ):
        if metric not in series.exposed:
            continue
        total = series.counter_cumulative(metric, series.controllers)
        ax.step(x, total, where="post", color=colour, linewidth=1.3, label=label)
        drawn.append(label)
    missing = [] if bm.LEADER_ELECTIONS in series.exposed else ["leader elections: no such timer"]
    if missing:  # KRaft's quorum controller has no LeaderElectionRateAndTimeMs
        ax.text(
            0.005,
            0.95,
            "; ".join(missing) + " (KRaft)",
            transform=ax.transAxes,
            fontsize=7,
            color="dimgrey",
            va="top",
        )
    if not drawn:
        _nothing(ax, "no election counter exposed")
    ax.set_ylabel("elections\n(cumulative)", fontsize=8)
    _counts_axis(ax)


def _p99(ax: Axes, series: BrokerSeries, x: Any, colours: dict[str, str]) -> None:
    drawn = False
    for request, style in (("Produce", "-"), ("FetchConsumer", "--")):
        labels = bm.labels_text({"quantile": "0.99", "request": request})
        values = series.per_node(bm.REQUEST_TIME, labels, series.brokers)
        for node in series.brokers:
            column = values[node].where(series.answered.reindex(columns=[node])[node])
            if column.notna().any():
                ax.plot(
                    x,
                    column,
                    linestyle=style,
                    color=colours[node],
                    linewidth=1.0,
                    label=f"{request} {node}",
                )
                drawn = True
    if not drawn:
        _nothing(ax, "no request p99 exposed")
    ax.set_ylabel("request p99\n(ms)", fontsize=8)
    _counts_axis(ax)


def _scrapes(ax: Axes, series: BrokerSeries, axis: Axis) -> None:
    """One row per node: grey where it answered, red hatching where it did not."""
    step = float(np.median(np.diff(series.rounds))) if len(series.rounds) > 1 else 1000.0
    for row, node in enumerate(series.nodes):
        up = series.up[node] if node in series.up else pd.Series(dtype=float)
        asked = up.dropna()
        if not asked.empty:
            start, stop = axis.s(asked.index.min()), axis.s(asked.index.max() + step)
            ax.broken_barh([(start, stop - start)], (row - 0.3, 0.6), facecolors="#cfd8dc")
    for gap in series.gaps():
        row = series.nodes.index(gap.node)
        start = axis.s(gap.start_ms)
        width = (gap.end_ms + step - gap.start_ms) / 1000.0
        ax.broken_barh([(start, width)], (row - 0.4, 0.8), **GAP_STYLE)
    ax.set_yticks(range(len(series.nodes)), series.nodes, fontsize=7)
    ax.set_ylim(len(series.nodes) - 0.5, -0.5)
    ax.set_ylabel("scrapes", fontsize=8)
    ax.legend(
        handles=[
            Patch(facecolor="#cfd8dc", label="answered"),
            Patch(**GAP_STYLE, label="no answer (a gap)"),
        ],
        loc="center left",
        bbox_to_anchor=(1.005, 0.5),
        fontsize=7,
    )


def _faults(axes: Any, events: list[dict[str, Any]], axis: Axis, end_s: float) -> None:
    for i, window in enumerate(fault_windows(events)):
        start = axis.s(window.start_ms)
        stop = end_s if window.end_ms is None else axis.s(window.end_ms)
        colour = FAULT_COLOURS[i % len(FAULT_COLOURS)]
        for ax in axes:
            ax.axvspan(start, stop, color=colour, alpha=0.15, linewidth=0)
        axes[0].text(
            start,
            0.97 - 0.12 * (i % 4),
            f" {window.label}",
            color=colour,
            fontsize=8,
            va="top",
            transform=axes[0].get_xaxis_transform(),
        )


def broker_plot_png(
    path: Path, events: list[dict[str, Any]], span: tuple[int, int] | None
) -> tuple[bytes | None, str | None]:
    """(the PNG, None), or (None, the sentence saying why there is no figure). `span` is the
    timeline's (harness.report.timeline.time_span); None: the scrapes' own."""
    if not path.is_file():
        if ran_without_metrics(events):
            return None, "No plot: the cell ran without Kafka's metrics (cluster.metrics false)."
        return None, f"No plot: the cell folder has no {path.name} (no scrape was written)."
    try:
        frame = pq.read_table(path, columns=list(METRICS.names)).to_pandas()
    except Exception as exc:  # pyarrow raises several types; any means "cannot draw"
        return None, f"No plot: {path.name} is unreadable ({type(exc).__name__}: {exc})."
    if frame.empty or not (frame["metric"] == bm.UP).any():
        return None, f"No plot: {path.name} holds no scrape."
    if span is None:
        span = int(frame["ts"].min()), int(frame["ts"].max())
    fig = broker_figure(frame, events, Axis(*span))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue(), None
