"""Timeline of a cell: per-second series, fault windows and phases, drawn to a PNG; below
them the ISR of the workload's topic when the history has it (harness.report.isr_band).

pandas is used for presentation only (the checks live in spark_jobs/verify).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from harness.report.isr_band import IsrBand, band_height_in
from harness.results import events as ev
from harness.results.consumers import set_of
from harness.results.windows import fault_windows as fault_windows  # (re-exported)

FAULT_COLOURS = ("tab:orange", "tab:purple", "tab:olive", "tab:cyan", "tab:brown", "tab:pink")
# Producer series solid and fixed (errors red); consumer sets dashed in the remaining colours.
SERIES_STYLES = {
    "acked/s": {"color": "tab:blue", "linewidth": 1.6},
    "errors/s": {"color": "tab:red", "linewidth": 1.2},
}
SET_COLOURS = ("tab:green", "tab:grey", "black", "tab:pink", "tab:brown")


@dataclass(frozen=True)
class PhaseMark:
    ts: int
    phase: str


def phase_marks(events: list[dict[str, Any]]) -> list[PhaseMark]:
    return [
        PhaseMark(int(e["ts"]), str(e.get("phase", "?")))
        for e in sorted(events, key=lambda e: e["ts"])
        if e["kind"] == ev.PHASE
    ]


def utc(ts_ms: int) -> str:
    stamp = datetime.fromtimestamp(ts_ms / 1000, tz=timezone.utc)
    return stamp.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def time_span(
    ledger: pd.DataFrame | None, consumed: pd.DataFrame | None, events: list[dict[str, Any]]
) -> tuple[int, int] | None:
    """First and last ms seen anywhere in the cell's records, or None when there are none."""
    stamps: list[float] = [float(e["ts"]) for e in events]
    for frame, cols in ((ledger, ("send_ts", "ack_ts")), (consumed, ("ts",))):
        if frame is None:
            continue
        for col in cols:
            values = frame[col].dropna()
            if len(values):
                stamps += [float(values.min()), float(values.max())]
    if not stamps:
        return None
    return int(min(stamps)), int(max(stamps))


def _per_second(ts_ms: pd.Series, t0: int, n: int) -> pd.Series:
    seconds = ((ts_ms.dropna() - t0) // 1000).astype("int64")
    return seconds.value_counts().reindex(range(n), fill_value=0).sort_index()


def per_second_series(
    ledger: pd.DataFrame | None, consumed: pd.DataFrame | None, t0: int, t_end: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rates (records per second) and consumer lag, indexed by whole seconds since t0.

    Lag per set = records acked so far - distinct records the set consumed so far.
    """
    n = (t_end - t0) // 1000 + 1
    rates = pd.DataFrame(index=pd.RangeIndex(n))
    lag = pd.DataFrame(index=pd.RangeIndex(n))
    acked_so_far = None
    if ledger is not None:
        ok = ledger[ledger["status"] == "ok"]
        acked = _per_second(ok["ack_ts"], t0, n)
        rates["acked/s"] = acked
        bad = ledger[ledger["status"].isin(["fail", "unknown"])]
        rates["errors/s"] = _per_second(bad["ack_ts"].fillna(bad["send_ts"]), t0, n)
        acked_so_far = acked.cumsum()
    if consumed is not None:
        # Per distinct member, not per row: a 10 M-row cell has a handful of members.
        codes, members = pd.factorize(consumed["consumer"].astype(str))
        sets = np.array([set_of(m) for m in members], dtype=object)
        for name in sorted(set(sets)):
            rows = consumed[np.isin(codes, np.flatnonzero(sets == name))]
            rates[f"consumed/s {name}"] = _per_second(rows["ts"], t0, n)
            if acked_so_far is not None:
                first_seen = first_consumed(rows["seq"], rows["ts"])
                lag[f"lag {name}"] = acked_so_far - _per_second(first_seen, t0, n).cumsum()
    return rates, lag


def first_consumed(seq: pd.Series, ts: pd.Series) -> pd.Series:
    """Each seq's first consumption time (ms), one value per distinct seq (order not kept).

    A ledger's seqs are dense from 0: a minimum per slot of an array (0.16 s for 10 M rows,
    against 2.2 s for pandas' groupby, which stays the way for anything else)."""
    dense = (
        len(seq) > 0
        and pd.api.types.is_integer_dtype(seq)
        and pd.api.types.is_integer_dtype(ts)
        and int(seq.min()) >= 0
        and int(seq.max()) < 4 * len(seq) + 1_000_000
    )
    if not dense:
        return ts.groupby(seq).min()
    none = np.iinfo(np.int64).max
    first = np.full(int(seq.max()) + 1, none, dtype=np.int64)
    np.minimum.at(first, seq.to_numpy(dtype=np.int64), ts.to_numpy(dtype=np.int64))
    return pd.Series(first[first != none])


def plot_timeline(
    ledger: pd.DataFrame | None,
    consumed: pd.DataFrame | None,
    events: list[dict[str, Any]],
    overloaded: Sequence[tuple[int, int]] = (),
) -> bytes:
    """The timeline as a PNG (timeline_figure)."""
    return _png(timeline_figure(ledger, consumed, events, overloaded))


def timeline_figure(
    ledger: pd.DataFrame | None,
    consumed: pd.DataFrame | None,
    events: list[dict[str, Any]],
    overloaded: Sequence[tuple[int, int]] = (),
) -> Figure:
    """Rates (top) and lag (middle), and the ISR band (bottom) when the history has
    partition states; fault windows shaded, phase changes as lines; the machine's
    overloaded spans (harness.results.machine) as a black strip under the rates: what was
    measured there is the machine's as much as Kafka's.

    Uses a bare Figure (no pyplot): no global backend state, safe from any thread.
    """
    isr = IsrBand(events)
    band_in = band_height_in(len(isr.rows)) if isr else 0.0
    fig = Figure(figsize=(11, 6.5 + band_in), layout="constrained")
    # The rates and the lag keep their 6.5 in (5 parts of 1.3 in); the band gets its own.
    ratios = (3, 2, band_in / 1.3) if isr else (3, 2)
    top, bottom, *band = fig.subplots(len(ratios), 1, sharex=True, height_ratios=ratios)
    axes = (top, bottom, *band)
    span = time_span(ledger, consumed, events)
    if span is None:
        top.text(0.5, 0.5, "no records and no history: nothing to draw", ha="center")
        return fig
    t0, t_end = span
    rates, lag = per_second_series(ledger, consumed, t0, t_end)
    set_styles: dict[str, dict[str, Any]] = {}
    for column in [*rates.columns, *lag.columns]:
        name = column.split(" ", 1)[-1]
        if column not in SERIES_STYLES and name not in set_styles:
            colour = SET_COLOURS[len(set_styles) % len(SET_COLOURS)]
            set_styles[name] = {"color": colour, "linewidth": 1.1, "linestyle": "--"}
    for column in rates.columns:
        style = SERIES_STYLES.get(column) or set_styles[column.split(" ", 1)[-1]]
        top.plot(rates.index, rates[column], label=column, **style)
    for column in lag.columns:
        style = {**set_styles[column.split(" ", 1)[-1]], "linestyle": "-"}
        bottom.plot(lag.index, lag[column], label=column, **style)
    if len(lag.columns) == 0:
        bottom.text(
            0.5,
            0.5,
            "no lag: needs both ledger and consumed records",
            ha="center",
            transform=bottom.transAxes,
        )
    end_s = (t_end - t0) / 1000
    for i, window in enumerate(fault_windows(events)):
        start = (window.start_ms - t0) / 1000
        stop = end_s if window.end_ms is None else (window.end_ms - t0) / 1000
        colour = FAULT_COLOURS[i % len(FAULT_COLOURS)]
        for ax in axes:
            ax.axvspan(start, stop, color=colour, alpha=0.15, linewidth=0)
        suffix = "" if window.end_ms is not None else " (not healed)"
        top.text(
            start,
            0.97 - 0.08 * (i % 4),
            f" {window.label}{suffix}",
            color=colour,
            fontsize=8,
            va="top",
            transform=top.get_xaxis_transform(),
        )
    for i, (start_ms, end_ms) in enumerate(overloaded):
        top.axvspan(
            (start_ms - t0) / 1000,
            (end_ms - t0) / 1000,
            ymin=0,
            ymax=0.04,
            color="black",
            linewidth=0,
            label="machine overloaded" if i == 0 else None,
        )
    for mark in phase_marks(events):
        x = (mark.ts - t0) / 1000
        for ax in axes:
            ax.axvline(x, color="grey", linestyle="--", linewidth=0.8)
        bottom.text(
            x,
            0.02,
            f" {mark.phase}",
            rotation=90,
            fontsize=7,
            color="dimgrey",
            va="bottom",
            transform=bottom.get_xaxis_transform(),
        )
    for ax in band:
        isr.draw(ax, t0, t_end)
    top.set_ylabel("records / s")
    bottom.set_ylabel("consumer lag (records)")
    axes[-1].set_xlabel(f"seconds since {utc(t0)} UTC")
    for ax in (top, bottom):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize=8)
        ax.grid(True, alpha=0.3)
    return fig


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


def png_data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
