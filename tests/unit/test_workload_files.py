"""The record codec and the files consumer processes append to (a SIGKILL may tear the last line)."""

from __future__ import annotations

from pathlib import Path

from harness.results.member_files import MemberPaths, next_generation
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
