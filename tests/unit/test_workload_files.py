"""The record codec and the files consumer processes append to (a SIGKILL may tear the last line)."""

from __future__ import annotations

from pathlib import Path

from harness.results.member_files import (
    ConsumedLine,
    MemberPaths,
    PendingBatch,
    committed_past,
    next_generation,
    not_yet_consumed,
)
from harness.results.member_tables import ConsumedTail, commits_tables, consumed_tables
from harness.results.tables import COMMITS, CONSUMED, concat
from harness.workload.records import decode_seq, encode_key, encode_value


def test_value_carries_seq_and_has_the_record_size() -> None:
    value = encode_value(1234, 100)
    assert len(value) == 100
    assert decode_seq(value) == 1234
    assert encode_key(7) == b"k7"


def test_foreign_values_have_no_seq() -> None:
    assert decode_seq(None) is None
    assert decode_seq(b"hello") is None
    assert decode_seq(b"x" * 40) is None


def test_torn_last_line_is_dropped_and_read_later(tmp_path: Path) -> None:
    paths = MemberPaths(tmp_path, "group/m0")
    paths.consumed.write_text("1,0,10,1000,1\n2,0,11,1001,1\n3,0,1")  # killed mid-line
    consumed = concat(CONSUMED, consumed_tables(paths))
    assert consumed.select(["seq", "partition", "offset", "ts", "generation"]).to_pylist() == [
        {"seq": 1, "partition": 0, "offset": 10, "ts": 1000, "generation": 1},
        {"seq": 2, "partition": 0, "offset": 11, "ts": 1001, "generation": 1},
    ]
    tail = ConsumedTail(paths)
    tail.poll()
    assert (tail.rows, tail.max_offset) == (2, {0: 11})
    with paths.consumed.open("a") as f:  # the restarted member goes on after the torn bytes
        f.write("\n4,1,5,1003,2\n")
    tail.poll()
    assert (tail.rows, tail.max_offset) == (3, {0: 11, 1: 5})


def test_commits_and_generations(tmp_path: Path) -> None:
    paths = MemberPaths(tmp_path, "group/m1")
    paths.commits.write_text("0,12,1000\n1,7,1001\n")
    commits = concat(COMMITS, commits_tables(paths))
    assert commits.to_pydict() == {
        "consumer": ["group/m1", "group/m1"],
        "partition": [0, 1],
        "offset": [12, 7],
        "ts": [1000, 1001],
    }
    assert [next_generation(tmp_path, "group") for _ in range(3)] == [1, 2, 3]
    assert next_generation(tmp_path, "spark") == 1


def test_a_pending_batch_reads_back_whole_lines_and_clears(tmp_path: Path) -> None:
    pending = PendingBatch(MemberPaths(tmp_path, "pipeline/m1").pending)
    assert pending.read() == []
    lines = [ConsumedLine(10 + i, 2, 100 + i, 5000, 3) for i in range(3)]
    pending.write([ln.csv() for ln in lines])
    assert pending.read() == lines
    # A SIGKILL halfway through the write: the torn line is not a record.
    pending.path.write_text("".join(ln.csv() for ln in lines) + "13,2,10")
    assert pending.read() == lines
    pending.clear()
    assert pending.read() == [] and not pending.path.exists()


def test_committed_past_needs_every_partition_beyond_its_lines() -> None:
    lines = [ConsumedLine(1, 0, 7, 1, 1), ConsumedLine(2, 1, 4, 1, 1), ConsumedLine(3, 1, 5, 1, 1)]
    assert committed_past(lines, {0: 8, 1: 6})
    assert committed_past(lines, {0: 9, 1: 60})  # another member went further
    assert not committed_past(lines, {0: 8, 1: 5})  # the transaction was aborted
    assert not committed_past(lines, {0: 8})  # no offset for partition 1
    assert not committed_past(lines, {0: -1001, 1: -1001})  # nothing committed yet


def test_pending_lines_already_at_the_end_of_consumed_are_not_written_again(
    tmp_path: Path,
) -> None:
    consumed = tmp_path / "m.consumed.csv"
    pending = [ConsumedLine(500 + i, 1, 900 + i, 7000, 4) for i in range(4)]
    assert not_yet_consumed(consumed, pending) == pending  # no file yet
    # Many earlier lines (more than one 64 KiB chunk) and then the batch, stamped later.
    earlier = [ConsumedLine(i, 0, i, 10, 1) for i in range(5000)]
    body = "".join(ln.csv() for ln in earlier)
    consumed.write_text(body)
    assert not_yet_consumed(consumed, pending) == pending
    consumed.write_text(body + "".join(ln._replace(ts=7005).csv() for ln in pending))
    assert not_yet_consumed(consumed, pending) == []
    # Killed halfway through appending them: only the rest is missing.
    consumed.write_text(body + "".join(ln._replace(ts=7005).csv() for ln in pending[:2]))
    assert not_yet_consumed(consumed, pending) == pending[2:]
    # The same records of another generation (read again after a rebalance) are not these.
    consumed.write_text(body + "".join(ln._replace(generation=5).csv() for ln in pending))
    assert not_yet_consumed(consumed, pending) == pending
