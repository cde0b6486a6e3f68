"""verify_cell: every check of one cell, computed from its collected files only.

The checks are values (spark_jobs.check.Check) in one table (spark_jobs.checks.CHECKS);
`verify_cell` composes them over one cell context (spark_jobs.context.CellContext: the
shared frames built once) and merges their figures. A figure that cannot be decided from
the data is None and gets a reason in `undecided` (the verdict then says `unknown` for it,
never `pass`); a check that raises leaves its figures undecided and names itself in
`failed_checks`, the others still run.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from harness.errors import ConfigError
from harness.results.metrics import COUNT_NAMES, Figures
from spark_jobs.cell_data import read_cell
from spark_jobs.check import MAIN, REVIEW, Check, failed, merge
from spark_jobs.checks import CHECKS
from spark_jobs.context import CellContext
from spark_jobs.session import is_connect_session


def verify_cell(
    spark: SparkSession, cell_dir: Path, gap_ms: int = 1000, checks: Sequence[Check] = CHECKS
) -> Figures:
    """All checks of the cell folder; `gap_ms` is the shortest ack gap counted as unavailable."""
    if not cell_dir.is_dir():
        raise ConfigError(f"{cell_dir}: no such cell folder (expected results/<run>/cells/<cell>)")
    # The files are not cached: each check reads only the columns it needs (Parquet column
    # pruning), and caching 10 M-row frames in a 1 GiB driver spills more than it saves.
    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(cell_dir)))
    ctx = CellContext(spark, read_cell(spark, cell_dir), cell_dir, gap_ms)
    try:
        return compose(checks, ctx)
    finally:
        ctx.close()


def shuffle_partitions(cell_dir: Path) -> int:
    """4 for a small cell; one per ~2 M rows of its files beyond that (up to 64): a joined or
    grouped 10 M-row cell in 4 partitions spills in a 1 GiB driver (16 was 1.3x faster at
    10 M rows than 4 in benchmarks/verify_throughput.py). Rows from the Parquet footers."""
    rows = 0
    for path in cell_dir.glob("*.parquet"):
        with contextlib.suppress(Exception):  # an unreadable file is the checks' to report
            rows += pq.read_metadata(path).num_rows
    return max(4, min(256, rows // 2_000_000))


def empty_figures() -> Figures:
    """Every figure undecided and no reason yet: what the checks' parts are merged into."""
    return {
        "counts": dict.fromkeys(COUNT_NAMES),
        "max_stall_s": None,
        "unavailable_s": None,
        "ack_p50_ms": None,
        "ack_p99_ms": None,
        "ack_max_ms": None,
        "ack_p99_ms_faulted": None,
        "ack_p99_ms_steady": None,
        "ack_latency": {},
        "stalls_by_set": {},
        "stall_windows": [],
        "unavailable_windows": [],
        "lost_never_consumed_by_set": {},
        "reprocessed_by_generation": [],
        "resumptions": [],
        "spark_by_set": {},
        "read_twice": None,
        "sink_duplicates": None,
        "undecided": {},
        "lost_seqs_sample": [],
        "duplicated_seqs_sample": [],
        "transactions": {},
        "aborted_read_by_set": {},
        "aborted_consumed_by_set": {},
        "aborted_read_seqs_sample": [],
        "torn_transactions_sample": [],
        "inconsistent_offsets_sample": [],
        "poll_skip_by_set": {},
        "pipeline": {},
        "output_duplicates_seqs_sample": [],
        "output_lost_seqs_sample": [],
        "lost_where": None,
        "lost_where_reasons": {},
        "lost_where_sample": [],
        "broker_errors": None,
        "broker_errors_by_template": [],
    }


def run_safely(check: Check, ctx: CellContext) -> Figures:
    """The check's figures; if it raises, its figures undecided naming the error."""
    try:
        return check.run(ctx)
    except Exception as exc:  # any error of one check: that check's figures are unknown
        return failed(check, exc)


def compose(checks: Sequence[Check], ctx: CellContext) -> Figures:
    """Run the checks and merge their figures: the main ones in the caller's thread in
    order; each check of another lane in a thread of its own, started first (threads that
    submit their Spark jobs side by side, so that Spark fills the cores the other checks'
    narrow stages leave idle: docs/benchmarks.md); the reviews last, over the merged figures.
    Parts are merged main first, then the lanes, then the reviews, each in the table's
    order, so the summary does not depend on which thread finished first."""
    main = [c for c in checks if c.lane == MAIN]
    side = [c for c in checks if c.lane not in (MAIN, REVIEW)]
    reviews = [c for c in checks if c.lane == REVIEW]
    parts: dict[str, Figures] = {}

    def into_parts(check: Check) -> None:
        parts[check.name] = run_safely(check, ctx)

    lanes = [_Lane(ctx.spark, check.name) for check in side]
    try:
        for check, lane in zip(side, lanes, strict=True):
            lane.start(into_parts, check)
        for check in main:
            into_parts(check)
        for lane in lanes:
            lane.join()
    finally:
        for lane in lanes:
            lane.stop()
    summary = empty_figures()
    for check in (*main, *side):
        merge(summary, parts[check.name])
    ctx.summary = summary
    for check in reviews:
        merge(summary, run_safely(check, ctx))
    return summary


class _Lane:
    """One function run in a thread of its own, its Spark jobs under a label of their own:
    cancelled when the caller fails or is interrupted, so nothing runs on after it. The label:
    a job group on a classic session; an operation tag through Spark Connect, which has no
    SparkContext (a classic session's interruptTag cancelled nothing here, Spark 4.0.0)."""

    def __init__(self, spark: SparkSession, name: str) -> None:
        self._spark = spark
        self._connect = is_connect_session(spark)
        self._name = name
        self._group = f"kafka-chaos-verify-{uuid.uuid4().hex}"
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verify-lane")
        self._future: Future[None] | None = None

    def start(self, fn: Callable[..., None], *args: Any) -> None:
        def run() -> None:
            if self._connect:
                self._spark.addTag(self._group)  # this thread's operations only
            else:
                description = f"kafka-chaos verify: {self._name}"
                self._spark.sparkContext.setJobGroup(self._group, description, True)
            fn(*args)

        self._future = self._pool.submit(run)

    def join(self) -> None:
        """Wait for the function; its error, if any, is raised here."""
        if self._future is not None:
            self._future.result()

    def stop(self) -> None:
        """Cancel what is still running (nothing, after `join`) and wait for the thread."""
        # A job the thread starts after a cancel is cancelled on the next round; the
        # function has a bounded number of jobs, so this ends.
        while self._future is not None and not self._future.done():
            # A session already gone cancels nothing and fails the thread's next call too.
            with contextlib.suppress(Exception):
                if self._connect:
                    self._spark.interruptTag(self._group)
                else:
                    self._spark.sparkContext.cancelJobGroup(self._group)
            wait([self._future], timeout=0.2)
        self._pool.shutdown(wait=True, cancel_futures=True)
