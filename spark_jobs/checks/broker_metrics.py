"""The summary's `broker` section: Kafka's own view of the cell, from metrics.parquet (the
JMX exporters' scrapes) and the history. Undecided figures are under `undecided` as
`broker.<figure>`.

Pure pandas on a small table (a few hundred thousand rows at most). Scrapes are rounds: every
node asked at once, its rows stamped with the round's start, so the rows of one `ts` are one
moment of the cluster. A figure is decided only from the nodes it needs answering whenever
they should have: a node whose scrape failed (`up` 0) outside a fault acting on it (a fault
window whose `target` names it, plus RESTART_GRACE_MS for the JVM to come back) leaves the
figures that need it undecided, naming the node and the span; never 0. A counter's figure
(shrinks, expands, elections) survives a gap its counter bridges: sampled on both sides, not
lower after. A metric that no node exposes (a mode or version without that MBean) leaves its
figure undecided too.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from harness.results import broker_metrics as bm
from harness.results import events as ev
from harness.results.events import Event
from harness.results.layout import CellPaths
from harness.results.metrics import BROKER_FIGURES, BROKER_PREFIX, Figures
from harness.results.windows import FaultWindow, fault_windows
from spark_jobs.check import Check
from spark_jobs.context import CellContext

# After a fault on a node heals, its JVM starts again before it answers scrapes.
RESTART_GRACE_MS = 30_000
# Figures that are a counter's increase: decided across a gap the counter bridges.
COUNTERS = frozenset(
    {"isr_shrinks", "isr_expands", "leader_elections", "unclean_elections", "elr_elections"}
)
BrokerPart = tuple[dict[str, float | int | None], dict[str, str]]  # figures, undecided

DECIDES = tuple(BROKER_PREFIX + name for name in BROKER_FIGURES)


def run(ctx: CellContext) -> Figures:
    history = ctx.data.history
    frame = read_metrics(CellPaths(ctx.cell_dir).metrics)
    if frame is None:
        reason = (
            "metrics.parquet missing (the scraper wrote none)"
            if ran_with_metrics(history)
            else "metrics.parquet missing: the cell ran without metrics "
            "(cluster.metrics false, or a folder from before them)"
        )
        figures, undecided = all_undecided(reason)
    else:
        version = next(
            (str(e.get("version")) for e in history if e.get("kind") == "cluster.start"), ""
        )
        figures, undecided = broker_figures(frame, history, version)
    return {
        "broker": figures,
        "undecided": {BROKER_PREFIX + k: v for k, v in undecided.items()},
    }


def read_metrics(path: Path) -> pd.DataFrame | None:
    """metrics.parquet as a frame (None when the file is not there)."""
    if not path.is_file():
        return None
    return pq.read_table(path).to_pandas()


def ran_with_metrics(history: list[Event]) -> bool:
    """Whether the cell's cluster had the exporters (its cluster.start names their ports)."""
    return any(e.get("metrics_ports") for e in history if e.get("kind") == ev.CLUSTER_START)


def all_undecided(reason: str) -> BrokerPart:
    return dict.fromkeys(BROKER_FIGURES), dict.fromkeys(BROKER_FIGURES, reason)


def _explained(node: str, ts: int, windows: list[FaultWindow]) -> bool:
    for w in windows:
        if node not in w.target.split(","):
            continue
        end = None if w.end_ms is None else w.end_ms + RESTART_GRACE_MS
        # A round is stamped when sent: it may have failed up to the scrape timeout later.
        if w.start_ms <= ts + bm.SCRAPE_TIMEOUT_S * 1000 and (end is None or ts <= end):
            return True
    return False


def unexplained_gaps(frame: pd.DataFrame, history: list[Event]) -> list[bm.Gap]:
    """Each node's runs of failed scrapes that no fault on it explains."""
    windows = [w for w in fault_windows(history) if not w.consumer_crash]
    workload = workload_start(history)
    up = frame[frame["metric"] == bm.UP].sort_values("ts")
    gaps: list[bm.Gap] = []
    for node, rows in up.groupby("node", sort=True):
        name = str(node)
        answered = rows.loc[rows["value"] > 0, "ts"]
        warm_until = min(int(answered.min()), workload) if not answered.empty else -1
        rounds = (
            (ts, value == 0 and ts >= warm_until and not _explained(name, ts, windows))
            for ts, value in zip(map(int, rows["ts"]), rows["value"], strict=True)
        )
        gaps += bm.gap_runs(name, rounds)
    return gaps


def workload_start(history: list[Event]) -> int:
    """When the workload phase began (ms); 0 without one (no warm-up is then excused).

    A fresh agent's first answer can take seconds (its collectors start on the first ask):
    a node's failed scrapes before its first answer, before any record was written, are the
    agent warming up, not a gap in what the figures measure."""
    for e in history:
        if e.get("kind") == "phase" and e.get("phase") == "workload":
            return int(e.get("ts") or 0)
    return 0


def controller_nodes(nodes: set[str]) -> set[str]:
    dedicated = {n for n in nodes if n.startswith("controller-")}
    return dedicated or {n for n in nodes if n.startswith("broker-")}


def _series(frame: pd.DataFrame, metric: str, labels: str | None = None) -> pd.DataFrame:
    rows = frame[frame["metric"] == metric]
    if labels is not None:
        rows = rows[rows["labels"] == labels]
    return rows


def _seconds_where(rounds: pd.Series) -> float:
    """Seconds the per-round values were > 0: each round counts until the next one."""
    if rounds.empty:
        return 0.0
    ts = rounds.index.to_series().sort_values()
    nxt = ts.shift(-1).fillna(ts.iloc[-1])
    held = (nxt - ts)[rounds.sort_index() > 0]
    return float(held.sum()) / 1000.0


def counter_increase(rows: pd.DataFrame) -> float:
    """A counter's increase summed over nodes; a drop (the JVM restarted) counts from 0."""
    total = 0.0
    for _node, series in rows.sort_values("ts").groupby("node"):
        values = series["value"].tolist()
        for before, after in itertools.pairwise(values):
            total += after - before if after >= before else after
    return total


def counter_bridges(rows: pd.DataFrame, gap: bm.Gap) -> bool:
    """Whether a counter of the gap's node lost nothing in the gap: sampled on both sides and
    not lower after it. Outside its faults nothing restarts a node's JVM (a halted broker
    stays down), so the increase across the gap is the sum of what the gap hid; a lower
    value means a restart did happen, and what it counted before the reset is unknown."""
    own = rows[rows["node"] == gap.node]
    before = own.loc[own["ts"] < gap.start_ms, ["ts", "value"]]
    after = own.loc[own["ts"] > gap.end_ms, ["ts", "value"]]
    if before.empty or after.empty:
        return False
    last = before.sort_values("ts")["value"].iloc[-1]
    first = after.sort_values("ts")["value"].iloc[0]
    return bool(first >= last)


def controller_changes(frame: pd.DataFrame) -> int:
    """Times the node reporting ActiveControllerCount 1 changed, round to round."""
    active = _series(frame, bm.ACTIVE_CONTROLLER)
    active = active[active["value"] >= 1].sort_values(["ts", "node"])
    changes, last = 0, None
    for _ts, rows in active.groupby("ts", sort=True):
        node = str(rows["node"].iloc[0])
        if last is not None and node != last:
            changes += 1
        last = node
    return changes


def offline_rounds(frame: pd.DataFrame) -> pd.Series:
    """Each round's OfflinePartitionsCount as the active controller (the node with
    ActiveControllerCount 1 in that round) reported it; a round without one counts 0."""
    active = _series(frame, bm.ACTIVE_CONTROLLER)
    active = active[active["value"] >= 1][["ts", "node"]]
    offline = _series(frame, bm.OFFLINE_PARTITIONS)[["ts", "node", "value"]]
    joined = active.merge(offline, on=["ts", "node"])
    rounds = joined.groupby("ts")["value"].max()
    all_rounds = pd.Series(0.0, index=sorted(frame["ts"].unique()))
    all_rounds.loc[rounds.index] = rounds
    return all_rounds


def under_replicated(frame: pd.DataFrame) -> tuple[float, float]:
    """(max over rounds of the brokers' sum, seconds that sum was > 0)."""
    rows = _series(frame, bm.UNDER_REPLICATED)
    sums = rows.groupby("ts")["value"].sum()
    all_rounds = pd.Series(0.0, index=sorted(frame["ts"].unique()))
    all_rounds.loc[sums.index] = sums
    return float(sums.max()) if not sums.empty else 0.0, _seconds_where(all_rounds)


def p99_max(frame: pd.DataFrame, request: str) -> float | None:
    rows = _series(frame, bm.REQUEST_TIME, bm.labels_text({"quantile": "0.99", "request": request}))
    return None if rows.empty else float(rows["value"].max())


def broker_figures(frame: pd.DataFrame, history: list[Event], version: str = "") -> BrokerPart:
    """Every BROKER_FIGURES figure, and the reason of each one undecided."""
    figures: dict[str, float | int | None] = dict.fromkeys(BROKER_FIGURES)
    undecided: dict[str, str] = {}
    up = frame[frame["metric"] == bm.UP]
    if up.empty:
        return all_undecided("metrics.parquet holds no scrape")
    nodes = set(up["node"].astype(str))
    brokers = {n for n in nodes if n.startswith("broker-")}
    controllers = controller_nodes(nodes)
    gaps = unexplained_gaps(frame, history)

    def gap_reason(needed: set[str], counter: str | None = None) -> str | None:
        rows = _series(frame, counter) if counter else None
        hit = [
            g.text()
            for g in gaps
            if g.node in needed and (rows is None or not counter_bridges(rows, g))
        ]
        return (
            "; ".join(hit[:3]) + (f" (+{len(hit) - 3} more)" if len(hit) > 3 else "")
            if hit
            else None
        )

    exposed = set(frame["metric"].unique())

    def missing(metric: str) -> str | None:
        if metric in exposed:
            return None
        where = f"Kafka {version}" if version else "this cluster"
        return f"no node exposed {metric} (no such MBean in {where}, this mode)"

    needs = {
        "under_replicated_max": (brokers, bm.UNDER_REPLICATED),
        "under_replicated_s": (brokers, bm.UNDER_REPLICATED),
        "isr_shrinks": (brokers, bm.ISR_SHRINKS),
        "isr_expands": (brokers, bm.ISR_EXPANDS),
        "produce_p99_ms_max": (brokers, bm.REQUEST_TIME),
        "fetch_p99_ms_max": (brokers, bm.REQUEST_TIME),
        "offline_partitions_s": (controllers, bm.OFFLINE_PARTITIONS),
        "offline_partitions_max": (controllers, bm.OFFLINE_PARTITIONS),
        "leader_elections": (controllers, bm.LEADER_ELECTIONS),
        "unclean_elections": (controllers, bm.UNCLEAN_ELECTIONS),
        "elr_elections": (controllers, bm.ELR_ELECTIONS),
        "controller_changes": (controllers, bm.ACTIVE_CONTROLLER),
    }
    urp_max, urp_s = under_replicated(frame)
    offline = offline_rounds(frame)
    values: dict[str, float | int | None] = {
        "under_replicated_max": int(urp_max),
        "under_replicated_s": urp_s,
        "isr_shrinks": int(counter_increase(_series(frame, bm.ISR_SHRINKS))),
        "isr_expands": int(counter_increase(_series(frame, bm.ISR_EXPANDS))),
        "produce_p99_ms_max": p99_max(frame, "Produce"),
        "fetch_p99_ms_max": p99_max(frame, "FetchConsumer"),
        "offline_partitions_s": _seconds_where(offline),
        "offline_partitions_max": int(offline.max()) if not offline.empty else 0,
        "leader_elections": int(counter_increase(_series(frame, bm.LEADER_ELECTIONS))),
        "unclean_elections": int(counter_increase(_series(frame, bm.UNCLEAN_ELECTIONS))),
        "elr_elections": int(counter_increase(_series(frame, bm.ELR_ELECTIONS))),
        "controller_changes": controller_changes(frame),
    }
    for name in BROKER_FIGURES:
        needed, metric = needs[name]
        reason = missing(metric) or gap_reason(needed, metric if name in COUNTERS else None)
        if reason is None and values[name] is None:
            reason = f"no {metric} sample for this request"
        if reason is None:
            figures[name] = values[name]
        else:
            undecided[name] = reason
    return figures, undecided


CHECK = Check("broker_metrics", needs=(), decides=("broker", *DECIDES), run=run)
