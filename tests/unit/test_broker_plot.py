"""The report's plot of Kafka's own metrics: its series on a hand-built metrics frame (gaps are
NaN, never 0; counters restart from 0; the active controller), the figure and its panels, and
the sentence in place of a figure when a cell has no metrics.parquet."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.report.broker_plot import PANELS, Axis, broker_figure, broker_plot_png
from harness.report.broker_series import BrokerSeries, Gap
from harness.report.cell_report import write_cell_report
from harness.results import broker_metrics as bm
from harness.results.tables import METRICS, write_table

T0 = 1_000_000
BROKERS = ("broker-1", "broker-2", "broker-3")
KILLED = range(5, 10)  # seconds in which broker-1 does not answer
P99 = {"Produce": 4.0, "FetchConsumer": 500.0}


def row(second: int, node: str, metric: str, value: float, labels: str = "") -> dict[str, Any]:
    return {
        "ts": T0 + second * 1000,
        "node": node,
        "metric": metric,
        "labels": labels,
        "value": value,
    }


def cell_frame() -> pd.DataFrame:
    """Three combined brokers over 20 s: broker-1 (the controller) killed from 5 to 9, the
    controller moves to broker-2, broker-2 and -3 report 4 under-replicated partitions and
    shrink the ISR meanwhile; broker-1's counters start from 0 again after its restart."""
    rows = []
    for s in range(20):
        for node in BROKERS:
            if node == "broker-1" and s in KILLED:
                rows.append(row(s, node, bm.UP, 0.0, "error=URLError"))
                continue
            rows.append(row(s, node, bm.UP, 1.0))
            hurt = node != "broker-1" and 5 <= s < 14
            rows.append(row(s, node, bm.UNDER_REPLICATED, 2.0 if hurt else 0.0))
            shrinks = (3 if s >= 6 else 0) if node != "broker-1" else (7 if s < 5 else 1)
            rows.append(row(s, node, bm.ISR_SHRINKS, float(shrinks)))
            rows.append(row(s, node, bm.ISR_EXPANDS, 3.0 if node != "broker-1" and s >= 14 else 0))
            controller = node == ("broker-1" if s < 5 else "broker-2")
            rows.append(row(s, node, bm.ACTIVE_CONTROLLER, 1.0 if controller else 0.0))
            rows.append(row(s, node, bm.OFFLINE_PARTITIONS, 1.0 if controller and s == 6 else 0))
            rows.append(row(s, node, bm.UNCLEAN_ELECTIONS, 1.0 if controller and s >= 7 else 0))
            for request, ms in P99.items():
                labels = bm.labels_text({"quantile": "0.99", "request": request})
                rows.append(row(s, node, bm.REQUEST_TIME, ms, labels))
    return pd.DataFrame(rows)


def history(metrics: bool = True) -> list[dict[str, Any]]:
    ports = {"metrics_ports": {n: 9000 + i for i, n in enumerate(BROKERS)}} if metrics else {}
    fault = {"fault_id": 1, "fault": "kill", "target": "broker-1"}
    return [
        {"ts": T0 - 2000, "kind": "cluster.start", "mode": "kraft", **ports},
        {"ts": T0 + 5000, "kind": "fault.inject", **fault},
        {"ts": T0 + 9500, "kind": "fault.heal", **fault},
    ]


def test_a_gap_is_nan_and_marks_the_sum_partial_never_zero() -> None:
    series = BrokerSeries(cell_frame())
    urp = series.per_node(bm.UNDER_REPLICATED, nodes=series.brokers)
    gap_rounds = [T0 + s * 1000 for s in KILLED]
    assert urp.loc[gap_rounds, "broker-1"].isna().all()
    total, complete = series.summed(urp, series.brokers)
    assert list(total.loc[gap_rounds]) == [4.0] * len(KILLED)  # the two that answered
    assert not complete.loc[gap_rounds].any()
    assert complete.drop(index=gap_rounds).all()
    assert series.gaps() == [Gap("broker-1", T0 + 5000, T0 + 9000)]


def test_counter_rates_and_cumulative_count_a_restart_from_zero() -> None:
    series = BrokerSeries(cell_frame())
    rates = series.counter_rates(bm.ISR_SHRINKS, series.brokers)
    # broker-1: 7 before the kill, 1 at its first answer after it (restarted): 1 over 6 s.
    assert math.isclose(rates.at[T0 + 10_000, "broker-1"], 1 / 6)
    assert rates.loc[[T0 + s * 1000 for s in KILLED], "broker-1"].isna().all()
    assert rates.at[T0 + 6000, "broker-2"] == 3.0
    total = series.counter_cumulative(bm.ISR_SHRINKS, series.brokers)
    assert total.iloc[-1] == 3 + 3 + 1


def test_active_controller_and_its_offline_partitions() -> None:
    series = BrokerSeries(cell_frame())
    active = series.active_controller()
    assert active.loc[T0] == "broker-1"
    assert active.loc[T0 + 6000] == "broker-2"
    offline = series.controller_value(bm.OFFLINE_PARTITIONS)
    assert offline.loc[T0 + 6000] == 1.0 and offline.drop(index=T0 + 6000).sum() == 0
    assert series.counter_cumulative(bm.UNCLEAN_ELECTIONS, series.controllers).iloc[-1] == 1


def test_the_figure_has_every_panel_on_the_cells_axis() -> None:
    fig = broker_figure(cell_frame(), history(), Axis(T0 - 2000, T0 + 21_000))
    axes = fig.get_axes()
    assert len(axes) == len(PANELS)
    labels = [ax.get_ylabel().replace("\n", " ") for ax in axes]
    for word in (
        "under-replicated",
        "offline",
        "ISR changes",
        "controller",
        "elections",
        "p99",
        "scrapes",
    ):
        assert any(word in label for label in labels), (word, labels)
    legend = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert {"broker-1", "sum", "sum of those that answered"} <= set(legend)
    p99 = [t.get_text() for t in axes[5].get_legend().get_texts()]
    assert "Produce broker-2" in p99 and "FetchConsumer broker-3" in p99
    # x in seconds since the cell's t0 (2 s before the first scrape).
    first_line = axes[0].get_lines()[0]
    assert np.asarray(first_line.get_xdata(), dtype=float)[0] == 2.0
    assert axes[-1].get_xlabel().startswith("seconds since")
    assert len(axes[6].collections) >= 2  # the answered bars and broker-1's gap


def write_cell(folder: Path, frame: pd.DataFrame | None, metrics: bool = True) -> Path:
    folder.mkdir()
    lines = [json.dumps(e) for e in history(metrics)]
    (folder / "history.jsonl").write_text("\n".join(lines) + "\n")
    if frame is not None:
        write_table(folder / "metrics.parquet", METRICS, frame.to_dict(orient="list"))
    return folder


def test_the_cell_report_embeds_the_figure(tmp_path: Path) -> None:
    cell = write_cell(tmp_path / "cell", cell_frame())
    png, note = broker_plot_png(cell / "metrics.parquet", history(), None)
    assert note is None and png is not None and png.startswith(b"\x89PNG")
    html = write_cell_report(cell).read_text()
    section = html.split("<h2>Kafka's own metrics over time</h2>", 1)[1].split("<h2>", 1)[0]
    assert 'src="data:image/png;base64,' in section


def test_no_metrics_file_no_figure_and_a_sentence_why(tmp_path: Path) -> None:
    without = write_cell(tmp_path / "off", None, metrics=False)
    png, note = broker_plot_png(without / "metrics.parquet", history(False), None)
    assert png is None and note is not None and "cluster.metrics false" in note
    lost = write_cell(tmp_path / "lost", None)
    png, note = broker_plot_png(lost / "metrics.parquet", history(), None)
    assert png is None and note is not None and "no metrics.parquet" in note
    html = write_cell_report(without).read_text()
    section = html.split("<h2>Kafka's own metrics over time</h2>", 1)[1].split("<h2>", 1)[0]
    assert "cluster.metrics false" in section and "<img" not in section


def test_a_file_without_a_scrape_is_said_so(tmp_path: Path) -> None:
    empty = cell_frame().iloc[0:0]
    cell = write_cell(tmp_path / "empty", empty)
    png, note = broker_plot_png(cell / "metrics.parquet", history(), None)
    assert png is None and note is not None and "holds no scrape" in note
