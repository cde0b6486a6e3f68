"""Spark consumer checks on hand-built checkpoint and sink folders (answers known by construction).

Topic `chaos`, partitions 0 and 1. Batches end at p0 3/6/9/12 and p1 2/4/6/8. The first start
commits batches 0 and 1, plans batch 2 and is killed writing it (an orphan file of its p0
rows); the second start re-runs batch 2 and commits 2 and 3.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.results.checkpoint import Checkpoint, committed_end, orphan_files, sink_files
from harness.results.tables import CONSUMED, LEDGER, LOG, write_table
from harness.workload.spark.member import is_data_loss, resume_point
from spark_jobs.local_rows import local_frame

# A module of Spark checks (its pure tests too: one marker per module).
pytestmark = pytest.mark.spark

T = 1_700_000_000_000
ENDS = {0: {0: 3, 1: 2}, 1: {0: 6, 1: 4}, 2: {0: 9, 1: 6}, 3: {0: 12, 1: 8}}


def seq_of(p: int, o: int) -> int:
    return p * 1000 + o


def write_entry(path: Path, *lines: str, zero: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((b"\x00" if zero else b"") + ("\n".join(["v1", *lines])).encode())


def offsets_json(offsets: dict[int, int]) -> str:
    return json.dumps({"chaos": {str(p): o for p, o in offsets.items()}})


def build_checkpoint(root: Path, planned: list[int], committed: list[int]) -> Path:
    cp = root / "checkpoint"
    write_entry(cp / "sources" / "0" / "0", offsets_json({0: 0, 1: 0}), zero=True)
    for b in planned:
        meta = json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": T + b * 1000})
        write_entry(cp / "offsets" / str(b), meta, offsets_json(ENDS[b]))
    for b in committed:
        write_entry(cp / "commits" / str(b), json.dumps({"nextBatchWatermarkMs": 0}))
    (cp / "offsets" / f".{max(planned)}.crc").write_text("ignored")
    return cp


def write_sink_file(sink: Path, name: str, rows: list[tuple[int, int]], generation: int) -> Path:
    sink.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "seq": pa.array([seq_of(p, o) for p, o in rows], pa.int64()),
            "partition": pa.array([p for p, _ in rows], pa.int32()),
            "offset": pa.array([o for _, o in rows], pa.int64()),
            "ts": pa.array([T] * len(rows), pa.int64()),
            "generation": pa.array([generation] * len(rows), pa.int32()),
        }
    )
    path = sink / name
    pq.write_table(table, path)
    return path


def batch_rows(b: int, skip: set[tuple[int, int]] = frozenset()) -> list[tuple[int, int]]:  # type: ignore[assignment]
    start = ENDS.get(b - 1, {0: 0, 1: 0})
    return [(p, o) for p in (0, 1) for o in range(start[p], ENDS[b][p]) if (p, o) not in skip]


def build_sink(root: Path, skip: set[tuple[int, int]] = frozenset()) -> Path:  # type: ignore[assignment]
    """Committed files for batches 0-3 (batch 2 and 3 by the second start), plus one orphan."""
    sink = root / "sink"
    for b in range(4):
        gen = 1 if b < 2 else 2
        name = f"part-0000{b}-b{b}.c000.snappy.parquet"
        write_sink_file(sink, name, batch_rows(b, skip), gen)
        entry = {
            "path": f"file:///elsewhere/sink/{name}",  # moved folder: found by name
            "size": 1,
            "isDir": False,
            "modificationTime": T + 1000 * (b + 1),
            "blockReplication": 1,
            "blockSize": 1,
            "action": "add",
        }
        write_entry(sink / "_spark_metadata" / str(b), json.dumps(entry))
    # The first start was killed while writing batch 2: its p0 rows, never committed.
    write_sink_file(sink, "part-00000-orphan.c000.snappy.parquet", batch_rows(2)[:3], 1)
    return sink


RESUMES = [
    {"kind": "spark.resume", "consumer": "spark/q", "generation": 1, "committed_batch": None},
    {
        "kind": "spark.resume",
        "consumer": "spark/q",
        "generation": 2,
        "committed_batch": 1,
        "rerun_batch": 2,
    },
]


# --- plain Python: the checkpoint reader ----------------------------------------------------
def test_checkpoint_reader_gives_batches_ranges_and_committed_end(tmp_path: Path) -> None:
    cp = Checkpoint(build_checkpoint(tmp_path, [0, 1, 2], [0, 1]))
    assert cp.initial() == {0: 0, 1: 0}  # Spark's leading zero byte is tolerated
    assert sorted(cp.planned()) == [0, 1, 2] and cp.planned()[2].timestamp_ms == T + 2000
    assert cp.committed() == {0, 1}
    assert cp.batch_range(0) == ({0: 0, 1: 0}, {0: 3, 1: 2})
    assert cp.batch_range(2) == ({0: 6, 1: 4}, {0: 9, 1: 6})
    assert cp.batch_range(7) is None
    assert committed_end(tmp_path / "checkpoint") == {0: 6, 1: 4}
    assert committed_end(tmp_path / "nothing") == {}


def test_resume_point_names_the_committed_end_and_the_batch_to_rerun(tmp_path: Path) -> None:
    cp = Checkpoint(build_checkpoint(tmp_path, [0, 1, 2], [0, 1]))
    assert resume_point(cp) == {
        "committed_batch": 1,
        "committed_end": {"0": 6, "1": 4},
        "rerun_batch": 2,
    }
    done = Checkpoint(build_checkpoint(tmp_path / "b", [0, 1], [0, 1]))
    assert resume_point(done)["rerun_batch"] is None
    empty = Checkpoint(tmp_path / "none")
    assert resume_point(empty) == {
        "committed_batch": None,
        "committed_end": None,
        "rerun_batch": None,
    }


def test_sink_commit_log_and_orphans(tmp_path: Path) -> None:
    sink = build_sink(tmp_path)
    files = sink_files(sink)
    assert [f.batch for f in files] == [0, 1, 2, 3]
    assert [p.name for p in orphan_files(sink)] == ["part-00000-orphan.c000.snappy.parquet"]


def test_spark_data_loss_errors_are_recognised() -> None:
    assert is_data_loss("[KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED] Some data may have been lost")
    assert not is_data_loss("org.apache.kafka.common.errors.TimeoutException: timed out")


# --- with Spark: resumption, read twice, sink duplicates ----------------------------------------
needs_java = pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
    reason="Spark needs a Java runtime (java on PATH or JAVA_HOME); none found",
)


def log_frame(spark: Any) -> Any:
    rows = [(seq_of(p, o), p, o) for p in (0, 1) for o in range(ENDS[3][p])]
    return local_frame(spark, rows, "seq bigint, partition int, offset bigint")


def summary_of(spark: Any, root: Path, resumes: list[dict[str, Any]]) -> Any:
    from harness.results.layout import QueryPaths
    from spark_jobs.checks.spark_sets import spark_set_summary
    from spark_jobs.history_facts import spark_sets

    facts = spark_sets(resumes)[0]
    return spark_set_summary(spark, facts, QueryPaths(root), "chaos", log_frame(spark))


@needs_java
def test_exact_resumption_with_the_rerun_batch_read_twice(spark: Any, tmp_path: Path) -> None:
    build_checkpoint(tmp_path, [0, 1, 2, 3], [0, 1, 2, 3])
    build_sink(tmp_path)
    figures, rows = summary_of(spark, tmp_path, RESUMES)
    assert [(r["generation"], r["partition"]) for r in rows] == [(2, 0), (2, 1)]
    assert [(r["committed"], r["first_offset"], r["exact"], r["skipped"]) for r in rows] == [
        (6, 6, True, 0),
        (4, 4, True, 0),
    ]
    assert [r["reread"] for r in rows] == [3, 2]  # batch 2's range: p0 6..9, p1 4..6
    assert figures["read_twice"] == 5
    assert figures["sink_rows"] == 20 and figures["sink_duplicates"] == 0
    assert figures["orphan_files"] == 1 and figures["raw_duplicates"] == 3
    assert figures["torn_files"] == 0
    assert figures["starts"] == 2 and figures["batches"] == 4
    assert figures["data_loss_stop"] == 0 and figures["query_error"] is None


@needs_java
def test_orphans_cut_short_by_a_kill_are_counted_not_read(spark: Any, tmp_path: Path) -> None:
    """A kill can leave an orphan empty or without its footer; Spark could not read it."""
    build_checkpoint(tmp_path, [0, 1, 2, 3], [0, 1, 2, 3])
    sink = build_sink(tmp_path)
    (sink / "part-00001-empty.c000.snappy.parquet").write_bytes(b"")
    whole = (sink / "part-00000-orphan.c000.snappy.parquet").read_bytes()
    (sink / "part-00002-torn.c000.snappy.parquet").write_bytes(whole[: len(whole) // 2])
    figures, rows = summary_of(spark, tmp_path, RESUMES)
    assert figures["orphan_files"] == 3 and figures["torn_files"] == 2
    assert figures["raw_duplicates"] == 3 and figures["sink_duplicates"] == 0
    assert all(r["exact"] for r in rows)


@needs_java
def test_a_gap_after_the_restart_is_not_exact_and_counts_skipped(
    spark: Any, tmp_path: Path
) -> None:
    build_checkpoint(tmp_path, [0, 1, 2, 3], [0, 1, 2, 3])
    build_sink(tmp_path, skip={(0, 6), (0, 7)})  # the restart delivered p0 from 8
    _, rows = summary_of(spark, tmp_path, RESUMES)
    p0 = next(r for r in rows if r["partition"] == 0)
    assert (p0["committed"], p0["first_offset"], p0["exact"], p0["skipped"]) == (6, 8, False, 2)


@needs_java
def test_a_start_killed_before_its_first_commit_resumes_nothing(spark: Any, tmp_path: Path) -> None:
    build_checkpoint(tmp_path, [0, 1, 2, 3], [0, 1, 2, 3])
    build_sink(tmp_path)
    stillborn = {**RESUMES[1], "generation": 2}
    later = {**RESUMES[1], "generation": 3}
    _, rows = summary_of(spark, tmp_path, [RESUMES[0], stillborn, later])
    assert {r["generation"] for r in rows} == {3}


@needs_java
def test_query_stopped_on_data_loss(spark: Any, tmp_path: Path) -> None:
    build_checkpoint(tmp_path, [0, 1], [0, 1])
    build_sink(tmp_path)
    failed = {
        "kind": "spark.query.failed",
        "consumer": "spark/q",
        "generation": 1,
        "data_loss": True,
        "error": "[KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED] …",
    }
    figures, _ = summary_of(spark, tmp_path, [RESUMES[0], failed])
    assert figures["data_loss_stop"] == 1 and "KAFKA_DATA_LOSS" in figures["query_error"]


@needs_java
def test_verify_cell_reports_spark_sets_beside_groups(spark: Any, tmp_path: Path) -> None:
    """A whole cell: the Spark set's resumption rows and figures reach the summary metrics,
    and its rows (no commits) do not undecide the group resumption check."""
    from spark_jobs.verify import verify_cell

    cell = tmp_path / "cell"
    qdir = cell / "spark" / "spark"
    build_checkpoint(qdir, [0, 1, 2, 3], [0, 1, 2, 3])
    build_sink(qdir)
    log = [(seq_of(p, o), p, o) for p in (0, 1) for o in range(ENDS[3][p])]
    ledger = [(s, f"k{s}", p, o, "ok", None, T, T + 5) for s, p, o in log]
    consumed = [(s, p, o, "spark/q", T + 10_000, 1 if o < 6 else 2) for s, p, o in log]
    for name, rows, schema in (
        ("ledger", ledger, LEDGER),
        ("log", log, LOG),
        ("consumed", consumed, CONSUMED),
    ):
        cols = list(zip(*rows, strict=True))  # the schema's first columns; the rest are null
        names = schema.names[: len(cols)]
        write_table(cell / f"{name}.parquet", schema, dict(zip(names, cols, strict=True)))
    history = [
        {"ts": T, "kind": "phase", "phase": "workload"},
        *[{"ts": T, **r} for r in RESUMES],
        {"ts": T + 20_000, "kind": "drain.end", "complete": True, "lag": {}},
        {"ts": T + 20_001, "kind": "log.read", "complete": True, "records": len(log)},
        {"ts": T + 20_002, "kind": "producer.end", "attempted": len(log), "acked": len(log)},
    ]
    (cell / "history.jsonl").write_text("\n".join(json.dumps(e) for e in history) + "\n")
    out = verify_cell(spark, cell)
    assert out["counts"]["lost"] == 0 and out["counts"]["lost_never_consumed"] == 0
    assert out["read_twice"] == 5 and out["sink_duplicates"] == 0
    assert out["spark_by_set"]["spark"]["orphan_files"] == 1
    assert [r["set"] for r in out["resumptions"]] == ["spark", "spark"]
    assert all(r["exact"] for r in out["resumptions"])


def test_sink_duplicates_and_consumed_then_lost_count_rows_as_the_joins_did(spark: Any) -> None:
    """The bitset forms against what a count_distinct and an anti join by seq give: a seq
    twice and a row without a seq are duplicates (so lost rows are then joined, each row
    counted); without duplicates, only the seqs the log lacks (two across blocks) count."""
    from spark_jobs.checks.spark_sets import _consumed_then_lost, _rows_and_duplicates

    log = local_frame(spark, [(s,) for s in range(0, 100)], "seq bigint")
    twice = local_frame(spark, [(5,), (5,), (7,), (None,), (150,), (150,)], "seq bigint")
    assert _rows_and_duplicates(twice)[1] == 3  # 6 rows, 3 distinct seqs
    assert _consumed_then_lost(twice, log, 3) == 3  # the null row and 150 twice
    once = local_frame(spark, [(1,), (63,), (64,), (130,), (200,)], "seq bigint")
    assert _rows_and_duplicates(once)[1] == 0
    assert _consumed_then_lost(once, log, 0) == 2  # 130 and 200
