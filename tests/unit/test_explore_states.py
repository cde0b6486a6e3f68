"""The "sometimes" states (harness.explore.states) read from hand-built cell folders with
known answers, and the explore summary's `reached` (the first trial of each state)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.cli.explore import coverage_table, states_table
from harness.explore.budget import Budget
from harness.explore.coverage import coverage_grid
from harness.explore.search import Search, TrialRun
from harness.explore.states import STATES, cell_states, first_reached, min_isr
from harness.explore.summary import CoverageRow, ExploreSummary, read_summary, write_summary
from harness.spec import Cell
from harness.spec.explore_roles import Entry
from tests.unit.test_explore_search import cells

T0 = 1_700_000_000_000


def event(at_s: float, kind: str, **fields: Any) -> dict[str, Any]:
    return {"ts": T0 + int(at_s * 1000), "kind": kind, **fields}


def state(at_s: float, leader: int | None, isr: list[int], p: int = 0) -> dict[str, Any]:
    return event(
        at_s, "partition.state", topic="chaos", partition=p, leader=leader, isr=isr,
        replicas=[1, 2, 3],
    )  # fmt: skip


def cell_folder(
    root: Path, events: list[dict[str, Any]], summary: dict[str, Any] | None = None
) -> Path:
    root.mkdir(parents=True)
    lines = [json.dumps(e) for e in events]
    (root / "history.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if summary is not None:
        (root / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return root


START = [
    event(0, "cluster.start", broker_config={"min.insync.replicas": "2"}),
    event(1, "topic.create", topic="chaos", partitions=1, replication_factor=3, config={}),
]


def test_a_quiet_cell_reaches_nothing(tmp_path: Path) -> None:
    folder = cell_folder(
        tmp_path / "c",
        [*START, state(2, 1, [1, 2, 3]), event(3, "consumer.assign", consumer="g/m0")],
        {"broker": {"offline_partitions_s": 0, "unclean_elections": 0, "elr_elections": 0}},
    )
    assert cell_states(folder) == {}


def test_isr_at_min_counts_the_topic_setting_before_the_brokers(tmp_path: Path) -> None:
    # brokers say 2, the topic says 1: an ISR of 2 is above its minimum, one of 1 is at it
    events = [
        START[0],
        event(1, "topic.create", topic="chaos", config={"min.insync.replicas": "1"}),
        state(2, 1, [1, 2, 3]),
        state(5, 1, [1, 2]),
    ]
    assert min_isr(events)["chaos"] == 1
    assert "isr_at_min" not in cell_states(cell_folder(tmp_path / "a", events))
    at_min = cell_states(cell_folder(tmp_path / "b", [*events, state(8, 1, [1])]))
    assert at_min["isr_at_min"] == "chaos/0 ISR [1] (min.insync.replicas 1)"


def test_isr_at_min_with_the_brokers_setting_and_the_default(tmp_path: Path) -> None:
    shrunk = [START[0], START[1], state(2, 1, [1, 2, 3]), state(5, 1, [1, 2])]
    assert "isr_at_min" in cell_states(cell_folder(tmp_path / "a", shrunk))
    # without cluster.start's setting the default is 1: an ISR of 2 is not at it
    assert "isr_at_min" not in cell_states(cell_folder(tmp_path / "b", shrunk[1:]))


def test_leaderless_from_the_watch_or_from_the_controllers_metrics(tmp_path: Path) -> None:
    watched = cell_states(cell_folder(tmp_path / "a", [*START, state(4, None, [])]))
    assert watched["leaderless"] == "chaos/0 had no leader"
    assert "isr_at_min" not in watched  # an empty ISR is leaderless, not at the minimum
    metrics = cell_states(
        cell_folder(tmp_path / "b", START, {"broker": {"offline_partitions_s": 6.5}})
    )
    assert metrics == {"leaderless": "offline partitions for 6.5 s"}


def test_elections_from_the_broker_figures_only(tmp_path: Path) -> None:
    summary = {"broker": {"unclean_elections": 2, "elr_elections": 1, "offline_partitions_s": None}}
    found = cell_states(cell_folder(tmp_path / "a", START, summary))
    assert found == {
        "unclean_election": "2 unclean election(s)",
        "elr_election": "1 election(s) from the eligible leader replicas",
    }
    undecided = {"broker": {"unclean_elections": None, "elr_elections": True}}
    assert cell_states(cell_folder(tmp_path / "b", START, undecided)) == {}


def test_a_rebalance_counts_only_inside_a_fault_window(tmp_path: Path) -> None:
    inject = event(10, "fault.inject", fault_id=0, fault="kill", target="broker-1")
    heal = event(20, "fault.heal", fault_id=0, fault="kill", target="broker-1")
    outside = [*START, inject, heal, event(3, "consumer.assign", consumer="g/m0")]
    assert cell_states(cell_folder(tmp_path / "a", outside)) == {}
    inside = [*outside, event(15, "consumer.revoke", consumer="g/m1", generation=2)]
    found = cell_states(cell_folder(tmp_path / "b", inside))
    assert found == {"rebalance_in_fault": "g/m1 revoke during kill broker-1"}
    never_healed = [*START, inject, event(99, "consumer.assign", consumer="g/m0")]
    assert "rebalance_in_fault" in cell_states(cell_folder(tmp_path / "c", never_healed))


def test_a_consumer_crash_is_not_a_fault_window_for_the_rebalance(tmp_path: Path) -> None:
    events = [
        *START,
        event(10, "consumer.crash", consumer="g/m0", pid=7),
        event(12, "consumer.assign", consumer="g/m1"),
        event(15, "consumer.launch", consumer="g/m0", pid=8),
    ]
    assert cell_states(cell_folder(tmp_path / "a", events)) == {}


def test_producer_fencing_as_far_as_the_clients_say(tmp_path: Path) -> None:
    plain = [*START, event(5, "producer.errors", count=3, error="_MSG_TIMED_OUT")]
    assert cell_states(cell_folder(tmp_path / "a", plain)) == {}
    epoch = [*START, event(5, "producer.errors", count=1, error="UNKNOWN_PRODUCER_ID: gone")]
    assert "producer_fenced" in cell_states(cell_folder(tmp_path / "b", epoch))
    fenced = [*START, event(5, "producer.txn_error", producer="p0", error="_FENCED: fenced")]
    assert cell_states(cell_folder(tmp_path / "c", fenced)) == {
        "producer_fenced": "producer.txn_error: _FENCED: fenced"
    }
    reinit = [*START, event(5, "producer.reinit", producer="p1", txn=4)]
    found = cell_states(cell_folder(tmp_path / "d", reinit))
    assert found == {"producer_fenced": "producer p1 re-created (a new epoch)"}


def test_missing_or_torn_files_reach_nothing(tmp_path: Path) -> None:
    assert cell_states(tmp_path / "nowhere") == {}
    folder = tmp_path / "torn"
    folder.mkdir()
    (folder / "history.jsonl").write_text('{"ts": 1, "kind": "partition.st', encoding="utf-8")
    (folder / "summary.json").write_text("[1, 2]", encoding="utf-8")
    assert cell_states(folder) == {}


def test_first_reached_lists_every_state_with_its_first_trial() -> None:
    first = first_reached([(2, ["leaderless"]), (0, ["isr_at_min"]), (1, ["leaderless"])])
    assert list(first) == list(STATES)
    assert first["isr_at_min"] == 0 and first["leaderless"] == 1
    assert first["elr_election"] is None and first["producer_fenced"] is None


def test_the_search_fills_reached_and_the_summary_round_trips(tmp_path: Path) -> None:
    def run(cell: Cell, faults: list[Entry], label: str) -> TrialRun:
        n = int(label.split("-")[1])
        reached = ("isr_at_min", "leaderless") if n >= 1 else ("isr_at_min",)
        return TrialRun(
            [{"name": "lost", "verdict": "pass", "detail": ""}], "pass", label, None, reached
        )

    summary = ExploreSummary(spec="s", file="s.yaml", seed=1, started="now", k=3, need=2, budget={})
    Search(cells(tmp_path), 1, run, tmp_path / "out", Budget(cells=3)).explore(summary)
    assert [t.reached for t in summary.trials] == [
        ["isr_at_min"], ["isr_at_min", "leaderless"], ["isr_at_min", "leaderless"]
    ]  # fmt: skip
    assert summary.reached["isr_at_min"] == 0 and summary.reached["leaderless"] == 1
    assert summary.reached["unclean_election"] is None
    back = read_summary(write_summary(tmp_path, summary))
    assert back.reached == summary.reached and back.trials[1].reached == summary.trials[1].reached


def test_the_coverage_grid_folds_phases_into_one_line_per_kind_and_role() -> None:
    rows = [
        ("kill", "leader", "early", 2),
        ("kill", "leader", "late", 1),
        ("pause", "one", "middle", 1),
    ]
    assert coverage_grid(rows) == [
        ("kill", "leader", {"early": 2, "middle": 0, "late": 1}),
        ("pause", "one", {"early": 0, "middle": 1, "late": 0}),
    ]


def test_explore_prints_its_coverage_and_the_states_reached() -> None:
    summary = ExploreSummary(
        spec="s", file="s.yaml", seed=1, started="now", k=3, need=2, budget={},
        coverage=[
            CoverageRow(kind="kill", role="leader", phase="early", trials=2),
            CoverageRow(kind="kill", role="leader", phase="late", trials=1),
        ],
        reached={**first_reached([]), "leaderless": 4},
    )  # fmt: skip
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(coverage_table(summary))
    console.print(states_table(summary))
    text = console.export_text()
    assert re.search(r"kill\s+│\s+leader\s+│\s+2\s+│\s+-\s+│\s+1", text)
    assert re.search(r"leaderless\s+│\s+4", text)
    assert re.search(r"elr_election\s+│\s+never", text)
