"""corrupt without Docker: which segment it damages, how (seeded: the same bytes every time),
its rules, and its order of operations and history on a fake broker."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.errors import FaultError
from harness.faults.corrupt import Corrupt, damage, newest_segment
from tests.unit.fakes import FakeCluster
from tests.unit.test_spec import errors_of

BASE = "name: c\nproducer: {records: 100}\n"
SEG = "00000000000000000000.log"
NEWER = "00000000000000001000.log"


def test_the_newest_segment_with_data_is_the_one() -> None:
    files = {SEG: b"x" * 10, NEWER: b"y" * 5, "00000000000000002000.log": b"", "a.index": b"i"}
    assert newest_segment(files) == NEWER
    assert newest_segment({"00000000000000002000.log": b""}) is None


def test_damage_is_seeded_and_stays_in_the_tail() -> None:
    data = bytes(range(256)) * 40  # 10,240 bytes
    flipped, offsets = damage(data, "bitflip", 8, random.Random("s"))
    again, same = damage(data, "bitflip", 8, random.Random("s"))
    assert (flipped, offsets) == (again, same) and len(offsets) == 8
    assert all(o >= len(data) - 4096 for o in offsets)
    assert [i for i in range(len(data)) if flipped[i] != data[i]] == offsets
    assert all(bin(flipped[o] ^ data[o]).count("1") == 1 for o in offsets)  # one bit each
    cut, none = damage(data, "truncate", 100, random.Random("s"))
    assert cut == data[:-100] and none == []


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("{at_s: 5, kind: corrupt, target: broker:1, duration_s: 5}", "needs the partition"),
        (
            "{at_s: 5, kind: corrupt, target: broker:1, partition: chaos/9, duration_s: 5}",
            "below 6",
        ),
        ("{at_s: 5, kind: corrupt, target: leader-of:chaos/0}", "needs a duration_s"),
        ("{at_s: 5, kind: corrupt, partition: chaos/0, mode: shred, duration_s: 5}", "mode"),
        ("{at_s: 5, kind: corrupt, partition: chaos/0, bytes: 0, duration_s: 5}", "bytes"),
    ],
)
def test_corrupt_rules(tmp_path: Path, fault: str, expected: str) -> None:
    errors = errors_of(tmp_path, BASE + f"faults: [{fault}]\n")
    assert any(expected in e for e in errors), errors


def test_the_broker_is_killed_then_its_segment_damaged_then_started() -> None:
    cluster = FakeCluster()
    broker = cluster.nodes[1]
    broker.partition_dirs["chaos-0"] = {SEG: b"a" * 5000, NEWER: b"b" * 3000}
    fault = Corrupt.of("leader-of:chaos/0", duration_s=5, mode="truncate", bytes=200)
    made = fault.make(cluster, 2)
    made.inject()
    assert [op for _, op, _ in cluster.ops()] == ["kill", f"write {NEWER}"]
    assert broker.partition_dirs["chaos-0"][NEWER] == b"b" * 2800
    (event,) = [e.fields for e in cluster.history.events if e.kind == "fault.discarded"]
    assert event["discarded"]["broker-2"] == {
        "file": f"chaos-0/{NEWER}",
        "size_before": 3000,
        "size_after": 2800,
        "offsets": [],
    }
    broker.log_text += "WARN Found invalid messages in log segment ... truncating\n"
    made.heal()
    heal = cluster.history.events[-1].fields
    assert heal["came_back"] is True and heal["recovery"]["invalid_bytes_truncated"] == 1
    assert heal["partition"] == "chaos/0" and heal["mode"] == "truncate"


def test_a_broker_with_no_data_for_the_partition_says_so() -> None:
    cluster = FakeCluster()
    made = Corrupt.of("broker:1", partition="chaos/3", duration_s=5).make(cluster, 1)
    with pytest.raises(FaultError, match="no segment of chaos/3 with data"):
        made.inject()
