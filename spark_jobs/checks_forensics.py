"""Where every lost record went: the lost records (acknowledged, absent from the final read)
against the brokers' copies of the topic (segments.parquet, segment_logs.parquet) and what
the history says about those copies (`segments.captured`, `segments.decoded`, kill wipes).

kafkatest's `validate_delivery` searches the brokers' segment files for what the consumer
missed; here every copy taken during the run is searched, and each lost record is placed:

* `truncated`: in a copy taken before a broker rejoined after a fault (a deposed leader's
  log, which it then truncated to the new leader's), gone from the final log;
* `deleted`: its acknowledged offset below the partition's final log start offset (the
  largest first offset among the brokers' final copies: retention), or found only in a copy
  taken before a disk wipe;
* `never_appended`: in no copy, and no copy that could have held it is missing (no copy
  failed, every wipe was copied first): no broker's log ever held it that anyone saw;
* `unknown`: it cannot be placed, with the reason (no copies at all, a copy failed, a wipe
  with no copy, a broker's final copy holds it though the final read did not, or it was
  acknowledged after the copy of a broker that was still running when copied: a deposed
  leader cut off by a network fault keeps appending after the cut heals, until it learns
  of the new leader, and those appends are not in its copy).

The rules are tried in that order, first match wins (`place`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from harness.results import events as ev
from harness.results.events import Event
from harness.results.layout import CellPaths
from spark_jobs.cell_data import SEGMENTS_SCHEMA, read_parquet
from spark_jobs.checks_records import is_expected, visible

PLACES = ("never_appended", "truncated", "deleted", "unknown")
SAMPLE = 10
IN_FINAL_COPY = "in a broker's final copy, but not in the final read"


@dataclass(frozen=True)
class CopyFacts:
    """What the history says about the copies: the workload topic, and why records found in
    no copy cannot be called never_appended (empty: they can)."""

    topic: str | None
    blockers: list[str]
    labels: dict[str, str]  # capture label -> reason (heal | wipe | collect)
    # The first heal copy of a broker still running (a network fault's heal): it may have
    # appended, and acknowledged, records after it (until it learnt it was deposed).
    open_copy: tuple[int, str] | None = None  # (ts, label)


def copy_facts(history: list[Event], has_segments: bool) -> CopyFacts:
    """Read from the history (pure: unit-tested on hand-built events)."""
    captured = [e for e in history if e.get("kind") == ev.SEGMENTS_CAPTURED]
    decoded = [e for e in history if e.get("kind") == ev.SEGMENTS_DECODED]
    blockers: list[str] = []
    if not decoded:
        blockers.append("no segments.decoded event: the brokers' logs were never copied")
    elif decoded[-1].get("complete") is not True:
        blockers.append(f"decoding the copies failed: {decoded[-1].get('error')}")
    elif not has_segments:
        blockers.append("segments.parquet missing")
    for e in captured:
        if e.get("complete") is not True:
            blockers.append(f"copy {e.get('label')} of {e.get('node')} failed: {e.get('error')}")
    wiped = {e.get("fault_id") for e in captured if e.get("reason") == "wipe"}
    for e in history:
        if e.get("kind") == ev.FAULT_INJECT and e.get("wipe") and e.get("fault_id") not in wiped:
            blockers.append(f"{e.get('target')}'s disk was wiped with no copy taken first")
    running = [e for e in captured if e.get("reason") == "heal" and e.get("state") == "running"]
    first = min(running, key=lambda e: int(e["ts"]), default=None)
    return CopyFacts(
        _workload_topic(history),
        blockers,
        {str(e.get("label")): str(e.get("reason")) for e in captured},
        None
        if first is None
        else (int(first["ts"]) - int(first.get("took_ms") or 0), str(first["label"])),
    )


def _workload_topic(history: list[Event]) -> str | None:
    for e in history:
        if e.get("kind") == ev.PIPELINE_START and e.get("input"):
            return str(e["input"])
    for e in history:
        if e.get("kind") in (ev.PARTITION_WATCH_END, ev.PARTITION_STATE) and e.get("topic"):
            return str(e["topic"])
    for e in history:
        if e.get("kind") == ev.TOPIC_CREATE and not str(e.get("topic", "_")).startswith("_"):
            return str(e["topic"])
    return None


def lost_records(ledger: DataFrame, log: DataFrame) -> DataFrame:
    """seq, acked_partition, acked_offset (null when the ack gave none) of each lost record:
    the records check's `lost` set (expected in the log, not visible in it)."""
    offset = F.when(F.col("offset") >= 0, F.col("offset"))
    acked = ledger.filter(is_expected() & F.col("seq").isNotNull()).groupBy("seq")
    rows = acked.agg(
        F.first("partition", ignorenulls=True).alias("acked_partition"),
        F.first(offset, ignorenulls=True).alias("acked_offset"),
        F.max("ack_ts").alias("ack_ts"),
    )
    return rows.join(visible(log).select("seq").distinct(), "seq", "left_anti")


def final_starts(cell_dir: Path, topic: str) -> dict[int, int]:
    """partition -> its final log start offset: the largest first offset among the
    brokers' final (collect) copies."""
    path = CellPaths(cell_dir).segment_logs
    if not path.is_file():
        return {}
    table = pq.read_table(path).to_pylist()
    out: dict[int, int] = {}
    for row in table:
        if row["reason"] == "collect" and row["topic"] == topic and row["log_start"] is not None:
            p = int(row["partition"])
            out[p] = max(out.get(p, int(row["log_start"])), int(row["log_start"]))
    return out


def _first_copy(reason: str) -> Column:
    """The earliest copy of this reason holding the seq: (ts, capture, node, partition, offset)."""
    found = F.struct("ts", "capture", "node", "partition", "offset")
    return F.min(F.when(F.col("reason") == reason, found)).alias(reason)


def placed(
    spark: SparkSession,
    lost: DataFrame,
    segments: DataFrame | None,
    facts: CopyFacts,
    starts: dict[int, int],
) -> DataFrame:
    """Each lost record with `place`, `why` (an unknown's reason) and its evidence (`hit`:
    the copy that placed it, null if none)."""
    empty = "struct<ts:bigint,capture:string,node:string,partition:int,offset:bigint>"
    if segments is not None and facts.topic is not None:
        reasons = spark.createDataFrame(
            list(facts.labels.items()) or [("", "")], "capture string, reason string"
        )
        hits = (
            segments.filter((F.col("topic") == facts.topic) & F.col("seq").isNotNull())
            .join(reasons, "capture")
            .join(lost.select("seq"), "seq")
            .groupBy("seq")
            .agg(_first_copy("heal"), _first_copy("wipe"), _first_copy("collect"))
        )
        rows = lost.join(hits, "seq", "left")
    else:
        rows = lost.select(
            "*", *[F.lit(None).cast(empty).alias(r) for r in ("heal", "wipe", "collect")]
        )
    start_rows = [(p, s) for p, s in starts.items()] or [(-1, -1)]
    start_df = spark.createDataFrame(start_rows, "acked_partition int, final_start bigint")
    rows = rows.join(F.broadcast(start_df), "acked_partition", "left")
    blocked = "; ".join(facts.blockers)
    nothing = segments is None or facts.topic is None
    below = F.col("acked_offset") < F.col("final_start")
    opened = facts.open_copy
    after_open = F.lit(False) if opened is None else F.col("ack_ts") >= F.lit(opened[0])
    open_why = (
        None
        if opened is None
        else f"acknowledged after copy {opened[1]} of a broker still running: it may have "
        "appended it before it learnt it was deposed"
    )
    place = (
        F.when(F.lit(nothing), F.lit("unknown"))
        .when(F.col("heal").isNotNull(), F.lit("truncated"))
        .when(F.col("wipe").isNotNull() & F.col("collect").isNull(), F.lit("deleted"))
        .when(below, F.lit("deleted"))
        .when(F.col("collect").isNotNull(), F.lit("unknown"))
        .when(F.lit(bool(blocked)), F.lit("unknown"))
        .when(after_open, F.lit("unknown"))
        .otherwise(F.lit("never_appended"))
    )
    no_copies = blocked or "no broker copies of the workload topic (segments.parquet)"
    why = (
        F.when(F.lit(nothing), F.lit(no_copies))
        .when(F.col("heal").isNotNull() | F.col("wipe").isNotNull() | below, F.lit(None))
        .when(F.col("collect").isNotNull(), F.lit(IN_FINAL_COPY))
        .when(F.lit(bool(blocked)), F.lit(blocked or None))
        .when(after_open, F.lit(open_why))
    )
    hit = F.coalesce(F.col("heal"), F.col("wipe"), F.col("collect"))
    return rows.select(
        "seq",
        "acked_partition",
        "acked_offset",
        place.alias("place"),
        why.alias("why"),
        hit.alias("hit"),
    )


def summarise(rows: DataFrame) -> dict[str, Any]:
    """lost_where (every place, adding up to the rows), lost_where_reasons, lost_where_sample."""
    counts = {
        str(r["place"]): int(r["n"])
        for r in rows.groupBy("place").agg(F.count("*").alias("n")).collect()
    }
    reasons: Counter[str] = Counter()
    for r in rows.filter(F.col("why").isNotNull()).groupBy("why").count().collect():
        reasons[str(r["why"])] = int(r["count"])
    sample = []
    for r in rows.orderBy("seq").limit(SAMPLE).collect():
        hit = r["hit"]
        sample.append(
            {
                "seq": int(r["seq"]),
                "where": str(r["place"]),
                "partition": hit["partition"] if hit else r["acked_partition"],
                "offset": hit["offset"] if hit else r["acked_offset"],
                "broker": hit["node"] if hit else None,
                "capture": hit["capture"] if hit else None,
                "capture_ts": hit["ts"] if hit else None,
                **({"why": r["why"]} if r["why"] else {}),
            }
        )
    return {
        "lost_where": {p: counts.get(p, 0) for p in PLACES},
        "lost_where_reasons": dict(reasons),
        "lost_where_sample": sample,
    }


def segments_frame(spark: SparkSession, cell_dir: Path) -> DataFrame | None:
    return read_parquet(spark, CellPaths(cell_dir).segments, SEGMENTS_SCHEMA)
