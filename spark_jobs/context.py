"""A cell's context: what its checks share, each built once on first use and kept.

The files (CellData), what the history says (is the final log whole, did the consumers
drain, which sets ran), and the shared frames: the seq blocks (ledger against the final
log and each set's consumptions, bitsets of 64 seqs), their totals, and each set's first
consumptions. Checks run in threads of their own too: a fact is built under its own lock,
so a second check asking for it waits for the first one's answer instead of building it
again. `close` unpersists the cached frames.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict, TypeVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from harness.results.layout import CellPaths
from harness.results.machine import Machine, read_machine
from harness.results.metrics import Figures
from spark_jobs import history_facts as hf
from spark_jobs import seq_blocks as sb
from spark_jobs.cell_data import CellData, consumer_set, is_expected

_T = TypeVar("_T")

NO_LEDGER = "ledger.parquet missing"
NO_CONSUMED = "consumed.parquet missing"


class LedgerTotals(TypedDict):
    """The ledger's figures of one pass (`ledger_totals`)."""

    attempted: int
    acked: int
    transactional: bool
    first_send: int | None
    last_send: int | None


class CellContext:
    def __init__(self, spark: SparkSession, data: CellData, cell_dir: Path, gap_ms: int) -> None:
        self.spark = spark
        self.data = data
        self.cell_dir = cell_dir
        self.gap_ms = gap_ms  # the shortest ack gap counted as unavailable
        self.history_note = "" if data.has_history else " (history.jsonl missing)"
        self.log_reason = self._noted(hf.log_undecided(data.history, data.log is not None))
        self.drain_reason = self._noted(hf.drain_undecided(data.history))
        # The final log, when it can be trusted to be the whole topic.
        self.trusted_log = data.log if self.log_reason is None else None
        self.sets = _sets(data)
        self.read_committed = hf.read_committed_sets(data.history)
        self.spark_sets = hf.spark_sets(data.history)
        # Share-group sets -> the brokers' delivery_limit and lock_ms they ran under.
        self.share_sets = hf.share_sets(data.history)
        # The figures merged so far: what a REVIEW check reads (spark_jobs.check).
        self.summary: Figures = {}
        self._values: dict[str, object] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._cached: list[DataFrame] = []

    def _noted(self, reason: str | None) -> str | None:
        return None if reason is None else reason + self.history_note

    def _once(self, name: str, build: Callable[[], _T]) -> _T:
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            if name not in self._values:
                self._values[name] = build()
            return self._values[name]  # type: ignore[return-value]

    def _cache(self, frame: DataFrame) -> DataFrame:
        frame = frame.cache()
        with self._guard:
            self._cached.append(frame)
        return frame

    def close(self) -> None:
        """Unpersist the frames the context cached."""
        with self._guard:
            cached, self._cached = self._cached, []
        for frame in cached:
            frame.unpersist()

    # --- the shared facts (each a `needs` name of spark_jobs.check.Check) ---------------------

    @property
    def ledger_totals(self) -> LedgerTotals | None:
        """attempted, acked, transactional, first and last send_ts; None without a ledger."""
        ledger = self.data.ledger
        if ledger is None:
            return None

        def build() -> LedgerTotals:
            t = ledger_totals(ledger)
            return {
                "attempted": int(t["attempted"] or 0),
                "acked": int(t["acked"] or 0),
                "transactional": bool(t["transactional"]),
                "first_send": t["first_send"],
                "last_send": t["last_send"],
            }

        return self._once("ledger_totals", build)

    @property
    def machine(self) -> Machine | None:
        """The machine the cell ran on (machine.parquet); None without the table. Its
        overloaded spans are what the latency check leaves out and the machine check judges
        by."""
        return self._once("machine", lambda: read_machine(CellPaths(self.cell_dir).machine))

    @property
    def transactional(self) -> bool:
        """Whether any ledger row is of a transaction (False without a ledger)."""
        totals = self.ledger_totals
        return totals is not None and totals["transactional"]

    @property
    def sends(self) -> tuple[int | None, int | None]:
        """The first and last send_ts of the ledger (None, None without one)."""
        totals = self.ledger_totals
        return (None, None) if totals is None else (totals["first_send"], totals["last_send"])

    @property
    def blocks(self) -> DataFrame | None:
        """The seq blocks (seq_blocks.block_facts, cached); None with no table to read."""
        ledger, log, consumed = self.data.ledger, self.trusted_log, self.data.consumed
        if ledger is None and log is None and consumed is None:
            return None
        return self._once(
            "blocks", lambda: self._cache(sb.block_facts(ledger, log, consumed, self.sets))
        )

    @property
    def block_totals(self) -> sb.BlockTotals | None:
        """seq_blocks.totals of the blocks, in one pass."""
        blocks = self.blocks
        if blocks is None:
            return None
        return self._once("block_totals", lambda: sb.totals(blocks, self.sets))

    @property
    def ledger_duplicates(self) -> int | None:
        """Ledger rows beyond its distinct seqs (None without a ledger)."""
        totals = self.block_totals
        if totals is None or self.data.ledger is None:
            return None
        return totals["ledger_duplicates"]

    @property
    def dirty(self) -> DataFrame | None:
        """seq_blocks.dirty_blocks (None without consumed.parquet)."""
        blocks = self.blocks
        if blocks is None or self.data.consumed is None:
            return None
        return self._once("dirty", lambda: sb.dirty_blocks(blocks, self.sets))

    @property
    def detail(self) -> DataFrame | None:
        """seq_blocks.dirty_firsts, cached: read by more than one check."""
        consumed, dirty = self.data.consumed, self.dirty
        if consumed is None or dirty is None:
            return None
        return self._once("detail", lambda: self._cache(sb.dirty_firsts(consumed, dirty)))

    @property
    def firsts(self) -> DataFrame | None:
        """seq_blocks.first_consumptions: each set's first consumption of each seq."""
        consumed, dirty, detail = self.data.consumed, self.dirty, self.detail
        if consumed is None or dirty is None or detail is None:
            return None
        return self._once("firsts", lambda: sb.first_consumptions(consumed, dirty, detail))


def ledger_totals(ledger: DataFrame) -> dict[str, int | None]:
    """attempted, acked, expected (is_expected), transactional (rows with a txn), first and
    last send_ts in one pass (None bounds when empty)."""
    row = ledger.agg(
        F.count(F.lit(1)).alias("attempted"),
        F.coalesce(F.sum(F.when(F.col("status") == "ok", 1).otherwise(0)), F.lit(0)).alias("acked"),
        F.coalesce(F.sum(F.when(is_expected(), 1).otherwise(0)), F.lit(0)).alias("expected"),
        F.count("txn").alias("transactional"),
        F.min("send_ts").alias("first_send"),
        F.max("send_ts").alias("last_send"),
    ).first()
    assert row is not None  # a global aggregate always has one row
    return {k: None if row[k] is None else int(row[k]) for k in row.asDict()}


def _sets(data: CellData) -> list[str]:
    names = hf.consumer_sets(data.history)
    if data.consumed is not None:
        found = data.consumed.select(consumer_set(F.col("consumer")).alias("s")).distinct()
        names |= {str(r["s"]) for r in found.collect()}
    return sorted(names - hf.unseen_sets(data.history))
