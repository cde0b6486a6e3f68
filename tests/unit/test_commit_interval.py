"""An at-least-once member's uncommitted offsets: when a commit is due, what it takes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.workload.pipeline.commit_interval import UncommittedOffsets


def test_interval_zero_commits_after_every_delivered_batch() -> None:
    offsets = UncommittedOffsets(0, now_s=100.0)
    assert not offsets.due(100.0)  # nothing delivered yet
    offsets.add({0: 5})
    assert offsets.due(100.0)


def test_a_commit_is_due_only_once_the_interval_has_passed_since_the_last() -> None:
    offsets = UncommittedOffsets(30_000, now_s=0.0)
    offsets.add({0: 10, 1: 4})
    assert not offsets.due(29.9)
    assert offsets.due(30.0)
    assert offsets.take() == {0: 10, 1: 4}
    offsets.committed(30.0)
    offsets.add({0: 12})
    assert not offsets.due(59.0)
    assert offsets.due(60.0)


def test_revoked_partitions_are_taken_alone_and_a_failed_commit_waits_for_the_next() -> None:
    offsets = UncommittedOffsets(5_000, now_s=0.0)
    offsets.add({0: 10, 1: 4, 2: 7})
    assert offsets.take([1, 3]) == {1: 4}
    assert offsets.offsets == {0: 10, 2: 7}
    failed = offsets.take()
    offsets.restore(failed)
    assert offsets.take() == {0: 10, 2: 7}


@given(st.lists(st.dictionaries(st.integers(0, 5), st.integers(0, 10_000)), max_size=20))
def test_a_rewound_partition_keeps_the_furthest_delivered_offset(
    batches: list[dict[int, int]],
) -> None:
    offsets = UncommittedOffsets(1_000, now_s=0.0)
    for batch in batches:
        offsets.add(batch)
    expected: dict[int, int] = {}
    for batch in batches:
        for p, o in batch.items():
            expected[p] = max(expected.get(p, -1), o)
    assert offsets.take() == expected
