"""The columnar readers of the workload's CSV files (harness.results.csv_tables and its users)
against the line readers they replace (tests/unit/legacy_readers.py): the same rows in the
same order, torn last lines and foreign lines dropped alike; and the in-process producer,
whose ledger now streams to disk, against the one that kept it in lists."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from confluent_kafka import KafkaError

from harness.results import csv_tables, ledger_join
from harness.results.history import History
from harness.results.ledger_join import ledger_tables, write_ledger
from harness.results.member_files import MemberPaths
from harness.results.member_tables import ConsumedTail, commits_tables, consumed_tables
from harness.results.producer_files import IncarnationPaths, incarnations, last_numbers
from harness.results.tables import (
    COMMITS,
    CONSUMED,
    LEDGER,
    ROW_GROUP_ROWS,
    concat,
    write_table,
    write_tables,
)
from harness.spec.consumers import GroupConsumerSpec, SparkConsumerSpec
from harness.spec.producer import ProducerSpec
from harness.workload.group.supervisor import GroupSupervisor
from harness.workload.producer import core, thread
from harness.workload.producer.thread import ProducerThread
from harness.workload.runtime import Runtime
from harness.workload.spark.supervisor import SparkSupervisor
from tests.unit import legacy_readers as legacy

MEMBERS = ["group/m0", "group/m1"]


def ledger(directory: Path) -> dict[str, list[Any]]:
    return concat(LEDGER, ledger_tables(incarnations(directory))).to_pydict()


def collected(directory: Path, names: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    consumed = [t for n in names for t in consumed_tables(MemberPaths(directory, n))]
    commits = [t for n in names for t in commits_tables(MemberPaths(directory, n))]
    return concat(CONSUMED, consumed).to_pydict(), concat(COMMITS, commits).to_pydict()


@pytest.fixture
def buckets(monkeypatch: pytest.MonkeyPatch) -> int:
    """The ledger joined 4 seqs at a time, its rows spilled to disk past 5."""
    monkeypatch.setattr(ledger_join, "BUCKET_SEQS", 4)
    monkeypatch.setattr(ledger_join, "SPILL_ROWS", 5)
    return 4


@pytest.fixture(params=["in-memory", "spilled"])
def join(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The ledger joined at once, and in buckets of 4 seqs spilled to disk."""
    if request.param == "spilled":
        monkeypatch.setattr(ledger_join, "BUCKET_SEQS", 4)
        monkeypatch.setattr(ledger_join, "SPILL_ROWS", 5)
    return str(request.param)


@pytest.fixture(params=[csv_tables.CHUNK_BYTES, 40], ids=["one-chunk", "40-byte-chunks"])
def chunk_bytes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Every test twice: files read whole, and in tiny chunks (many of them, fast and slow)."""
    monkeypatch.setattr(csv_tables, "CHUNK_BYTES", request.param)
    return int(request.param)


# --- the ledger ---------------------------------------------------------------------------------
def hand_built_producer_folder(directory: Path) -> None:
    p0, p1, p2 = (IncarnationPaths(directory, f"p{k}") for k in range(3))
    # p0: txn 0 committed (seq 0, 1), txn 1 aborted (seq 2), txn 2 open when killed (seq 3
    # acked, seq 4 never reported), a foreign line, a torn last ack line.
    p0.sends.write_text("0,0,100\n1,0,100\n2,1,101\n3,2,102\n4,2,102\n")
    p0.acks.write_text(
        "0,1,10,ok,110,\n1,2,20,ok,111,\nnot,a,line\n\n2,0,5,ok,112,\n3,1,11,ok,113,\n4,2,2"
    )
    p0.txns.write_text("0,committed,115,\n1,aborted,116,\n")
    # p1: seq 5 in txn 3 failed with an error text holding commas and quotes; seq 6 (txn 4)
    # acked twice (the last report counts); seq 7 sent with a torn send line.
    p1.sends.write_text("5,3,200\n6,4,201\n7,4,2")
    p1.acks.write_text(
        '5,0,,fail,210,"Local: fenced, by a ""newer"" instance"\n'
        "6,0,,unknown,211,Local: Message timed out\n6,2,7,ok,212,\n"
    )
    p1.txns.write_text('3,unknown,220,"commit: timed out, then fenced"\n4,committed,221,\n')
    # p2: a restart that sent seq 6 again (its later send line counts), an empty acks file,
    # no txns file.
    p2.sends.write_text("6,5,300\n8,5,301\n")
    p2.acks.write_text("")


def test_the_ledger_equals_the_line_readers_on_a_hand_built_folder(
    tmp_path: Path, chunk_bytes: int, join: str
) -> None:
    hand_built_producer_folder(tmp_path)
    cols = ledger(tmp_path)
    assert cols == legacy.ledger_columns(tmp_path)
    assert cols["seq"] == [0, 1, 2, 3, 4, 5, 6, 8]
    assert cols["status"] == ["ok", "ok", "ok", "ok", "unknown", "fail", "ok", "unknown"]
    assert cols["error"][5] == 'Local: fenced, by a "newer" instance'
    assert cols["outcome"] == [*["committed"] * 2, "aborted", *["unknown"] * 5]
    assert (cols["txn"][6], cols["send_ts"][6], cols["partition"][6]) == (5, 300, 2)
    assert last_numbers(tmp_path) == legacy.last_numbers(tmp_path) == (8, 5)


def test_the_ledger_parquet_equals_the_one_written_from_lists(tmp_path: Path, join: str) -> None:
    hand_built_producer_folder(tmp_path)
    rows = write_ledger(tmp_path / "new.parquet", incarnations(tmp_path))
    write_table(tmp_path / "old.parquet", LEDGER, legacy.ledger_columns(tmp_path))
    new, old = pq.read_table(tmp_path / "new.parquet"), pq.read_table(tmp_path / "old.parquet")
    assert rows == 8 and new.schema == old.schema == LEDGER and new.equals(old)


def test_no_files_and_empty_files_give_an_empty_ledger(tmp_path: Path) -> None:
    assert ledger(tmp_path) == legacy.ledger_columns(tmp_path) == {n: [] for n in LEDGER.names}
    p0 = IncarnationPaths(tmp_path, "p0")
    for path in (p0.sends, p0.acks, p0.txns):
        path.write_text("")
    assert ledger(tmp_path) == legacy.ledger_columns(tmp_path)
    assert write_ledger(tmp_path / "ledger.parquet", incarnations(tmp_path)) == 0
    assert pq.read_table(tmp_path / "ledger.parquet").schema == LEDGER
    assert last_numbers(tmp_path) == (-1, -1)


def test_the_ledger_comes_in_slices_in_seq_order(tmp_path: Path, buckets: int) -> None:
    p0 = IncarnationPaths(tmp_path, "p0")
    p0.sends.write_text("".join(f"{s},,{100 + s}\n" for s in range(10)))
    p0.acks.write_text("".join(f"{s},0,{s},ok,{200 + s},\n" for s in reversed(range(0, 10, 2))))
    slices = list(ledger_tables([p0]))
    assert [t.num_rows for t in slices] == [4, 4, 2]
    whole = concat(LEDGER, slices).to_pydict()
    assert whole == legacy.ledger_columns(tmp_path)
    assert whole["status"] == ["ok", "unknown"] * 5


def random_producer_folder(directory: Path, rng: random.Random) -> None:
    """Incarnations of sends, acks (reordered, repeated, failed, missing) and txns, with the
    odd foreign line and a torn last line; every line one the line reader could take."""
    seq = txn = 0
    for k in range(rng.randint(1, 3)):
        inc = IncarnationPaths(directory, f"p{k}")
        sends, acks, txns = [], [], []
        for _ in range(rng.randint(0, 40)):
            sends.append(f"{seq},{txn if rng.random() < 0.7 else ''},{1000 + seq}\n")
            fate = rng.random()
            if fate < 0.6:
                acks.append(f"{seq},{rng.randint(0, 5)},{rng.randint(0, 99)},ok,{2000 + seq},\n")
            elif fate < 0.8:
                error = rng.choice(["Local: Message timed out", '"a, b"', '"say ""x"""'])
                acks.append(f"{seq},{rng.choice(['', '1'])},,fail,{2000 + seq},{error}\n")
            if rng.random() < 0.1:
                acks.append(f"{seq},3,4,ok,{3000 + seq},\n")  # a later report counts
            if rng.random() < 0.1:
                sends.append(rng.choice(["x,y\n", "\n", "1,2\n", "1,2,3,4\n"]))
            if rng.random() < 0.15:
                end = rng.choice(["committed", "aborted", "unknown"])
                txns.append(f"{txn},{end},{4000 + txn},\n")
                txn += 1
            seq += rng.choice([1, 1, 1, 0])  # now and then a seq sent again
        rng.shuffle(acks)
        torn = rng.choice(["", "12,3", "99,,1"])
        inc.sends.write_text("".join(sends) + torn)
        inc.acks.write_text("".join(acks) + rng.choice(["", "5,1,"]))
        inc.txns.write_text("".join(txns))


@pytest.mark.parametrize("seed", range(30))
def test_the_ledger_equals_the_line_readers_on_random_folders(
    tmp_path: Path, seed: int, join: str
) -> None:
    random_producer_folder(tmp_path, random.Random(seed))
    assert ledger(tmp_path) == legacy.ledger_columns(tmp_path)
    assert last_numbers(tmp_path) == legacy.last_numbers(tmp_path)


def test_quotes_the_csv_module_would_not_write_are_read_as_it_reads_them(
    tmp_path: Path, chunk_bytes: int
) -> None:
    """Error texts quoted by csv.writer stay on pyarrow's path; any other quote sends the
    chunk through csv.reader, line by line, as before."""
    p0 = IncarnationPaths(tmp_path, "p0")
    p0.sends.write_text("".join(f"{s},,{100 + s}\n" for s in range(7)))
    p0.acks.write_text(
        '0,0,0,ok,110,\n1,0,,fail,111,"a, ""b"""\n'  # as csv.writer writes
        '2,0,,fail,112,"open\n3,0,,fail,113,"ab"c\n4,0,,fail,114, "d"\n'  # not
        '5,0,,fail,115,e"f"\n"6",0,"",ok,116,""\n'
    )
    cols = ledger(tmp_path)
    assert cols == legacy.ledger_columns(tmp_path)
    assert cols["error"][1:6] == ['a, "b"', "open", "abc", ' "d"', 'e"f"']
    written = b'0,0,0,ok,110,\n1,0,,fail,111,"a, ""b"""\n'
    assert not csv_tables._needs_lines(written, quoted=True)  # pyarrow's path
    assert csv_tables._needs_lines(written + b'3,0,,fail,113,"ab"c\n', quoted=True)


def test_a_garbled_line_of_the_right_width_is_dropped(tmp_path: Path, chunk_bytes: int) -> None:
    """The line reader raised on these (int() of a field); a garbled line is dropped now."""
    p0 = IncarnationPaths(tmp_path, "p0")
    p0.sends.write_text("0,,100\n0x1,,101\n2,,x\n3,,103\n")
    p0.acks.write_text("0,0,0,ok,110,\n3,0,1,ok,,\n3,a,1,ok,113,\n")
    p0.txns.write_text("x,committed,1,\n")
    cols = ledger(tmp_path)
    assert (cols["seq"], cols["status"]) == ([0, 3], ["ok", "unknown"])
    assert last_numbers(tmp_path) == (3, -1)


# --- consumer files -----------------------------------------------------------------------------
def hand_built_member_folder(directory: Path) -> None:
    m0, m1 = (MemberPaths(directory, name) for name in MEMBERS)
    m0.consumed.write_text(
        "1,0,10,1000,1\n2,0,11,1001,1\n"
        "x,y\n\n3,0,12,1002\n4,0,,1003,1\n5,0,0x1f,1004,1\n 6,0,13,1005,1\n"  # foreign lines
        "7,1,5,1006,2\r\n8,1,6,1007,2\n9,1,7"  # a \r, then a line torn by a SIGKILL
    )
    m0.commits.write_text("0,12,1000\n1,7,1001\n1,8")
    m1.consumed.write_text("3,2,0,1000,1\n-0,2,1,1001,1\n")  # no commits file


def test_consumer_files_equal_the_line_readers(tmp_path: Path, chunk_bytes: int) -> None:
    hand_built_member_folder(tmp_path)
    consumed, commits = collected(tmp_path, MEMBERS)
    assert (consumed, commits) == legacy.collected(tmp_path, MEMBERS)
    assert consumed["seq"] == [1, 2, 6, 7, 8, 3, 0]
    assert consumed["consumer"] == [*["group/m0"] * 5, *["group/m1"] * 2]
    assert commits == {
        "consumer": ["group/m0"] * 2,
        "partition": [0, 1],
        "offset": [12, 7],
        "ts": [1000, 1001],
    }


def random_member_line(rng: random.Random) -> str:
    fields = [str(rng.randint(0, 10**6)) for _ in range(5)]
    change = rng.random()
    if change < 0.8:
        return ",".join(fields) + "\n"
    at = rng.randrange(5)
    fields[at] = rng.choice(["", "x", "+3", "0x3", " 4", "1_0", "--1", "٣", "9" * 20, '"5"'])
    return ",".join(fields[: rng.choice([5, 5, 4, 6])]) + rng.choice(["\n", "\r\n", "\n\n"])


@pytest.mark.parametrize("seed", range(30))
def test_consumer_files_equal_the_line_readers_on_random_files(
    tmp_path: Path, seed: int, chunk_bytes: int
) -> None:
    rng = random.Random(seed)
    for name in MEMBERS:
        paths = MemberPaths(tmp_path, name)
        lines = [random_member_line(rng) for _ in range(rng.randint(0, 60))]
        paths.consumed.write_text("".join(lines) + rng.choice(["", "1,2,3"]))
        paths.commits.write_text("".join(line.split(",", 2)[-1] for line in lines[:10]))
    expected = tuple(within_int64(cols) for cols in legacy.collected(tmp_path, MEMBERS))
    assert collected(tmp_path, MEMBERS) == expected


def within_int64(cols: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Rows with a number past int64 left out: int() took it, and writing the table then
    failed; such a line is dropped now."""
    ok = [
        all(not isinstance(v, int) or -(2**63) <= v < 2**63 for v in row)
        for row in zip(*cols.values(), strict=True)
    ]
    return {k: [v for v, keep in zip(vs, ok, strict=True) if keep] for k, vs in cols.items()}


def test_empty_and_missing_member_files(tmp_path: Path) -> None:
    MemberPaths(tmp_path, "group/m0").consumed.write_text("")
    MemberPaths(tmp_path, "group/m0").commits.write_text("3,4")  # only a torn line
    assert collected(tmp_path, MEMBERS) == legacy.collected(tmp_path, MEMBERS)
    assert collected(tmp_path, MEMBERS)[0] == {n: [] for n in CONSUMED.names}


def test_consumed_parquet_is_the_one_written_from_lists(tmp_path: Path) -> None:
    """As the runner writes it: streamed from the group's members, file order kept (the
    checks' `_row`), the row groups write_table made."""
    hand_built_member_folder(tmp_path)
    runtime = Runtime("b:9092", "chaos", tmp_path, max_s=3600, seed=0)
    group = GroupSupervisor("group", GroupConsumerSpec(group="g", members=2), runtime, History())
    assert write_tables(tmp_path / "consumed.parquet", CONSUMED, group.consumed_tables()) == 7
    assert write_tables(tmp_path / "commits.parquet", COMMITS, group.commits_tables()) == 2
    old_consumed, old_commits = legacy.collected(tmp_path, group.names)
    write_table(tmp_path / "old-consumed.parquet", CONSUMED, old_consumed)
    write_table(tmp_path / "old-commits.parquet", COMMITS, old_commits)
    for name in ("consumed", "commits"):
        new = pq.read_table(tmp_path / f"{name}.parquet")
        assert new.equals(pq.read_table(tmp_path / f"old-{name}.parquet"))


def test_write_tables_lays_out_row_groups_as_write_table(tmp_path: Path) -> None:
    schema = pa.schema([("seq", pa.int64())])
    size = ROW_GROUP_ROWS // 3 + 7
    parts = [pa.table({"seq": range(i * size, (i + 1) * size)}, schema=schema) for i in range(7)]
    assert write_tables(tmp_path / "new.parquet", schema, iter(parts)) == 7 * size
    pq.write_table(pa.concat_tables(parts), tmp_path / "old.parquet")
    new, old = pq.ParquetFile(tmp_path / "new.parquet"), pq.ParquetFile(tmp_path / "old.parquet")
    groups = [new.metadata.row_group(i).num_rows for i in range(new.num_row_groups)]
    assert groups == [old.metadata.row_group(i).num_rows for i in range(old.num_row_groups)]
    assert new.read().equals(old.read())
    assert write_tables(tmp_path / "empty.parquet", schema, []) == 0
    assert pq.read_table(tmp_path / "empty.parquet").schema == schema


def test_the_tail_counts_in_chunks_and_leaves_a_torn_line_for_later(
    tmp_path: Path, chunk_bytes: int
) -> None:
    paths = MemberPaths(tmp_path, "group/m0")
    paths.consumed.write_text("1,0,10,1000,1\nx\n2,0,11,1001,1\n3,1,4,1002,1\n4,0,1")
    tail = ConsumedTail(paths)
    tail.poll()
    assert (tail.rows, tail.max_offset) == (3, {0: 11, 1: 4})
    with paths.consumed.open("a") as f:
        f.write("\n5,1,2,1004,2\n")  # a restarted member ends the torn line first
    tail.poll()
    assert (tail.rows, tail.max_offset) == (4, {0: 11, 1: 4})
    assert tail.position == paths.consumed.stat().st_size


# --- the in-process producer --------------------------------------------------------------------
class Clock:
    """now_ms as the fake client sets it: both producers see the same times."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


class PollTime:
    """The producers' time.monotonic, moved only by their client's polls, in whole ms and at
    most one record's interval a poll (a poll of the fake client returns at once in real time
    too): each loop turn hands the client exactly one record however late the thread wakes.
    Paced by real sleeps, a loaded machine sent two in one turn and the reports came in
    another order. A poll(0) moves 1 ms so that no loop can spin on a frozen clock."""

    def __init__(self, interval_ms: int) -> None:
        self.interval_ms, self.now_ms = interval_ms, 0

    def monotonic(self) -> float:
        return self.now_ms / 1000

    def sleep(self, seconds: float) -> None:
        self.now_ms += min(max(round(seconds * 1000), 1), self.interval_ms)


class FakeMessage:
    def __init__(self, partition: int, offset: int, key: bytes) -> None:
        self._partition, self._offset, self._key = partition, offset, key

    def key(self) -> bytes:
        return self._key

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset


# What the fake client reports per seq: (partition, offset, error code or None); missing
# from the plan: never reported. "buffer": the first produce finds the queue full.
PLAN: dict[int, tuple[int, int, int | None]] = {
    0: (0, 0, None),
    1: (1, 0, None),
    2: (0, 1, None),
    3: (2, -1, KafkaError._INVALID_ARG),  # fail
    4: (-1, -1, KafkaError._MSG_TIMED_OUT),  # unknown (possibly written)
    6: (1, 1, KafkaError._INVALID_ARG),
    7: (1, 2, None),
}
ERRORS = {3: 'Broker: invalid, says "who"', 4: "Local: Message timed out", 6: "boom"}


def fake_client(
    clock: Clock, crash_at: int | None = None, poll_time: PollTime | None = None
) -> Callable[..., Any]:
    class FakeProducer:
        def __init__(self, _config: dict[str, Any]) -> None:
            self.queued: list[tuple[int, Callable[..., None]]] = []
            self.full_once = True

        def produce(self, _topic: str, _value: bytes, key: bytes, on_delivery: Any) -> None:
            seq = int(key[1:])
            if seq == crash_at:
                raise RuntimeError("client broke")
            if seq == 5 and self.full_once:
                self.full_once = False
                raise BufferError
            self.queued.append((seq, on_delivery))

        def poll(self, timeout: float = 0) -> int:
            if poll_time is not None:
                poll_time.sleep(timeout)
            if len(self.queued) < 3:  # reports come late, out of order
                return 0
            return self.flush(0)

        def flush(self, _timeout: float = 0) -> int:
            left = []
            for seq, report in reversed(self.queued):
                if seq not in PLAN:
                    left.append((seq, report))
                    continue
                partition, offset, code = PLAN[seq]
                clock.now = 5000 + seq
                err = None if code is None else KafkaError(code, ERRORS[seq])
                report(err, FakeMessage(partition, offset, b"k%d" % seq))
            self.queued = left
            return len(left)

    return FakeProducer


@pytest.mark.parametrize("crash_at", [None, 6])
def test_the_in_process_ledger_equals_the_one_kept_in_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_at: int | None
) -> None:
    rate = 20.0
    clock, poll_time = Clock(), PollTime(interval_ms=int(1000 / rate))
    monkeypatch.setattr(core, "now_ms", clock)
    monkeypatch.setattr(legacy.history_module, "now_ms", clock)
    monkeypatch.setattr(core, "time", poll_time)
    monkeypatch.setattr(legacy, "time", poll_time)
    monkeypatch.setattr(core, "Producer", fake_client(clock, crash_at, poll_time))
    monkeypatch.setattr(legacy, "Producer", fake_client(clock, crash_at, poll_time))
    # Each loop turn of the core hands the client one record, as the old producer did (the
    # time moves only while the client polls): the reports come in the same order between
    # the same sends.
    spec = ProducerSpec(rate=rate, records=9)
    runtime = Runtime("fake:9092", "chaos", tmp_path / "producer", max_s=60, seed=0)
    new = ProducerThread(spec, runtime, History())
    new.start().join(10)
    clock.now, poll_time.now_ms = 0, 0
    old = legacy.LegacyLedgerProducer(
        legacy.LedgerSettings("fake:9092", "chaos", rate=rate, records=9), History()
    )
    old.start().join(10)
    assert (new.attempted, new.acked, new.failed) == (old.attempted, old.acked, old.failed)
    assert (new.crashed is None) == (old.crashed is None) == (crash_at is None)
    assert new.write(tmp_path / "new.parquet") == old.write(tmp_path / "old.parquet")
    table = pq.read_table(tmp_path / "new.parquet")
    assert table.equals(pq.read_table(tmp_path / "old.parquet"))
    assert new.status == [s if s != "pending" else "unknown" for s in old.status]
    assert new.partition == old.partition
    # The ledger went to the cell's producer folder, in the process producer's shapes.
    assert (tmp_path / "producer" / "p0.sends.csv").exists()
    assert table.to_pydict() == ledger(tmp_path / "producer") | (
        {"error": table.column("error").to_pylist()}  # the process says "ended"
    )
    if crash_at is None:
        rows = table.to_pydict()
        assert rows["status"][3:6] == ["fail", "unknown", "unknown"]
        assert rows["error"][5] == thread.UNREPORTED
        assert rows["ack_ts"][:3] == [5000, 5001, 5002]
        # The files' bytes, as harness.results.producer_files describes them.
        sends = (tmp_path / "producer" / "p0.sends.csv").read_bytes().splitlines(keepends=True)
        assert [line.split(b",")[:2] for line in sends] == [[b"%d" % i, b""] for i in range(9)]
        acks = (tmp_path / "producer" / "p0.acks.csv").read_bytes()
        assert b"0,0,0,ok,5000,\n" in acks
        assert b'3,2,,fail,5003,"Broker: invalid, says ""who"""\n' in acks
        assert b"4,,,unknown,5004,Local: Message timed out\n" in acks
        assert not (tmp_path / "producer" / "p0.txns.csv").exists()  # no transactions


def test_a_producer_never_started_writes_an_empty_ledger(tmp_path: Path) -> None:
    runtime = Runtime("b", "t", tmp_path / "producer", max_s=60, seed=0)
    producer = ProducerThread(ProducerSpec(records=5), runtime, History())
    assert producer.write(tmp_path / "ledger.parquet") == 0
    assert producer.status == []
    assert pq.read_table(tmp_path / "ledger.parquet").schema == LEDGER


def test_a_spark_query_gives_its_committed_sink_rows_as_consumed_tables(tmp_path: Path) -> None:
    """Each committed sink file's rows, `ts` = when the file was written; an orphan file
    (no commit-log entry) is not read."""
    runtime = Runtime("b:9092", "chaos", tmp_path / "consumers", max_s=3600, seed=0)
    query = SparkSupervisor("spark", SparkConsumerSpec(), runtime, History())
    sink = query.query.sink
    sink.mkdir(parents=True)
    for batch, rows in enumerate([[(0, 0, 7), (1, 0, 8)], [(0, 1, 9)], [(1, 1, 3)]]):
        name = f"part-{batch}.parquet"
        pq.write_table(
            pa.table(
                {
                    "seq": pa.array([s for _, _, s in rows], pa.int64()),
                    "partition": pa.array([p for p, _, _ in rows], pa.int32()),
                    "offset": pa.array([o for _, o, _ in rows], pa.int64()),
                    "ts": pa.array([1] * len(rows), pa.int64()),
                    "generation": pa.array([batch + 1] * len(rows), pa.int32()),
                }
            ),
            sink / name,
        )
        if batch == 2:
            continue  # an orphan: its batch never committed
        entry = {"path": f"file:///elsewhere/{name}", "modificationTime": 5000 + batch}
        log = sink / "_spark_metadata" / str(batch)
        log.parent.mkdir(exist_ok=True)
        log.write_text("v1\n" + json.dumps(entry) + "\n")
    consumed = concat(CONSUMED, query.consumed_tables())
    assert consumed.schema == CONSUMED
    assert consumed.to_pydict() == {
        "seq": [7, 8, 9],
        "partition": [0, 1, 0],
        "offset": [0, 0, 1],
        "consumer": ["spark/q"] * 3,
        "ts": [5000, 5000, 5001],
        "generation": [1, 1, 2],
    }
    assert list(query.commits_tables()) == []


class SteppedTime:
    """The core's clocks, moved only by the client (its start, its polls): the pacing is
    exact whatever the machine's load."""

    def __init__(self) -> None:
        self.t = 1000.0

    def monotonic(self) -> float:
        return self.t

    def now_ms(self) -> int:
        return int(self.t * 1000)

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def test_a_duration_counts_from_the_first_record_not_from_the_client_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """duration_s * rate records, as the thread producer always sent (22,500 in 45 s at
    500/s): a client that takes 0.5 s to start does not shorten the schedule, and polls that
    return late do not push the last record past the end."""
    tick = SteppedTime()

    class SlowStartClient:
        def __init__(self, _config: dict[str, Any]) -> None:
            tick.t += 0.5  # librdkafka's own start
            self.sent: list[int] = []

        def produce(self, _topic: str, _value: bytes, key: bytes, on_delivery: Any) -> None:
            self.sent.append(int(key[1:]))

        def poll(self, timeout: float = 0) -> int:
            tick.t += timeout + 0.02  # every call returns a little late
            return 0

        def flush(self, _timeout: float = 0) -> int:
            return 0

    monkeypatch.setattr(core, "Producer", SlowStartClient)
    monkeypatch.setattr(core, "time", tick)
    monkeypatch.setattr(core, "now_ms", tick.now_ms)
    runtime = Runtime("fake:9092", "chaos", tmp_path / "producer", max_s=60, seed=0)
    producer = ProducerThread(ProducerSpec(rate=20, duration_s=2.0), runtime, History())
    producer.start().join(10)
    assert producer.crashed is None
    assert producer.attempted == 40  # seq 0..39, due at 0, 0.05, …, 1.95 s
