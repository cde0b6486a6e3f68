"""The topic's ISR: the summary's `isr` figures from hand-built histories with known answers,
and the partition watch (which records them) against a fake poll, no Docker."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from harness.faults.control import PartitionState
from harness.results import events as ev
from harness.results.history import History
from harness.results.isr import isr_figures, partition_samples, under_replicated_ms
from harness.runner.partition_watch import PartitionWatch

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


# --- the watch ----------------------------------------------------------------------------


class Polls:
    """Answers (or raises) in turn, then repeats the last answer."""

    def __init__(self, *answers: Mapping[int, PartitionState] | Exception) -> None:
        self.answers = list(answers)
        self.calls = 0

    def __call__(self) -> Mapping[int, PartitionState]:
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        if isinstance(answer, Exception):
            raise answer
        return answer


def states(**isr_by_partition: tuple[int | None, tuple[int, ...]]) -> dict[int, PartitionState]:
    """p0=(leader, isr), ... with replicas (1, 2, 3)."""
    return {
        int(name[1:]): PartitionState(int(name[1:]), leader, (1, 2, 3), isr)
        for name, (leader, isr) in isr_by_partition.items()
    }


def recorded(history: History) -> list[dict[str, Any]]:
    return [e.as_dict() for e in history.events]


def test_the_watch_records_the_first_state_then_only_changes_and_counts_failures() -> None:
    history = History()
    poll = Polls(
        states(p0=(1, (3, 1, 2)), p1=(2, (1, 2, 3))),
        states(p0=(1, (1, 2, 3)), p1=(2, (1, 2, 3))),  # nothing changed: nothing recorded
        TimeoutError("no trusted broker answered"),  # skipped, counted
        states(p0=(1, (1, 3)), p1=(2, (1, 2, 3))),  # p0's ISR shrank
        states(p0=(3, (1, 3)), p1=(None, (2,))),  # p0's leader moved, p1 lost its leader
    )
    watch = PartitionWatch("chaos", poll, history)
    for _ in range(5):
        watch.poll_once()
    kept = [
        (e["partition"], e["leader"], e["isr"])
        for e in recorded(history)
        if e["kind"] == ev.PARTITION_STATE
    ]
    assert kept == [
        (0, 1, [1, 2, 3]),
        (1, 2, [1, 2, 3]),
        (0, 1, [1, 3]),
        (0, 3, [1, 3]),
        (1, None, [2]),
    ]
    first = recorded(history)[0]
    assert first == {**first, "topic": "chaos", "replicas": [1, 2, 3]}
    assert (watch.polls, watch.failed, watch.changes) == (4, 1, 5)
    assert watch.error == "TimeoutError: no trusted broker answered"


def test_a_watch_never_started_records_nothing_at_stop() -> None:
    history = History()
    PartitionWatch("chaos", Polls(states(p0=(1, (1,)))), history).stop()
    assert history.events == []


def test_the_thread_polls_until_stop_and_records_nothing_after_it() -> None:
    history = History()
    polled = threading.Event()
    release = threading.Event()
    answer = states(p0=(1, (1, 2, 3)))

    def poll() -> Mapping[int, PartitionState]:
        if polled.is_set():  # the second poll hangs until the watch is stopped
            release.wait(5)
            return states(p0=(1, (1,)))
        polled.set()
        return answer

    watch = PartitionWatch("chaos", poll, history, interval_s=0.01).start()
    assert polled.wait(5)
    assert watch.running
    watch.stop()  # returns at once: a poll under way is not waited for
    release.set()
    watch._thread.join(5)  # type: ignore[union-attr]
    assert not watch.running
    kinds = [e["kind"] for e in recorded(history)]
    assert kinds == [ev.PARTITION_STATE, ev.PARTITION_WATCH_END]  # the late answer is dropped
    end = recorded(history)[-1]
    assert end == {**end, "topic": "chaos", "polls": 1, "failed": 0, "changes": 1, "error": ""}
    watch.stop()  # twice: still one end
    assert [e["kind"] for e in recorded(history)].count(ev.PARTITION_WATCH_END) == 1


def test_a_final_poll_at_stop_records_the_state_the_cell_ends_in() -> None:
    """The loop sleeps up to a second between polls: an ISR that came back just before the
    drain ended was missed (the run's recovery saw it full, the watch's last event did not)."""
    history = History()
    poll = Polls(states(p0=(1, (1, 2))), states(p0=(1, (1, 2, 3))))
    watch = PartitionWatch("chaos", poll, history, interval_s=60).start()
    while poll.calls < 1:
        time.sleep(0.01)
    watch.stop(final_poll=True)
    isr = [e["isr"] for e in recorded(history) if e["kind"] == ev.PARTITION_STATE]
    assert isr == [[1, 2], [1, 2, 3]]
    assert recorded(history)[-1]["kind"] == ev.PARTITION_WATCH_END
