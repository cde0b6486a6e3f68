"""Transactions and Jepsen's Kafka anomaly classes on hand-built cells whose answers are
known by construction (spark_jobs/checks/transactions.py, spark_jobs/checks/offsets.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.results.metrics import COUNT_NAMES, PER_SET_KEYS
from harness.results.tables import LEDGER, LOG, write_table
from spark_jobs.history_facts import read_committed_sets
from spark_jobs.local_rows import local_frame
from tests.unit.test_verify import (
    CONSUMER_COMMITS,
    LOG_P0,
    LOG_P1,
    LOG_P2,
    RECORDS_CONSUMED,
    RECORDS_LEDGER,
    RECORDS_LOG,
    Row,
    T,
    _consumer_rows,
    as_written,
    complete_history,
    ev,
    led,
    write_cell,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(
        shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
        reason="Spark needs a Java runtime (java on PATH or JAVA_HOME); none found",
    ),
]

NEW_COUNTS = (
    "aborted_read",
    "torn_transaction",
    "inconsistent_offsets",
    "poll_skip",
    "nonmonotonic_send",
)


def verify(spark: Any, cell: Path) -> dict[str, Any]:
    from spark_jobs.verify import verify_cell

    return verify_cell(spark, cell)


def start(consumer: str, isolation: str | None) -> dict[str, Any]:
    fields = {} if isolation is None else {"isolation": isolation}
    return ev(T, "consumer.start", consumer=consumer, pid=1, **fields)


def history_of(
    *starts: dict[str, Any], log_complete: bool = True, drained: bool = True
) -> list[dict[str, Any]]:
    end = T + 10_000
    return [
        ev(T, "phase", phase="workload"),
        *starts,
        ev(end, "drain.end", complete=drained, lag={}),
        ev(end + 1, "log.read", complete=log_complete, records=0),
    ]


# --- contract: appended columns -----------------------------------------------------------


def test_write_table_nulls_columns_not_given_and_refuses_unknown_ones(tmp_path: Path) -> None:
    path = tmp_path / "log.parquet"
    assert write_table(path, LOG, {"seq": [1, 2], "partition": [0, 0], "offset": [0, 1]}) == 2
    table = pq.read_table(path)
    assert table.schema == LOG
    assert table.column("committed").to_pylist() == [None, None]
    with pytest.raises(ValueError, match="txn_id"):
        write_table(path, LEDGER, {"seq": [1], "txn_id": [3]})
    assert write_table(path, LOG, {}) == 0


def test_appended_columns_are_last_and_count_names_appended_in_order() -> None:
    assert LEDGER.names[-2:] == ["txn", "outcome"]
    assert LEDGER.field("txn").type == pa.int64() and LEDGER.field("outcome").type == pa.string()
    assert LOG.names[-1] == "committed" and LOG.field("committed").type == pa.bool_()
    after_failed = COUNT_NAMES.index("failed") + 1
    assert COUNT_NAMES[after_failed : after_failed + len(NEW_COUNTS)] == NEW_COUNTS
    assert PER_SET_KEYS["aborted_read"] == "aborted_read_by_set"
    assert PER_SET_KEYS["poll_skip"] == "poll_skip_by_set"


def test_read_committed_sets_need_the_isolation_field() -> None:
    history = [
        start("rc/m0", "read_committed"),
        start("rc/m1", None),
        start("ru/m0", "read_uncommitted"),
        start("old/m0", None),  # written before the field existed: not read_committed
        ev(T, "consumer.assign", consumer="other/m0", isolation="read_committed"),
    ]
    assert read_committed_sets(history) == {"rc"}


def _old_style(path: Path, schema: pa.Schema, rows: list[Row]) -> None:
    """A file written before the appended columns: only the columns the rows give."""
    old = pa.schema(list(schema)[: len(rows[0])])
    columns = list(zip(*rows, strict=True))
    arrays = {f.name: pa.array(list(c), f.type) for f, c in zip(old, columns, strict=True)}
    pq.write_table(pa.table(arrays, old), path)


def test_old_files_read_with_the_appended_columns_filled(tmp_path: Path, spark: Any) -> None:
    from spark_jobs.cell_data import LEDGER_SCHEMA, LOG_SCHEMA, read_parquet

    _old_style(tmp_path / "ledger.parquet", LEDGER, [led(1, o=0, ack=T)])
    _old_style(tmp_path / "log.parquet", LOG, [(1, 0, 0)])
    write_table(tmp_path / "new.parquet", LOG, {"seq": [1, 2], "committed": [None, False]})
    ledger = read_parquet(spark, tmp_path / "ledger.parquet", LEDGER_SCHEMA)
    log = read_parquet(spark, tmp_path / "log.parquet", LOG_SCHEMA)
    new = read_parquet(spark, tmp_path / "new.parquet", LOG_SCHEMA)
    assert ledger is not None and log is not None and new is not None
    assert [(r["txn"], r["outcome"]) for r in ledger.collect()] == [(None, None)]
    assert dict(ledger.dtypes)["txn"] == "bigint"
    assert [r["committed"] for r in log.collect()] == [True]
    assert [r["committed"] for r in new.orderBy("seq").collect()] == [True, False]  # null: true
    # The old columns stay required.
    pq.write_table(pa.table({"seq": [1]}), tmp_path / "bad.parquet")
    from harness.errors import ConfigError

    with pytest.raises(ConfigError, match="missing column"):
        read_parquet(spark, tmp_path / "bad.parquet", LOG_SCHEMA)


# --- a transactional cell ------------------------------------------------------------------


def tled(seq: int, txn: int, outcome: str, o: int | None, status: str = "ok") -> Row:
    placed = o is not None
    base = led(seq, status, p=0 if placed else None, o=o, ack=T + seq if placed else None)
    return (*base, txn, outcome)


# Partition 0; offsets 2, 5, 8 and 10 hold transaction markers (not records).
TXN_LEDGER = [
    tled(1, 1, "committed", 0),
    tled(2, 1, "committed", 1),
    tled(3, 2, "aborted", 3),
    tled(4, 2, "aborted", 4),
    tled(5, 3, "committed", 6),
    tled(6, 3, "committed", 7),  # not in the log: lost, and transaction 3 is torn
    tled(7, 4, "unknown", None, "unknown"),  # transaction 4 entirely absent: neither
    tled(8, 4, "unknown", None, "unknown"),
    tled(9, 5, "aborted", 9),  # yet visible to read_committed in the final read
]
TXN_LOG = [
    (1, 0, 0, True),
    (2, 0, 1, True),
    (3, 0, 3, False),
    (4, 0, 4, False),
    (5, 0, 6, True),
    (9, 0, 9, True),  # an aborted read by the final read ("log")
    (3, 0, 11, False),  # seq 3 at a second place, not visible: not a duplicate
]
TXN_CONSUMED = [
    # rc (read_committed): generation 1 reads 0, 1 and commits 2; generation 2 resumes at
    # 4 (offset 3 is aborted: nothing it could see was skipped) and reads the aborted seq 4.
    (1, 0, 0, "rc/m0", T + 100, 1),
    (2, 0, 1, "rc/m0", T + 101, 1),
    (4, 0, 4, "rc/m0", T + 200, 2),
    (5, 0, 6, "rc/m0", T + 201, 2),
    # rc2 (read_committed) passes the aborted offsets 3, 4: not a poll skip for it.
    (1, 0, 0, "rc2/m0", T + 100, 1),
    (2, 0, 1, "rc2/m0", T + 101, 1),
    (5, 0, 6, "rc2/m0", T + 102, 1),
    # ru (read_uncommitted) passes 3, 4 too: skipped; it reads the aborted seq 9: allowed.
    (1, 0, 0, "ru/m0", T + 100, 1),
    (2, 0, 1, "ru/m0", T + 101, 1),
    (5, 0, 6, "ru/m0", T + 102, 1),
    (9, 0, 9, "ru/m0", T + 103, 1),
    # old: no isolation in its consumer.start, so not read_committed: seq 3 is not counted.
    (3, 0, 3, "old/m0", T + 100, 1),
]
TXN_COMMITS = [("rc/m0", 0, 2, T + 102)]
TXN_STARTS = (
    start("rc/m0", "read_committed"),
    start("rc2/m0", "read_committed"),
    start("ru/m0", "read_uncommitted"),
    start("old/m0", None),
)


def txn_cell(root: Path, log_complete: bool = True) -> Path:
    return write_cell(
        root,
        TXN_LEDGER,
        TXN_CONSUMED,
        TXN_LOG,
        TXN_COMMITS,
        history_of(*TXN_STARTS, log_complete=log_complete),
    )


@pytest.fixture(scope="module")
def txn_result(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> dict[str, Any]:
    return verify(spark, txn_cell(tmp_path_factory.mktemp("txn")))


def test_transactions_by_outcome(txn_result: dict[str, Any]) -> None:
    assert txn_result["transactions"] == {"committed": 2, "aborted": 2, "unknown": 1}
    counts = txn_result["counts"]
    assert (counts["attempted"], counts["acked"]) == (9, 7)


def test_aborted_read_by_read_committed_readers_only(txn_result: dict[str, Any]) -> None:
    # (log, 9): visible in the final read; (rc, 4): consumed by a read_committed set. ru and
    # old (no isolation field) read aborted seqs 9 and 3 without breaking anything.
    assert txn_result["counts"]["aborted_read"] == 2
    assert txn_result["aborted_read_by_set"] == {"log": 1, "rc": 1}
    assert txn_result["aborted_read_seqs_sample"] == [4, 9]


def test_aborted_consumed_counts_every_set_whatever_its_isolation(
    txn_result: dict[str, Any],
) -> None:
    # rc consumed aborted seq 4, ru seq 9, old seq 3; rc2 none. Not an anomaly for ru or
    # old (they asked for read_uncommitted, or did not say): what their application got.
    assert txn_result["aborted_consumed_by_set"] == {"old": 1, "rc": 1, "rc2": 0, "ru": 1}


def test_aborted_consumed_is_a_lower_bound_when_the_drain_did_not_finish(
    tmp_path: Path, spark: Any
) -> None:
    """A set that never reached the end may not have come to the aborted records yet: its 0
    says nothing (a `>= 1` expectation is then unknown, not fail); a count still stands."""
    history = history_of(*TXN_STARTS, drained=False)
    cell = write_cell(tmp_path, TXN_LEDGER, TXN_CONSUMED, TXN_LOG, TXN_COMMITS, history)
    result = verify(spark, cell)
    assert result["aborted_consumed_by_set"] == {"old": 1, "rc": 1, "rc2": None, "ru": 1}
    assert "final drain incomplete" in result["undecided"]["aborted_consumed"]


def test_lost_and_torn_count_committed_transactions_only(txn_result: dict[str, Any]) -> None:
    counts = txn_result["counts"]
    # Expected: transactions 1 and 3 (seqs 1, 2, 5, 6); 6 is missing. The unknown
    # transaction 4 is absent altogether: neither lost nor torn.
    assert counts["lost"] == 1 and txn_result["lost_seqs_sample"] == [6]
    assert counts["torn_transaction"] == 1 and txn_result["torn_transactions_sample"] == [3]
    assert counts["duplicated"] == 0  # seq 3's second place is not visible
    assert counts["unacked_present"] == 0
    # Per set, the expected seqs it never consumed (old read only the aborted seq 3).
    assert txn_result["lost_never_consumed_by_set"] == {"old": 4, "rc": 1, "rc2": 1, "ru": 1}


def test_poll_skip_counts_what_the_reader_could_see(txn_result: dict[str, Any]) -> None:
    assert txn_result["counts"]["poll_skip"] == 2
    assert txn_result["poll_skip_by_set"] == {"old": 0, "rc": 0, "rc2": 0, "ru": 2}


def test_resumption_of_a_read_committed_set_skips_no_aborted_record(
    txn_result: dict[str, Any], tmp_path: Path, spark: Any
) -> None:
    (row,) = txn_result["resumptions"]
    assert (row["set"], row["generation"], row["committed"], row["first_offset"]) == (
        "rc",
        2,
        2,
        4,
    )
    assert (row["exact"], row["skipped"]) == (False, 0)
    # Read as a read_uncommitted set would be, the aborted record at 3 was skipped.
    from spark_jobs.cell_data import read_cell
    from spark_jobs.checks.consumers import resumptions

    data = read_cell(spark, txn_cell(tmp_path))
    assert data.consumed is not None and data.log is not None
    (plain,) = resumptions(data.consumed, data.commits, data.log)
    assert plain["skipped"] == 1


def test_other_new_counts_are_zero_and_decided(txn_result: dict[str, Any]) -> None:
    counts, undecided = txn_result["counts"], txn_result["undecided"]
    assert counts["inconsistent_offsets"] == 0 and txn_result["inconsistent_offsets_sample"] == []
    assert counts["nonmonotonic_send"] == 0
    assert not set(NEW_COUNTS) & set(undecided)


def test_every_count_is_in_the_output_and_decided_or_explained(
    txn_result: dict[str, Any],
) -> None:
    counts = txn_result["counts"]
    assert list(counts) == list(COUNT_NAMES)
    for name in COUNT_NAMES:
        assert counts[name] is not None or name in txn_result["undecided"], name


def test_an_incomplete_final_read(tmp_path: Path, spark: Any) -> None:
    result = verify(spark, txn_cell(tmp_path, log_complete=False))
    counts, undecided = result["counts"], result["undecided"]
    for name in ("lost", "torn_transaction", "poll_skip"):
        assert counts[name] is None and "incomplete" in undecided[name], name
    # The readers at hand already saw aborted records: a lower bound that stands.
    assert counts["aborted_read"] == 2 and "lower bound" in undecided["aborted_read"]
    # Nothing inconsistent among what was read, but the read was not the whole log.
    assert counts["inconsistent_offsets"] is None
    assert "incomplete" in undecided["inconsistent_offsets"]
    assert counts["nonmonotonic_send"] == 0


def test_missing_ledger_and_consumed(tmp_path: Path, spark: Any) -> None:
    no_ledger = verify(
        spark,
        write_cell(tmp_path / "a", None, TXN_CONSUMED, TXN_LOG, [], history_of(*TXN_STARTS)),
    )
    counts, undecided = no_ledger["counts"], no_ledger["undecided"]
    for name in ("aborted_read", "torn_transaction", "nonmonotonic_send", "inconsistent_offsets"):
        assert counts[name] is None and "ledger.parquet missing" in undecided[name], name
    assert counts["poll_skip"] == 2
    assert no_ledger["transactions"] == {}

    no_consumed = verify(
        spark, write_cell(tmp_path / "b", TXN_LEDGER, None, TXN_LOG, [], history_of(*TXN_STARTS))
    )
    counts, undecided = no_consumed["counts"], no_consumed["undecided"]
    assert counts["poll_skip"] is None and undecided["poll_skip"] == "consumed.parquet missing"
    assert counts["aborted_read"] == 1  # the final read's alone: a lower bound
    assert "consumed.parquet missing" in undecided["aborted_read"]
    assert counts["torn_transaction"] == 1


# --- offsets: readers disagreeing, skips, sends going backwards ---------------------------

OFFSETS_LEDGER = [led(s, o=s, ack=T + 10 + s) for s in range(8)] + [
    led(100, p=1, o=10, ack=T + 200),
    led(101, p=1, o=12, ack=T + 201),  # sent before 102 but stored after it
    led(102, p=1, o=11, ack=T + 202),
]
OFFSETS_LOG = [(s, 0, s) for s in range(8)] + [(100, 1, 10), (101, 1, 12), (102, 1, 11)]
OFFSETS_CONSUMED = [
    # Generation 1 reads 0, 1, 2, 5 (skips 3, 4); generation 2 starts at 5: not a skip.
    *[(o, 0, o, "group/m0", T + 100 + o, 1) for o in (0, 1, 2, 5)],
    *[(o, 0, o, "group/m0", T + 200 + o, 2) for o in (5, 6, 7)],
    # Another reader saw a different record at (0, 5).
    (105, 0, 5, "audit/m0", T + 300, 1),
]


@pytest.fixture(scope="module")
def offsets_result(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> dict[str, Any]:
    cell = write_cell(
        tmp_path_factory.mktemp("offsets"),
        OFFSETS_LEDGER,
        OFFSETS_CONSUMED,
        OFFSETS_LOG,
        [],
        history_of(start("group/m0", "read_committed"), start("audit/m0", "read_committed")),
    )
    return verify(spark, cell)


def test_inconsistent_offsets(offsets_result: dict[str, Any]) -> None:
    assert offsets_result["counts"]["inconsistent_offsets"] == 1
    assert offsets_result["inconsistent_offsets_sample"] == [
        {"partition": 0, "offset": 5, "seqs": [5, 105]}
    ]


def test_poll_skip_within_one_generation(offsets_result: dict[str, Any]) -> None:
    assert offsets_result["counts"]["poll_skip"] == 2
    assert offsets_result["poll_skip_by_set"] == {"audit": 0, "group": 2}


def test_nonmonotonic_send(offsets_result: dict[str, Any]) -> None:
    assert offsets_result["counts"]["nonmonotonic_send"] == 1


def test_a_non_transactional_cell_has_no_transaction_anomaly(
    offsets_result: dict[str, Any],
) -> None:
    counts = offsets_result["counts"]
    assert counts["aborted_read"] == 0 and counts["torn_transaction"] == 0
    assert offsets_result["transactions"] == {} and offsets_result["aborted_read_by_set"] == {}
    consumed = offsets_result["aborted_consumed_by_set"]
    assert consumed and set(consumed.values()) == {0}
    assert counts["lost"] == 0 and counts["duplicated"] == 0


# --- old result folders: files without the appended columns -------------------------------


def old_cell(
    root: Path, ledger: list[Row], consumed: list[Row], log: list[Row], commits: list[Row]
) -> Path:
    write_cell(root, None, consumed, None, commits, as_written(complete_history(), ledger, log))
    _old_style(root / "ledger.parquet", LEDGER, ledger)
    _old_style(root / "log.parquet", LOG, log)
    return root


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "undecided"} | {
        "undecided": sorted(result["undecided"])
    }


def test_an_old_folder_gives_the_counts_it_always_did(tmp_path: Path, spark: Any) -> None:
    """The consumer cell of test_verify written without the appended columns: the same
    figures as with them (all null), the old counts as test_verify has them, new ones 0."""
    log = LOG_P0 + LOG_P1 + LOG_P2
    ledger = [led(r[0], p=r[1], o=r[2], ack=T + 500) for r in log]
    old = verify(spark, old_cell(tmp_path / "old", ledger, _consumer_rows(), log, CONSUMER_COMMITS))
    new = verify(
        spark,
        write_cell(
            tmp_path / "new", ledger, _consumer_rows(), log, CONSUMER_COMMITS, complete_history()
        ),
    )
    assert _comparable(old) == _comparable(new)
    counts = old["counts"]
    assert (counts["attempted"], counts["acked"], counts["lost"], counts["duplicated"]) == (
        17,
        17,
        0,
        0,
    )
    assert (counts["reprocessed"], counts["out_of_order"]) == (3, 1)
    assert [r["skipped"] for r in old["resumptions"]] == [0, 1, None]
    assert {name: counts[name] for name in NEW_COUNTS} == dict.fromkeys(NEW_COUNTS, 0)


def test_an_old_records_cell(tmp_path: Path, spark: Any) -> None:
    cell = old_cell(tmp_path, RECORDS_LEDGER, RECORDS_CONSUMED, RECORDS_LOG, [])
    result = verify(spark, cell)
    counts = result["counts"]
    assert (counts["lost"], counts["unacked_present"], counts["duplicated"]) == (2, 2, 1)
    assert result["lost_seqs_sample"] == [3, 4] and result["duplicated_seqs_sample"] == [9]
    assert counts["aborted_read"] == 0 and counts["torn_transaction"] == 0
    # This hand-built ledger says seq 3 is at (0, 2) and seq 9 at (1, 0), where the log
    # holds seqs 5 and 7: two offsets the readers disagree about.
    assert counts["inconsistent_offsets"] == 2
    assert [s["seqs"] for s in result["inconsistent_offsets_sample"]] == [[3, 5], [7, 9]]


def test_poll_skip_equals_a_record_by_record_count_at_block_edges(spark: Any) -> None:
    """The bitset form against counting offsets one by one, on readers whose lowest and
    highest offsets sit on every edge of a 64-offset block (0, 62, 63, 64, 127, 128…): a
    highest offset at 64 b + 63 once overflowed the mask under ANSI SQL (a crash, so the
    cell's verdict was unknown)."""
    import random

    from spark_jobs.checks import offsets as co

    rng = random.Random(11)
    edges = [0, 1, 62, 63, 64, 65, 126, 127, 128, 191, 255]
    log_rows = [
        (p, o, rng.random() > 0.2) for p in (0, 1) for o in range(300) if rng.random() > 0.1
    ]
    consumed_rows = []
    for i in range(40):
        consumer = f"{'rc' if i % 2 else 'ru'}/m{i}"
        lo, hi = sorted(rng.sample(edges, 2))
        inside = [o for o in range(lo + 1, hi) if rng.random() < 0.7]
        for o in (lo, *inside, hi):
            consumed_rows.append((consumer, 1, i % 2, o))
    consumed = local_frame(
        spark, consumed_rows, "consumer string, generation int, partition int, offset bigint"
    )
    log = local_frame(spark, log_rows, "partition int, offset bigint, committed boolean")

    expected = {"rc": 0, "ru": 0}
    readers: dict[tuple[str, int], set[int]] = {}
    for consumer, _, partition, offset in consumed_rows:
        readers.setdefault((consumer, partition), set()).add(offset)
    for (consumer, partition), offsets in readers.items():
        lo, hi = min(offsets), max(offsets)
        name = consumer.split("/")[0]
        expected[name] += sum(
            1
            for p, o, visible in log_rows
            if p == partition and lo < o < hi and o not in offsets and (visible or name == "ru")
        )
    assert expected["rc"] > 0 and expected["ru"] > 0
    assert co.poll_skip(consumed, log, {"rc"}, ["rc", "ru"]) == (sum(expected.values()), expected)
