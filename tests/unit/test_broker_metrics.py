"""Kafka's own metrics: Prometheus text into rows, the `broker` figures on hand-built frames,
and `broker.<figure>` expectations."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from harness.results import broker_metrics as bm
from harness.results.metrics import BROKER_FIGURES
from harness.spec.expect import ALLOWED_METRICS, metric_problem, parse_expectation
from harness.verdict.checks import evaluate, lookup
from spark_jobs.checks import broker_metrics as cb

T0 = 1_000_000


def test_exposition_rows_keep_kafka_samples_with_canonical_labels() -> None:
    text = """# HELP kafka_server_replicamanager_isrshrinks_total Count
# TYPE kafka_server_replicamanager_isrshrinks_total counter
kafka_server_replicamanager_isrshrinks_total 3.0
# TYPE kafka_network_requestmetrics_totaltimems gauge
kafka_network_requestmetrics_totaltimems{request="Produce",quantile="0.99"} 12.5
# TYPE jvm_threads_current gauge
jvm_threads_current 80.0
"""
    assert bm.exposition_rows(text) == [
        ("kafka_server_replicamanager_isrshrinks_total", "", 3.0),
        ("kafka_network_requestmetrics_totaltimems", "quantile=0.99,request=Produce", 12.5),
    ]


def test_labels_round_trip_with_separators_in_values() -> None:
    labels = {"topic": "a,b", "error": "x=1 %"}
    text = bm.labels_text(labels)
    assert text.count(",") == 1
    assert bm.parse_labels(text) == labels


class Frame:
    """metrics.parquet rows built by hand: rounds one second apart."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def round(self, second: int, node: str, up: bool = True, **metrics: float) -> Frame:
        ts = T0 + second * 1000
        self.rows.append(
            {"ts": ts, "node": node, "metric": bm.UP, "labels": "", "value": 1.0 if up else 0.0}
        )
        for key, value in metrics.items():
            name = getattr(bm, key.upper())
            self.rows.append({"ts": ts, "node": node, "metric": name, "labels": "", "value": value})
        return self

    def steady(self, seconds: range, node: str, **metrics: float) -> Frame:
        for s in seconds:
            self.round(s, node, **metrics)
        return self

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)


def kill(node: str, start_s: int, end_s: int) -> list[dict[str, Any]]:
    return [
        {
            "ts": T0 + start_s * 1000,
            "kind": "fault.inject",
            "fault_id": 1,
            "fault": "kill",
            "target": node,
        },
        {
            "ts": T0 + end_s * 1000,
            "kind": "fault.heal",
            "fault_id": 1,
            "fault": "kill",
            "target": node,
        },
    ]


def test_counter_reset_after_a_restart_counts_from_zero() -> None:
    f = Frame()
    for s, value in enumerate([0, 2, 5, 1, 3]):  # restarted between 5 and 1
        f.round(s, "broker-1", isr_shrinks=value)
    assert cb.counter_increase(f.frame()[f.frame()["metric"] == bm.ISR_SHRINKS]) == 5 + 1 + 2


def test_controller_change_and_offline_rounds_of_the_active_controller() -> None:
    f = Frame()
    for s in range(6):
        active = "broker-1" if s < 3 else "broker-2"
        for node in ("broker-1", "broker-2"):
            f.round(
                s,
                node,
                active_controller=1.0 if node == active else 0.0,
                # only the active one's count matters: a stale 7 from the other is not it
                offline_partitions=(2.0 if s in (3, 4) else 0.0) if node == active else 7.0,
            )
    frame = f.frame()
    assert cb.controller_changes(frame) == 1
    assert cb.offline_rounds(frame).tolist() == [0.0, 0.0, 0.0, 2.0, 2.0, 0.0]


def test_under_replicated_sum_over_brokers_and_its_seconds() -> None:
    f = Frame()
    for s in range(5):
        f.round(s, "broker-1", under_replicated=1.0 if s in (1, 2) else 0.0)
        f.round(s, "broker-2", under_replicated=2.0 if s == 2 else 0.0)
    assert cb.under_replicated(f.frame()) == (3.0, 2.0)


def _cluster(gap_node_up: bool) -> pd.DataFrame:
    """broker-1 killed at 2..4 s (its scrapes fail), broker-2 misses one scrape at 8 s unless
    `gap_node_up`."""
    f = Frame()
    for s in range(10):
        f.round(
            s,
            "broker-1",
            up=not 2 <= s <= 4,
            under_replicated=0.0,
            isr_shrinks=0.0,
            isr_expands=0.0,
            active_controller=0.0,
            offline_partitions=0.0,
            unclean_elections=0.0,
        )
        up = gap_node_up or s != 8
        f.round(
            s,
            "broker-2",
            up=up,
            under_replicated=4.0 if 2 <= s <= 5 else 0.0,
            isr_shrinks=1.0 if s >= 2 else 0.0,
            isr_expands=1.0 if s >= 6 else 0.0,
            active_controller=1.0,
            offline_partitions=0.0,
            unclean_elections=0.0,
        )
    frame = f.frame()
    # a failed scrape has only its `up` row
    failed = frame[frame["metric"] == bm.UP].query("value == 0")[["ts", "node"]]
    keep = ~frame.set_index(["ts", "node"]).index.isin(failed.set_index(["ts", "node"]).index)
    return frame[keep | (frame["metric"] == bm.UP)].reset_index(drop=True)


def test_a_gap_inside_the_nodes_own_fault_window_is_explained() -> None:
    figures, undecided = cb.broker_figures(_cluster(gap_node_up=True), kill("broker-1", 2, 4))
    assert undecided == {
        "leader_elections": undecided["leader_elections"],  # no such metric here
        "elr_elections": undecided["elr_elections"],  # nor this one (Kafka 3.x)
        "produce_p99_ms_max": undecided["produce_p99_ms_max"],
        "fetch_p99_ms_max": undecided["fetch_p99_ms_max"],
    }
    assert "no node exposed" in undecided["leader_elections"]
    assert "no node exposed" in undecided["elr_elections"]
    assert figures["under_replicated_max"] == 4
    assert figures["under_replicated_s"] == 4.0
    assert figures["isr_shrinks"] == 1
    assert figures["isr_expands"] == 1
    assert figures["controller_changes"] == 0
    assert figures["offline_partitions_s"] == 0.0
    assert figures["offline_partitions_max"] == 0
    assert figures["unclean_elections"] == 0


def test_an_unexplained_gap_makes_the_figures_of_that_node_undecided_never_zero() -> None:
    figures, undecided = cb.broker_figures(_cluster(gap_node_up=False), kill("broker-1", 2, 4))
    assert figures["under_replicated_s"] is None
    assert figures["controller_changes"] is None
    reason = undecided["under_replicated_s"]
    assert "broker-2" in reason and str(T0 + 8000) in reason
    assert "broker-1" not in reason
    # Counters sampled on both sides of the gap, not lower after it, lost nothing in it.
    assert figures["unclean_elections"] == 0
    assert figures["isr_shrinks"] == 1
    assert figures["isr_expands"] == 1


def test_elections_from_eligible_leader_replicas_are_the_controllers_counter_increase() -> None:
    """Kafka 4.x's ElectionFromEligibleLeaderReplicasPerSec: counted like unclean elections,
    over the controllers (here a dedicated one), across a restart of a broker."""
    f = Frame()
    for s in range(6):
        f.round(s, "controller-101", active_controller=1.0, elr_elections=0.0 if s < 4 else 3.0)
        f.round(s, "broker-1", up=s != 2, under_replicated=0.0)
    figures, undecided = cb.broker_figures(f.frame(), kill("broker-1", 2, 3))
    assert figures["elr_elections"] == 3
    assert "elr_elections" not in undecided


def test_a_counter_lower_after_a_gap_is_undecided() -> None:
    """The JVM restarted inside the gap: what it counted before the reset is unknown."""
    frame = _cluster(gap_node_up=False)
    after = (frame["metric"] == bm.ISR_EXPANDS) & (frame["node"] == "broker-2")
    frame.loc[after & (frame["ts"] > T0 + 8000), "value"] = 0.0  # 1 before the gap, 0 after
    figures, undecided = cb.broker_figures(frame, kill("broker-1", 2, 4))
    assert figures["isr_expands"] is None
    assert "broker-2" in undecided["isr_expands"]
    assert figures["isr_shrinks"] == 1


def test_a_gap_at_the_end_leaves_the_counter_undecided() -> None:
    f = Frame()
    for s in range(5):
        f.round(s, "broker-1", up=s < 3, isr_shrinks=0.0)
    frame = f.frame()
    frame = frame[(frame["metric"] == bm.UP) | (frame["ts"] < T0 + 3000)]
    figures, undecided = cb.broker_figures(frame.reset_index(drop=True), [])
    assert figures["isr_shrinks"] is None
    assert "broker-1" in undecided["isr_shrinks"]


def test_a_gap_of_a_node_no_fault_names_is_not_explained_by_another_nodes_fault() -> None:
    gaps = cb.unexplained_gaps(_cluster(gap_node_up=False), kill("broker-3", 0, 9))
    assert {g.node for g in gaps} == {"broker-1", "broker-2"}


def test_controllers_are_the_dedicated_ones_when_there_are_some() -> None:
    assert cb.controller_nodes({"broker-1", "controller-101"}) == {"controller-101"}
    assert cb.controller_nodes({"broker-1", "broker-2"}) == {"broker-1", "broker-2"}


def test_no_scrape_at_all_leaves_every_figure_undecided() -> None:
    empty = pd.DataFrame({"ts": [], "node": [], "metric": [], "labels": [], "value": []})
    figures, undecided = cb.broker_figures(empty, [])
    assert set(figures.values()) == {None}
    assert set(undecided) == set(BROKER_FIGURES)


def test_broker_expectations_parse_and_read_the_broker_section() -> None:
    assert "broker.offline_partitions_s" in ALLOWED_METRICS
    bound = parse_expectation("< 10")
    assert metric_problem("broker.offline_partitions_s", bound, []) is None
    assert metric_problem("broker.nope", bound, []) is not None
    summary: Any = {
        "broker": {"offline_partitions_s": 4.0, "unclean_elections": None},
        "undecided": {"broker.unclean_elections": "broker-2's metrics did not answer"},
    }
    assert lookup("broker.offline_partitions_s", summary) == 4.0
    checks = evaluate(
        {
            "broker.offline_partitions_s": bound,
            "broker.unclean_elections": parse_expectation(">= 1"),
        },
        summary,
    )
    verdicts = {c.name: (c.verdict, c.detail) for c in checks}
    assert verdicts["broker.offline_partitions_s"][0] == "pass"
    assert verdicts["broker.unclean_elections"][0] == "unknown"
    assert "broker-2's metrics did not answer" in verdicts["broker.unclean_elections"][1]


@pytest.mark.parametrize("figure", BROKER_FIGURES)
def test_every_broker_figure_is_an_expectation_metric(figure: str) -> None:
    assert metric_problem(f"broker.{figure}", parse_expectation("< 1"), []) is None


def _workload_at(second: int) -> list[dict[str, Any]]:
    return [{"kind": "phase", "phase": "workload", "ts": T0 + second * 1000}]


def test_failed_scrapes_before_a_nodes_first_answer_and_the_workload_are_warm_up() -> None:
    frame = pd.DataFrame(
        Frame().round(0, "broker-1", up=False).round(1, "broker-1").round(2, "broker-1").rows
    )
    assert cb.unexplained_gaps(frame, _workload_at(5)) == []
    # The same failure after the workload began is a gap: records were being written.
    late = pd.DataFrame(
        Frame().round(6, "broker-1", up=False).round(7, "broker-1").round(8, "broker-1").rows
    )
    assert [g.node for g in cb.unexplained_gaps(late, _workload_at(5))] == ["broker-1"]
    # A node that never answered is never warming up; a history without the phase excuses none.
    silent = pd.DataFrame(Frame().round(0, "broker-1", up=False).rows)
    assert [g.node for g in cb.unexplained_gaps(silent, _workload_at(5))] == ["broker-1"]
    assert [g.node for g in cb.unexplained_gaps(frame, [])] == ["broker-1"]


def test_a_scrape_sent_just_before_a_kill_failed_because_of_it() -> None:
    """Rounds are stamped when sent: one sent 100 ms before the inject event timed out on the
    killed broker; a failure the scrape timeout or more before the fault is still a gap."""
    frame = pd.DataFrame(
        Frame()
        .round(0, "broker-1")
        .round(3, "broker-1", up=False)  # 1 s before the inject at 4 s
        .round(5, "broker-1", up=False)
        .rows
    )
    assert cb.unexplained_gaps(frame, kill("broker-1", 4, 6)) == []
    early = pd.DataFrame(Frame().round(0, "broker-1").round(1, "broker-1", up=False).rows)
    assert [g.node for g in cb.unexplained_gaps(early, kill("broker-1", 5, 6))] == ["broker-1"]
