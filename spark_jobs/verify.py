"""verify_cell: every check of one cell, computed from its collected files only.

A metric that cannot be decided from the data is None and gets a reason in `undecided`
(the verdict then says `unknown` for it, never `pass`).

Stall and an incomplete drain: when the final drain did not finish (or was not recorded), a
set's last window runs to `end` and is only a lower bound. The value is still reported; it
is marked undecided only when, for some set, that open final window (with records still
waiting) is the set's longest, because only then is the maximum itself uncertain.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from harness.errors import ConfigError
from harness.results.events import PIPELINE_SET
from harness.results.layout import CellPaths
from harness.results.metrics import COUNT_NAMES, LATENCY_METRICS, SPARK_METRICS
from spark_jobs import checks_consumers as cc
from spark_jobs import checks_evidence as ce
from spark_jobs import checks_latency as cl
from spark_jobs import checks_offsets as co
from spark_jobs import checks_pipeline as cp
from spark_jobs import checks_records as cr
from spark_jobs import checks_spark as csp
from spark_jobs import checks_stall as cs
from spark_jobs import checks_txn as ct
from spark_jobs import history_facts as hf
from spark_jobs import seq_blocks as sb
from spark_jobs.cell_data import CellData, consumer_set, read_cell


def verify_cell(spark: SparkSession, cell_dir: Path, gap_ms: int = 1000) -> dict[str, Any]:
    """All checks of the cell folder; `gap_ms` is the shortest ack gap counted as unavailable."""
    if not cell_dir.is_dir():
        raise ConfigError(f"{cell_dir}: no such cell folder (expected results/<run>/cells/<cell>)")
    # The files are not cached: each check reads only the columns it needs (Parquet column
    # pruning), and caching 10 M-row frames in a 1 GiB driver spills more than it saves.
    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(cell_dir)))
    return _verify(spark, read_cell(spark, cell_dir), gap_ms, cell_dir)


def shuffle_partitions(cell_dir: Path) -> int:
    """4 for a small cell; one per ~2 M rows of its files beyond that (up to 64): a joined or
    grouped 10 M-row cell in 4 partitions spills in a 1 GiB driver (16 was 1.3x faster at
    10 M rows than 4 in benchmarks/verify_throughput.py). Rows from the Parquet footers."""
    rows = 0
    for path in cell_dir.glob("*.parquet"):
        with contextlib.suppress(Exception):  # an unreadable file is the checks' to report
            rows += pq.read_metadata(path).num_rows
    return max(4, min(256, rows // 2_000_000))


def _sets(data: CellData) -> list[str]:
    names = hf.consumer_sets(data.history)
    if data.consumed is not None:
        found = data.consumed.select(consumer_set(F.col("consumer")).alias("s")).distinct()
        names |= {str(r["s"]) for r in found.collect()}
    return sorted(names)


def _verify(spark: SparkSession, data: CellData, gap_ms: int, cell_dir: Path) -> dict[str, Any]:
    counts: dict[str, int | None] = dict.fromkeys(COUNT_NAMES)
    undecided: dict[str, str] = {}
    out: dict[str, Any] = {
        "counts": counts,
        "max_stall_s": None,
        "unavailable_s": None,
        **dict.fromkeys(LATENCY_METRICS),
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
        "undecided": undecided,
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
    }
    ledger, consumed, log = data.ledger, data.consumed, data.log
    history_note = "" if data.has_history else " (history.jsonl missing)"
    log_reason = hf.log_undecided(data.history, log is not None)
    if log_reason is not None:
        log_reason += history_note
    drain_reason = hf.drain_undecided(data.history)
    if drain_reason is not None:
        drain_reason += history_note
    trusted_log = log if log_reason is None else None
    sets = _sets(data)
    read_committed = hf.read_committed_sets(data.history)
    spark_sets = csp.spark_sets(data.history)

    # Ledger against the final log, and what each set consumed: bitsets of 64 seqs.
    blocks = None
    if ledger is not None or trusted_log is not None or consumed is not None:
        blocks = sb.block_facts(ledger, trusted_log, consumed, sets).cache()
    seen = _Seen()
    # Checks that need nothing the others learn run in lanes of their own (threads that
    # submit their Spark jobs side by side), so that Spark fills the cores the other checks'
    # narrow stages leave idle (README, Benchmark): the offset checks from the start, the
    # stall once the first consumptions are known. Each lane writes a dict of its own,
    # merged in a fixed order.
    offsets: dict[str, Any] = {"counts": {}, "undecided": {}}
    stall: dict[str, Any] = {"counts": {}, "undecided": {}}
    offsets_lane, stall_lane = _Lane(spark, "offset checks"), _Lane(spark, "stall")
    offsets_lane.start(_offsets, data, sets, read_committed, log_reason, offsets)
    try:
        _records(
            data,
            sets,
            blocks,
            trusted_log,
            read_committed,
            log_reason,
            drain_reason,
            out,
            seen,
        )
        trusted, first_send = trusted_log is not None, seen.sends[0]
        stall_args = (data, sets, blocks, seen.firsts, trusted, drain_reason, first_send, stall)
        stall_lane.start(_stall, spark, *stall_args)
        _generations(data, trusted_log, read_committed, spark_sets, drain_reason, out, seen)
        txn = seen.transactional
        _transactions(data, sets, txn, read_committed, log_reason, drain_reason, out)
        _pipeline(data, txn, log_reason, drain_reason, history_note, out)
        _spark(spark, spark_sets, cell_dir, trusted_log, read_committed, out)
        _availability(data, gap_ms, seen.sends, out)
        offsets_lane.join()
        stall_lane.join()
    finally:
        offsets_lane.stop()
        stall_lane.stop()
        for cached in (blocks, seen.detail):
            if cached is not None:
                cached.unpersist()
    for lane_out in (offsets, stall):
        counts.update(lane_out.pop("counts"))
        undecided.update(lane_out.pop("undecided"))
        out.update(lane_out)
    ce.check_evidence(cell_dir, data.history, out, seen.ledger_duplicates)
    return out


class _Lane:
    """One function run in a thread of its own, its Spark jobs in a job group of their own:
    cancelled when the caller fails or is interrupted, so nothing runs on after it."""

    def __init__(self, spark: SparkSession, name: str) -> None:
        self._context = spark.sparkContext
        self._name = name
        self._group = f"kafka-chaos-verify-{uuid.uuid4().hex}"
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verify-lane")
        self._future: Future[None] | None = None

    def start(self, fn: Callable[..., None], *args: Any) -> None:
        def run() -> None:
            self._context.setJobGroup(self._group, f"kafka-chaos verify: {self._name}", True)
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
            # A context already gone cancels nothing and fails the thread's next call too.
            with contextlib.suppress(Exception):
                self._context.cancelJobGroup(self._group)
            wait([self._future], timeout=0.2)
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class _Seen:
    """What the record checks learnt that later checks use."""

    sends: tuple[int | None, int | None] = (None, None)  # first and last send_ts
    transactional: bool = False
    firsts: DataFrame | None = None  # seq_blocks.first_consumptions
    detail: DataFrame | None = None  # seq_blocks.dirty_firsts, cached: used twice
    facts: dict[str, Any] | None = None  # seq_blocks.totals
    dirty: DataFrame | None = None  # seq_blocks.dirty_blocks
    ledger_duplicates: int | None = None  # ledger rows beyond its distinct seqs


def _records(
    data: CellData,
    sets: list[str],
    blocks: DataFrame | None,
    trusted_log: DataFrame | None,
    read_committed: set[str],
    log_reason: str | None,
    drain_reason: str | None,
    out: dict[str, Any],
    seen: _Seen,
) -> None:
    """Ledger against the final log, and what the consumers saw (filling `seen`)."""
    counts, undecided = out["counts"], out["undecided"]
    ledger, consumed = data.ledger, data.consumed
    no_ledger = "ledger.parquet missing"
    no_consumed = "consumed.parquet missing"
    facts = sb.totals(blocks, sets) if blocks is not None else None
    if facts is not None and ledger is not None:
        seen.ledger_duplicates = facts["ledger_duplicates"]
    if ledger is None:
        for name in ("attempted", "acked", "lost", "unacked_present", "lost_never_consumed"):
            undecided[name] = no_ledger
        undecided.update(dict.fromkeys(("failed", *LATENCY_METRICS), no_ledger))
    else:
        totals = cr.ledger_totals(ledger)
        seen.transactional = bool(totals["transactional"])
        seen.sends = (totals["first_send"], totals["last_send"])
        counts["attempted"], counts["acked"] = totals["attempted"], totals["acked"]
        counts["failed"] = cl.failed(ledger)
        _latency(data, ledger, out)
        if trusted_log is None or facts is None or blocks is None:
            undecided["lost"] = undecided["unacked_present"] = str(log_reason)
        else:
            counts["lost"] = facts["lost"]
            out["lost_seqs_sample"] = sb.lowest_seqs(blocks, "e & ~v") if facts["lost"] else []
            counts["unacked_present"] = facts["unacked_present"]
    if trusted_log is None or facts is None or blocks is None:
        undecided["duplicated"] = str(log_reason)
    elif facts["dup_blocks"] == 0:
        counts["duplicated"] = 0
    else:
        dups = sb.duplicated(blocks, trusted_log).cache()
        counts["duplicated"] = dups.count()
        out["duplicated_seqs_sample"] = cr.sample(dups)
        dups.unpersist()

    if consumed is None or facts is None or blocks is None:
        for name in ("reprocessed", "out_of_order", "resumptions", "lost_never_consumed"):
            undecided[name] = no_consumed
        return
    counts["reprocessed"] = sum(facts["excess"].values())
    counts["out_of_order"] = cc.out_of_order(consumed)
    seen.facts = facts
    seen.dirty = sb.dirty_blocks(blocks, sets)
    seen.detail = sb.dirty_firsts(consumed, seen.dirty).cache()
    seen.firsts = sb.first_consumptions(consumed, seen.dirty, seen.detail)


def _generations(
    data: CellData,
    trusted_log: DataFrame | None,
    read_committed: set[str],
    spark_sets: list[csp.SparkSetFacts],
    drain_reason: str | None,
    out: dict[str, Any],
    seen: _Seen,
) -> None:
    """Re-reads per generation, resumptions, records no set consumed (after `_records`, which
    marks them undecided when consumed.parquet is missing)."""
    consumed, facts, dirty = data.consumed, seen.facts, seen.dirty
    if consumed is None or facts is None or dirty is None:
        return
    out["reprocessed_by_generation"] = sb.generation_counts(consumed, dirty, seen.detail)
    spark_names = [f.name for f in spark_sets]
    groups = consumed.filter(~consumer_set(F.col("consumer")).isin(spark_names))
    out["resumptions"] = cc.resumptions(groups, data.commits, trusted_log, read_committed)
    if data.commits is None:
        out["undecided"]["resumptions"] = "commits.parquet missing: committed/exact unknown"
    if data.ledger is not None:
        _never_consumed(facts["never"], drain_reason, out)


def _lower_bound(out: dict[str, Any], name: str, value: int, gaps: list[str]) -> None:
    """A count over the readers at hand: decided when none is missing; otherwise a positive
    count stands as a lower bound (noted in `undecided`) and a zero is undecided."""
    if not gaps:
        out["counts"][name] = value
        return
    reason = "; ".join(gaps)
    if value > 0:
        out["counts"][name] = value
        out["undecided"][name] = f"a lower bound ({reason})"
    else:
        out["undecided"][name] = reason


def _transactions(
    data: CellData,
    sets: list[str],
    transactional: bool,
    read_committed: set[str],
    log_reason: str | None,
    drain_reason: str | None,
    out: dict[str, Any],
) -> None:
    """aborted_read and torn_transaction (checks_txn); both 0 without a transactional row."""
    counts, undecided = out["counts"], out["undecided"]
    ledger, log = data.ledger, data.log
    if ledger is None:
        undecided["aborted_read"] = undecided["torn_transaction"] = "ledger.parquet missing"
        return
    if not transactional:
        counts["aborted_read"] = counts["torn_transaction"] = 0
        out["aborted_consumed_by_set"] = dict.fromkeys(sets, 0)
        return
    out["transactions"] = ct.transactions(ledger)
    if data.consumed is not None:
        counted = ct.aborted_consumed_by_set(ledger, data.consumed, sets)
        by_set: dict[str, int | None] = dict(counted)
        if drain_reason is not None:
            # A set that never reached the end may not have come to them yet: a count
            # stands as a lower bound, a zero says nothing.
            by_set = {k: v if v > 0 else None for k, v in counted.items()}
            undecided["aborted_consumed"] = f"{drain_reason}: per-set counts are lower bounds"
        out["aborted_consumed_by_set"] = by_set
    pairs = ct.aborted_reads(ledger, data.consumed, log, read_committed)
    found, out["aborted_read_by_set"], out["aborted_read_seqs_sample"] = ct.aborted_read_summary(
        pairs
    )
    gaps = [] if log_reason is None else [log_reason]
    if data.consumed is None and read_committed:
        gaps.append("consumed.parquet missing")
    _lower_bound(out, "aborted_read", found, gaps)
    if log_reason is not None or log is None:
        undecided["torn_transaction"] = str(log_reason)
    else:
        counts["torn_transaction"], out["torn_transactions_sample"] = ct.torn_summary(
            ct.torn_transactions(ledger, log)
        )


def _offsets(
    data: CellData,
    sets: list[str],
    read_committed: set[str],
    log_reason: str | None,
    out: dict[str, Any],
) -> None:
    """inconsistent_offsets, poll_skip, nonmonotonic_send (checks_offsets)."""
    counts, undecided = out["counts"], out["undecided"]
    ledger, consumed, log = data.ledger, data.consumed, data.log
    if ledger is None:
        undecided["nonmonotonic_send"] = "ledger.parquet missing"
    else:
        counts["nonmonotonic_send"] = co.nonmonotonic_send(ledger)

    gaps = [] if log_reason is None else [log_reason]
    gaps += [
        f"{name}.parquet missing"
        for name, df in (("ledger", ledger), ("consumed", consumed))
        if df is None
    ]
    if ledger is None and consumed is None and log is None:
        undecided["inconsistent_offsets"] = "; ".join(gaps)
    else:
        found, out["inconsistent_offsets_sample"] = co.inconsistent_offsets(ledger, consumed, log)
        _lower_bound(out, "inconsistent_offsets", found, gaps)

    if consumed is None:
        undecided["poll_skip"] = "consumed.parquet missing"
    elif log_reason is not None or log is None:
        undecided["poll_skip"] = str(log_reason)
    else:
        counts["poll_skip"], out["poll_skip_by_set"] = co.poll_skip(
            consumed, log, read_committed, sets
        )


def _pipeline(
    data: CellData,
    transactional: bool,
    log_reason: str | None,
    drain_reason: str | None,
    history_note: str,
    out: dict[str, Any],
) -> None:
    """output_duplicates, output_lost, output_aborted and the `pipeline` figures
    (checks_pipeline); the counts 0 and `pipeline` {} in a cell that ran no pipeline."""
    counts, undecided = out["counts"], out["undecided"]
    started = hf.pipeline(data.history)
    if started is None:
        counts["output_duplicates"] = counts["output_lost"] = counts["output_aborted"] = 0
        return
    ledger, log, output = data.ledger, data.log, data.output
    output_reason = hf.output_undecided(data.history, output is not None)
    if output_reason is not None:
        output_reason += history_note
    figures: dict[str, Any] = {
        "guarantee": started.get("guarantee"),
        **dict.fromkeys(("output_records", "output_uncommitted", "origin_mismatch")),
    }
    out["pipeline"] = figures
    # What a partial read of the output shows is still there: a seq at two visible places,
    # or an aborted seq visible, stands as a lower bound; a zero says nothing.
    gaps = [] if output_reason is None else [output_reason]

    if output is None:
        undecided["output_duplicates"] = str(output_reason)
    else:
        dups = cp.output_duplicates(output)
        out["output_duplicates_seqs_sample"] = cp.sample(dups)
        _lower_bound(out, "output_duplicates", dups.count(), gaps)

    if ledger is None:
        undecided["output_aborted"] = "ledger.parquet missing"
    elif not transactional:
        counts["output_aborted"] = 0  # the input has no aborted transaction to carry
    elif output is None:
        undecided["output_aborted"] = str(output_reason)
    else:
        _lower_bound(out, "output_aborted", cp.output_aborted(ledger, output).count(), gaps)

    # A record missing from the output is lost only if the whole output was read, the input
    # log shows the record and the pipeline reached the input's end: no lower bound.
    if hf.set_drained(data.history, PIPELINE_SET):
        drain_reason = None  # the pipeline got to the end; another set was behind
    lost_gaps = [] if ledger is not None else ["ledger.parquet missing"]
    lost_gaps += [r for r in (output_reason, log_reason, drain_reason) if r is not None]
    if lost_gaps or ledger is None or log is None or output is None:
        undecided["output_lost"] = "; ".join(lost_gaps)
    else:
        lost = cp.output_lost(ledger, log, output)
        counts["output_lost"] = lost.count()
        out["output_lost_seqs_sample"] = cp.sample(lost)

    if output_reason is not None or output is None:
        for name in ("output_records", "output_uncommitted"):
            undecided[f"pipeline.{name}"] = str(output_reason)
    else:
        figures["output_records"], figures["output_uncommitted"] = cp.output_rows(output)
    mismatch_gaps = [r for r in (output_reason, log_reason) if r is not None]
    if mismatch_gaps or log is None or output is None:
        undecided["pipeline.origin_mismatch"] = "; ".join(mismatch_gaps)
    else:
        figures["origin_mismatch"] = cp.origin_mismatch(output, log)


def _spark(
    spark: SparkSession,
    sets: list[csp.SparkSetFacts],
    cell_dir: Path,
    trusted_log: DataFrame | None,
    read_committed: set[str],
    out: dict[str, Any],
) -> None:
    """Checkpoint resumption, read-twice and sink duplicates, data-loss stop per Spark set."""
    for facts in sets:
        query = CellPaths(cell_dir).query(facts.name)
        figures, rows = csp.spark_set_summary(
            spark, facts, query, None, trusted_log, facts.name in read_committed
        )
        out["spark_by_set"][facts.name] = figures
        out["resumptions"] += rows
    if sets:
        for name in SPARK_METRICS:
            out[name] = sum(s[name] for s in out["spark_by_set"].values())
        if trusted_log is None:  # the same reason as `lost`: no trusted final read
            out["undecided"]["consumed_then_lost"] = out["undecided"].get("lost", "no final log")


def _never_consumed(by_set: dict[str, int], drain_reason: str | None, out: dict[str, Any]) -> None:
    out["lost_never_consumed_by_set"] = dict(sorted(by_set.items()))
    if drain_reason is not None:
        out["undecided"]["lost_never_consumed"] = drain_reason
    elif not by_set:
        out["undecided"]["lost_never_consumed"] = "no consumer set ran"
    else:
        out["counts"]["lost_never_consumed"] = max(by_set.values())


def _availability(
    data: CellData, gap_ms: int, sends: tuple[int | None, int | None], out: dict[str, Any]
) -> None:
    first, last = sends
    if data.ledger is None or first is None or last is None:
        out["undecided"]["unavailable_s"] = "ledger.parquet missing or empty"
        return
    windows = cs.unavailable_windows(data.ledger, gap_ms, (first, last))
    out["unavailable_windows"] = windows
    out["unavailable_s"] = sum(w["end_ms"] - w["start_ms"] for w in windows) / 1000.0


def _latency(data: CellData, ledger: DataFrame, out: dict[str, Any]) -> None:
    """Ack latency over the run, and inside / outside fault windows (checks_latency)."""
    parts, top, undecided = cl.latency_summary(ledger, data.history, data.has_history)
    out["ack_latency"] = parts
    out.update(top)
    out["undecided"].update(undecided)


def _stall(
    spark: SparkSession,
    data: CellData,
    sets: list[str],
    blocks: DataFrame | None,
    firsts: DataFrame | None,
    trusted: bool,
    drain_reason: str | None,
    first_send: int | None,
    out: dict[str, Any],
) -> None:
    undecided: dict[str, str] = out["undecided"]
    ledger, consumed = data.ledger, data.consumed
    if ledger is None or consumed is None or firsts is None or blocks is None:
        undecided["max_stall_s"] = (
            "ledger.parquet missing" if ledger is None else "consumed.parquet missing"
        )
        return
    if not sets:
        undecided["max_stall_s"] = "no consumer set ran"
        return
    # Records every set must read: expected ones (`ok`, or of a committed transaction),
    # available from their ack (for a transaction's, its commit came later: an overstatement
    # of its stall by up to the transaction's length) and visible in the final log.
    ok = cr.expected_records(ledger).filter(F.col("ack_ts").isNotNull())
    if trusted:  # the blocks' `v` bits: seqs the trusted final log shows
        ok = ok.withColumn(sb.K, sb.block()).join(F.broadcast(blocks.select(sb.K, "v")), sb.K)
        ok = ok.filter((F.col("v").bitwiseAND(sb.bit())) != 0)
    available = ok.select("seq", F.col("ack_ts").alias("av"))

    start = hf.workload_start(data.history)
    if start is None:
        start = first_send
    end = hf.drain_end(data.history)
    if end is None:
        last = consumed.agg(F.max("ts").alias("t")).first()
        end = None if last is None or last["t"] is None else int(last["t"])
    if start is None or end is None or end <= start:
        undecided["max_stall_s"] = f"no measuring window (start={start}, end={end})"
        out["stalls_by_set"] = dict.fromkeys(sets)
        return

    best, windows, final_longest = cs.stalls(spark, available, firsts, sets, start, end)
    out["stalls_by_set"] = best
    out["stall_windows"] = windows
    out["max_stall_s"] = max(best.values())
    open_sets = [s for s in sets if final_longest[s]]
    if drain_reason is not None and open_sets:
        undecided["max_stall_s"] = (
            f"{drain_reason}; the longest stall of {', '.join(open_sets)} is still open at the "
            "end, so the value is a lower bound"
        )
