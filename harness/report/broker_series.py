"""The series the report's broker plot draws (harness.report.broker_plot), from metrics.parquet.

Presentation only (the summary's figures are spark_jobs/checks/broker_metrics.py's). Scrapes are
rounds: every node asked at once, its rows stamped with the round's start. A node that did
not answer a round (`up` 0) has no value there: NaN, never 0, so a line breaks at a gap and
a sum over nodes says when it is partial.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.results import broker_metrics as bm
from harness.results.broker_metrics import Gap


class BrokerSeries:
    """metrics.parquet's rows as per-round series: index = round ts (ms), columns = nodes."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        up = frame[frame["metric"] == bm.UP]
        self.rounds = np.array(sorted(frame["ts"].unique()), dtype="int64")
        # 1 answered, 0 did not, NaN not asked (the node did not exist yet, or any more).
        self.up = up.pivot_table(index="ts", columns="node", values="value", aggfunc="max")
        self.up = self.up.reindex(self.rounds)
        self.answered = self.up == 1
        self.nodes: list[str] = sorted(str(n) for n in frame["node"].unique())
        self.brokers = [n for n in self.nodes if n.startswith("broker-")]
        dedicated = [n for n in self.nodes if n.startswith("controller-")]
        self.controllers = dedicated or self.brokers
        self.exposed = set(frame["metric"].unique())

    def per_node(
        self, metric: str, labels: str = "", nodes: list[str] | None = None
    ) -> pd.DataFrame:
        """Value per round and node of the series with exactly these `labels` ('*': the sum
        over every label set); NaN where the node has none."""
        rows = self.frame[self.frame["metric"] == metric]
        if labels != "*":
            rows = rows[rows["labels"] == labels]
        table = rows.pivot_table(index="ts", columns="node", values="value", aggfunc="sum")
        wanted = nodes if nodes is not None else self.nodes
        return table.reindex(index=self.rounds, columns=wanted).astype(float)

    def summed(self, per_node: pd.DataFrame, nodes: list[str]) -> tuple[pd.Series, pd.Series]:
        """(sum over the nodes that answered, whether none of `nodes` failed to) per round;
        NaN where none answered."""
        answered = self.answered.reindex(columns=nodes, fill_value=False)
        values = per_node.reindex(columns=nodes).where(answered)
        total = values.sum(axis=1, min_count=1)
        failed = (self.up.reindex(columns=nodes) == 0).any(axis=1)
        return total, ~failed

    def counter_rates(self, metric: str, nodes: list[str]) -> pd.DataFrame:
        """Per node, the counter's increase per second since the node's previous answered round
        (a drop: the JVM restarted, its counter counts from 0 again); NaN in unanswered rounds
        and at a node's first."""
        counts = self.per_node(metric, nodes=nodes)
        out = pd.DataFrame(index=counts.index, columns=nodes, dtype=float)
        for node in nodes:
            series = counts[node].dropna()
            if series.empty:
                continue
            before = series.shift(1)
            increase = (series - before).where(series >= before, series).where(before.notna())
            seconds = pd.Series(series.index, index=series.index).diff() / 1000.0
            out.loc[series.index, node] = (increase / seconds).to_numpy()
        return out

    def counter_cumulative(self, metric: str, nodes: list[str]) -> pd.Series:
        """The counter's increase summed over nodes since the first round (restarts count from
        0), carried over rounds in which a node did not answer."""
        counts = self.per_node(metric, nodes=nodes)
        total = pd.Series(0.0, index=counts.index)
        for node in nodes:
            series = counts[node].dropna()
            if series.empty:
                continue
            before = series.shift(1)
            increase = (series - before).where(series >= before, series)
            increase = increase.where(before.notna(), 0.0)  # from the first round on
            total = total + increase.cumsum().reindex(counts.index).ffill().fillna(0.0)
        return total

    def active_controller(self) -> pd.Series:
        """Per round, the node reporting ActiveControllerCount 1 (the first by name if several
        do), None when no answering node does."""
        active = self.per_node(bm.ACTIVE_CONTROLLER, nodes=self.controllers)
        out: list[str | None] = []
        for _ts, row in active.iterrows():
            names = [str(n) for n, v in row.items() if v >= 1]
            out.append(names[0] if names else None)
        return pd.Series(out, index=active.index, dtype=object)

    def controller_value(self, metric: str) -> pd.Series:
        """Per round, `metric` as the active controller reports it; NaN without one."""
        values = self.per_node(metric, nodes=self.controllers)
        active = self.active_controller()
        out = [
            float(values.at[ts, node]) if node is not None else np.nan
            for ts, node in active.items()
        ]
        return pd.Series(out, index=values.index, dtype=float)

    def gaps(self) -> list[Gap]:
        """Each node's runs of rounds it did not answer, in node then time order."""
        gaps: list[Gap] = []
        for node in self.up.columns:
            rounds = ((int(ts), value == 0) for ts, value in self.up[node].items())
            gaps += bm.gap_runs(str(node), rounds)
        return gaps
