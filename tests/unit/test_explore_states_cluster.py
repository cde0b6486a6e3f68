"""The cluster's newer "sometimes" states (harness.explore.states) on hand-built histories and
summaries with known answers: each reached by one, missed by a near miss; and the states'
documentation (the module's docstring, docs/exploring.md) naming every state."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import harness.explore.states as states_module
from harness.explore.states import STATES, cell_states, longest_under_replicated, states_of
from tests.unit.test_explore_states import START, cell_folder, event, state

ROOT = Path(__file__).parents[2]
NODES = ["controller-3000", "broker-1", "broker-2", "broker-3"]
CLUSTER = event(0, "cluster.start", nodes=NODES, broker_config={"min.insync.replicas": "2"})


def fault(at_s: float, until_s: float | None, kind: str, target: str, i: int) -> list[Any]:
    """A fault's inject, and its heal unless `until_s` is None."""
    inject = event(at_s, "fault.inject", fault_id=i, fault=kind, target=target)
    heal = event(until_s or 0, "fault.heal", fault_id=i, fault=kind, target=target)
    return [inject] if until_s is None else [inject, heal]


def reached(events: list[dict[str, Any]], summary: dict[str, Any] | None = None) -> dict[str, str]:
    return states_of(sorted(events, key=lambda e: e["ts"]), summary or {})


# --- controller_change ----------------------------------------------------------------------


def test_controller_change_from_the_broker_figure() -> None:
    moved = reached(START, {"broker": {"controller_changes": 2}})
    assert moved == {"controller_change": "the active controller changed 2 time(s)"}
    for quiet in (0, None, True):
        assert reached(START, {"broker": {"controller_changes": quiet}}) == {}


# --- log_truncated --------------------------------------------------------------------------


def discarded(at_s: float, lost: int, segments: list[str]) -> dict[str, Any]:
    drop = {"files": 1 if lost else 0, "bytes": lost, "entries": 0, "segments": segments}
    return event(at_s, "fault.discarded", fault_id=0, fault="power-loss", discarded={
        "broker-1": {**drop, "report": "/plfs/report-0.json"}, "controller-3000": {"bytes": 0},
    })  # fmt: skip


def power_loss_heal(at_s: float, **counts: int) -> dict[str, Any]:
    recovery = dict.fromkeys(("unflushed_segments", "unclean_shutdown", "truncations"), 0)
    return event(at_s, "fault.heal", fault_id=0, fault="power-loss", target="broker-1",
                 came_back={"broker-1": True}, recovery={"broker-1": {**recovery, **counts}})  # fmt: skip


def test_log_truncated_by_the_bytes_a_power_loss_dropped() -> None:
    cut = [*START, *fault(10, None, "power-loss", "broker-1", 0)]
    found = reached([*cut, discarded(10.2, 4096, ["/kafka/data/chaos-0/0.log"])])
    assert found == {"log_truncated": "broker-1 lost 4096 unsynced bytes (1 segment(s))"}
    # a cut that found nothing unsynced, and a recovery that replayed without cutting
    clean = [*cut, discarded(10.2, 0, []), power_loss_heal(30, unclean_shutdown=1)]
    assert reached([*clean[:-1], power_loss_heal(30, unflushed_segments=3)]) == {}
    assert reached(clean) == {}


def test_log_truncated_by_kafkas_recovery_or_the_forensics() -> None:
    cut = [*START, *fault(10, None, "power-loss", "broker-1", 0), discarded(10.2, 0, [])]
    found = reached([*cut, power_loss_heal(30, truncations=2)])
    assert found == {"log_truncated": "broker-1 truncated its log recovering (truncations 2)"}
    assert "log_truncated" in reached([*cut, power_loss_heal(30, invalid_bytes_truncated=1)])
    forensics = reached(START, {"lost_where": {"truncated": 5, "unsynced": 0}})
    assert forensics == {"log_truncated": "5 lost record(s) truncated away"}
    elsewhere = {"lost_where": {"truncated": 0, "unsynced": 3, "never_appended": 2}}
    assert reached(START, elsewhere) == {}


# --- under_replicated_long ------------------------------------------------------------------


def test_under_replicated_long_needs_one_unbroken_stretch() -> None:
    long = [*START, state(2, 1, [1, 2, 3]), state(3, 1, [1, 2]), state(14, 1, [1, 2, 3])]
    assert reached(long)["under_replicated_long"] == "chaos/0 under-replicated for 11 s"
    # two 6 s stretches: 12 s in all (what isr.under_replicated_s says), never 9 s at once
    broken = [
        *START,
        state(2, 1, [1, 2, 3]),
        state(3, 1, [1, 2]),
        state(9, 1, [1, 2, 3]),
        state(12, 1, [1, 3]),
        state(18, 1, [1, 2, 3]),
    ]
    totals = {"isr": {"under_replicated_s": 12.0}, "broker": {"under_replicated_s": 12.0}}
    assert "under_replicated_long" not in reached(broken, totals)
    assert longest_under_replicated(broken) == ("chaos/0", 6000)


def test_under_replicated_long_per_partition_and_up_to_the_watch_end() -> None:
    # partitions 0 and 1 under 6 s each, overlapping: 9 s of "some partition", none 9 s itself
    overlapping = [
        *START,
        state(2, 1, [1, 2], p=0),
        state(8, 1, [1, 2, 3], p=0),
        state(5, 2, [2, 3], p=1),
        state(11, 2, [1, 2, 3], p=1),
    ]
    assert "under_replicated_long" not in reached(overlapping)
    still_under = [*START, state(5, 1, [1, 2]), event(15, "partition.watch_end", polls=15)]
    assert reached(still_under)["under_replicated_long"] == "chaos/0 under-replicated for 10 s"


def test_under_replicated_long_takes_the_brokers_session_timeout() -> None:
    slow = event(0, "cluster.start", broker_config={"broker.session.timeout.ms": "15000"})
    events = [slow, START[1], state(3, 1, [1, 2]), state(14, 1, [1, 2, 3])]
    assert "under_replicated_long" not in reached(events)
    events.append(state(20, 1, [1]))  # under again from 20 s: 20 s up to the watch's end
    assert "under_replicated_long" in reached([*events, event(40, "partition.watch_end")])


def test_under_replicated_long_from_the_metrics_only_without_a_watched_partition() -> None:
    found = reached(START, {"broker": {"under_replicated_s": 9.5}})
    assert found == {
        "under_replicated_long": "partitions under-replicated for 9.5 s in all (metrics)"
    }
    assert reached(START, {"broker": {"under_replicated_s": 8.0}}) == {}


# --- all_nodes_down -------------------------------------------------------------------------


def test_all_nodes_down_when_the_brokers_down_windows_meet() -> None:
    events = [
        CLUSTER,
        *fault(10, 30, "kill", "broker-1", 0),
        *fault(12, 25, "stop", "broker-2", 1),
        *fault(20, 40, "power-loss", "broker-3", 2),
    ]
    found = reached(events)
    assert found["all_nodes_down"] == (
        "all 3 brokers down at once (kill broker-1, stop broker-2, power-loss broker-3)"
    )
    # broker-2 back at 18 s, before broker-3 went; a paused broker is not a down one
    apart = [*events[:3], *fault(12, 18, "stop", "broker-2", 1), *events[5:]]
    assert "all_nodes_down" not in reached(apart)
    paused = [*events[:3], *fault(12, 25, "pause", "broker-2", 1), *events[5:]]
    assert "all_nodes_down" not in reached(paused)


def test_all_nodes_down_by_a_whole_site_power_loss_or_a_node_that_never_came_back() -> None:
    site = reached([CLUSTER, *fault(10, 30, "power-loss", "all", 0)])
    assert site["all_nodes_down"] == "all 3 brokers down at once (power-loss all)"
    refused = [
        CLUSTER,
        *fault(10, 20, "kill", "broker-1", 0),
        event(19, "node.refused_start", node="broker-1", exits=3, error="exited"),
        *fault(30, 40, "kill", "broker-2", 1),
        *fault(31, 40, "kill", "broker-3", 2),
    ]
    assert "all_nodes_down" in reached(refused)
    assert "all_nodes_down" not in reached(
        [e for e in refused if e["kind"] != "node.refused_start"]
    )


def test_all_nodes_down_counts_a_broker_added_on_the_way_and_never_a_controller() -> None:
    two = event(0, "cluster.start", nodes=["controller-3000", "broker-1", "broker-2"])
    added = event(5, "fault.inject", fault_id=9, fault="add-broker", target="broker-3")
    kills = [*fault(10, 30, "kill", "broker-1", 0), *fault(11, 30, "kill", "broker-2", 1)]
    assert "all_nodes_down" in reached([two, *kills])
    assert "all_nodes_down" not in reached([two, added, *kills])  # broker-3 still up
    controller = [two, *fault(10, 30, "kill", "controller-3000", 5), *kills[:2]]
    assert "all_nodes_down" not in reached(controller)
    assert "all_nodes_down" not in reached(kills)  # no cluster.start: brokers unknown


# --- a folder, the registry and the documentation -------------------------------------------


def test_a_cell_folder_reaching_several_states_lists_them_in_the_registrys_order(
    tmp_path: Path,
) -> None:
    events = [
        CLUSTER,
        START[1],
        *fault(10, 30, "power-loss", "all", 0),
        discarded(10.1, 512, []),
        event(12, "producer.blocked", seq=900, ms=2500),
    ]
    summary = {"broker": {"controller_changes": 1}}
    found = cell_states(cell_folder(tmp_path / "c", events, summary))
    assert list(found) == [
        "controller_change", "log_truncated", "all_nodes_down", "producer_blocked"
    ]  # fmt: skip
    assert list(found) == [name for name in STATES if name in found]


def test_the_docstring_and_docs_exploring_name_every_state() -> None:
    doc = states_module.__doc__ or ""
    listed = re.findall(r"^\* `(\w+)`:", doc, re.MULTILINE)
    assert sorted(listed) == sorted(STATES)
    page = (ROOT / "docs" / "exploring.md").read_text(encoding="utf-8")
    section = page.split('## "Sometimes" states', 1)[1].split("\n## ", 1)[0]
    table = re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE)
    assert sorted(table) == sorted(STATES)
