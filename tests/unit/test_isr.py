"""The topic's ISR: the summary's `isr` figures from hand-built histories with known answers,
no Docker."""

from __future__ import annotations

from typing import Any

import pytest

from harness.results import events as ev
from harness.results.isr import isr_figures, partition_samples, under_replicated_ms

T0 = 1_700_000_000_000


def state(
    s: float, partition: int, isr: list[int], leader: int | None = 1, replicas: Any = None
) -> dict[str, Any]:
    """A partition.state event `s` seconds after T0 (replicas 1, 2, 3 unless given)."""
    return {
        "ts": T0 + int(s * 1000),
        "kind": ev.PARTITION_STATE,
        "topic": "chaos",
        "partition": partition,
        "leader": leader,
        "isr": isr,
        "replicas": [1, 2, 3] if replicas is None else replicas,
    }


def watch_end(s: float, failed: int = 0) -> dict[str, Any]:
    return {
        "ts": T0 + int(s * 1000),
        "kind": ev.PARTITION_WATCH_END,
        "topic": "chaos",
        "polls": 30,
        "failed": failed,
        "changes": 3,
        "error": "",
    }


def test_a_follower_leaves_the_isr_and_comes_back() -> None:
    history = [
        state(0, 0, [1, 2, 3]),
        {"ts": T0 + 2_000, "kind": "fault.inject", "fault_id": 1},  # other kinds: ignored
        state(5, 0, [1, 3]),
        state(17.5, 0, [1, 2, 3]),
        watch_end(30, failed=2),
    ]
    assert isr_figures(history) == {
        "isr_shrinks": 1,
        "isr_expands": 1,
        "min_isr_size": 2,
        "under_replicated_s": 12.5,
        "failed_polls": 2,
    }


def test_several_partitions_overlapping_shortfalls_count_once_in_time() -> None:
    history = [
        state(0, 0, [1, 2, 3]),
        state(0, 1, [1, 2, 3]),
        state(10, 0, [1, 2]),  # p0 short from 10 s ...
        state(12, 1, [2, 3], leader=2),  # p1 short from 12 s
        state(13, 1, [2], leader=2),  # and shorter still: a second shrink
        state(14, 0, [1, 2, 3]),  # p0 back at 14 s (one expand) ...
        state(15, 0, [1, 2, 3], leader=2),  # a leader change alone: neither
        state(20, 1, [1, 2, 3], leader=2),  # p1 back at 20 s: 10 s .. 20 s under-replicated
    ]
    assert isr_figures(history) == {
        "isr_shrinks": 3,
        "isr_expands": 2,
        "min_isr_size": 1,
        "under_replicated_s": 10.0,
        "failed_polls": None,  # no watch end: the history does not say
    }


def test_a_shortfall_still_open_lasts_until_the_watch_ends() -> None:
    history = [state(0, 0, [1, 2, 3]), state(4, 0, [1]), watch_end(10.25)]
    figures = isr_figures(history)
    assert figures["under_replicated_s"] == 6.25
    assert figures["min_isr_size"] == 1 and figures["isr_shrinks"] == 1
    # Without the watch's end the last state is where the history stops saying anything.
    assert isr_figures(history[:2])["under_replicated_s"] == 0.0


def test_the_first_state_is_neither_a_shrink_nor_an_expand_even_when_short() -> None:
    history = [state(0, 0, [1, 2]), state(3, 0, [1, 2, 3])]
    figures = isr_figures(history)
    assert (figures["isr_shrinks"], figures["isr_expands"]) == (0, 1)
    assert figures["under_replicated_s"] == 3.0


def test_a_replica_swapped_in_the_same_poll_keeps_the_size() -> None:
    """Shrinks and expands count sizes: {1,2} -> {1,3} is neither (the band shows the state)."""
    history = [state(0, 0, [1, 2], replicas=[1, 2, 3]), state(1, 0, [1, 3], replicas=[1, 2, 3])]
    figures = isr_figures(history)
    assert (figures["isr_shrinks"], figures["isr_expands"]) == (0, 0)


@pytest.mark.parametrize(
    ("history", "failed"),
    [
        ([], None),
        ([{"ts": T0, "kind": "phase", "phase": "workload"}], None),
        ([watch_end(5, failed=7)], 7),  # the watch ran, no poll was ever answered
    ],
)
def test_without_a_partition_state_every_figure_is_undecided(
    history: list[dict[str, Any]], failed: int | None
) -> None:
    assert isr_figures(history) == {
        "isr_shrinks": None,
        "isr_expands": None,
        "min_isr_size": None,
        "under_replicated_s": None,
        "failed_polls": failed,
    }


@pytest.mark.parametrize(
    "broken",
    [
        {"partition": "0"},
        {"partition": True},
        {"isr": "1,2"},
        {"isr": [1, None]},
        {"replicas": None},
        {"leader": "1"},
    ],
)
def test_a_malformed_state_is_left_out_never_a_crash(broken: dict[str, Any]) -> None:
    history = [state(0, 0, [1, 2, 3]), {**state(1, 0, [1]), **broken}, state(2, 0, [1, 2])]
    assert [len(s.isr) for s in partition_samples(history)] == [3, 2]
    assert isr_figures(history)["isr_shrinks"] == 1


def test_samples_come_in_time_order_with_their_change() -> None:
    history = [state(2, 0, [1, 2, 3]), state(1, 0, [3, 1]), state(0, 0, [1, 2, 3])]
    samples = partition_samples(history)
    assert [(s.ts - T0, s.isr, s.change) for s in samples] == [
        (0, (1, 2, 3), 0),
        (1000, (1, 3), -1),
        (2000, (1, 2, 3), 1),
    ]
    assert under_replicated_ms(samples) == 1000
