"""lost_where: where each lost record went (never_appended, truncated, deleted, unsynced,
corrupted, unknown): the lost records (acknowledged, absent from the final read) against the
brokers' copies of the topic (segments.parquet, segment_logs.parquet), what the history
says about those copies (`segments.captured`, `segments.decoded`, kill wipes, what power
losses and damaged segments discarded) and the truncations the brokers logged. A review: it places the records the records check counted as `lost`, after the
evidence check had its say, so `lost_where` is undecided exactly when `lost` is (its counts
add up to `lost`).

kafkatest's `validate_delivery` searches the brokers' segment files for what the consumer
missed; here every copy taken during the run is searched, and each lost record is placed:

* `truncated`: in a copy taken before a broker rejoined after a fault (a deposed leader's
  log, which it then truncated to the new leader's), gone from the final log (evidence
  `copy`); or in no copy, but a broker logged a truncation of its partition to at or below
  the offset it was acknowledged at, after it was acknowledged (evidence `log`: Kafka's own
  "Truncating to offset X" line, spark_jobs.broker_truncations). That places what a
  deposed leader still running acknowledged after its copy was taken, before it learnt it
  was deposed and truncated;
* `deleted`: its acknowledged offset below the partition's final log start offset (the
  largest first offset among the brokers' final copies: retention), or found only in a copy
  taken before a disk wipe;
* `corrupted`: acknowledged before a `corrupt` fault damaged its partition's segment, at or
  after that segment's base offset (Kafka's recovery ends the log at the first batch that
  fails its CRC or ends short: what follows goes too);
* `unsynced`: acknowledged before a `power-loss` dropped bytes of its partition's segment (or
  undid the segment's creation), at or after that segment's base offset: plfs's own record of
  what it discarded (`fault.discarded`), and no heal copy holds it;
* `never_appended`: in no copy, and no copy that could have held it is missing (no copy
  failed, every wipe was copied first): no broker's log ever held it that anyone saw;
* `unknown`: it cannot be placed, with the reason (no copies at all, a copy failed, a wipe
  with no copy, a broker's final copy holds it though the final read did not, or it was
  acknowledged after the copy of a broker that was still running when copied and no
  broker logged its truncation).

The order (first match wins, `placed`): a damage covers it (corrupted, damage: the heal copy
of a damaged segment may still decode the records after the bad batch, which recovery
drops); a heal copy holds it (truncated, copy); only a wipe copy holds it (deleted); below
the final log start (deleted); a final copy holds it (unknown); a power loss dropped its
segment's unsynced bytes (unsynced, plfs); a logged truncation (truncated, log); no copies,
a failed copy, acknowledged after a running broker's copy (unknown); otherwise
never_appended.

Broker log times are the containers' clock, which is the host's kernel clock (the ack
times' too): a logged truncation counts if it is no earlier than the ack time minus
LOG_CLOCK_TOLERANCE_MS (the client takes the ack time when it handles the response, a
little after the broker appended). In a cell with a clock-skew fault the two clocks are
not comparable and the log rule is not used.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F

from harness.results import events as ev
from harness.results.events import Event
from harness.results.layout import CellPaths
from harness.results.metrics import LOST_PLACES, Figures
from spark_jobs.broker_truncations import Truncation, read_truncations
from spark_jobs.cell_data import SEGMENTS_SCHEMA, is_expected, read_parquet, visible
from spark_jobs.check import REVIEW, Check
from spark_jobs.context import CellContext
from spark_jobs.local_rows import local_frame

PLACES = LOST_PLACES
UNSYNCED, CORRUPTED = "unsynced", "corrupted"
DAMAGING = {"power-loss": UNSYNCED, "corrupt": CORRUPTED}  # fault -> the place it explains
SAMPLE = 10
IN_FINAL_COPY = "in a broker's final copy, but not in the final read"
LOG_CLOCK_TOLERANCE_MS = 1000
CLOCK_SKEWED = "a clock-skew fault in the cell: broker log times not compared with ack times"

KEYS = ("lost_where", "lost_where_reasons", "lost_where_sample")


def run(ctx: CellContext) -> Figures:
    lost = (ctx.summary.get("counts") or {}).get("lost")
    if lost is None:
        why = (ctx.summary.get("undecided") or {}).get("lost", "lost is undecided")
        return {"lost_where": None, "undecided": {"lost_where": f"lost undecided ({why})"}}
    if lost == 0:
        return {"lost_where": dict.fromkeys(PLACES, 0)}
    ledger, log = ctx.data.ledger, ctx.trusted_log
    assert ledger is not None and log is not None  # lost was decided from them
    segments = segments_frame(ctx.spark, ctx.cell_dir)
    facts = copy_facts(ctx.data.history, segments is not None)
    starts = {} if facts.topic is None else final_starts(ctx.cell_dir, facts.topic)
    logs = log_truncations(ctx.cell_dir, ctx.data.history, facts.topic)
    lost_rows = lost_records(ledger, log)
    rows = placed(ctx.spark, lost_rows, segments, facts, starts, logs).cache()
    try:
        out = summarise(rows)
    finally:
        rows.unpersist()
    count = sum(out["lost_where"].values())
    if count != lost:
        reason = f"placed {count} lost records, but lost = {lost}"
        return {"lost_where": None, "undecided": {"lost_where": reason}}
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class LogTruncations:
    """The truncations of the workload topic the brokers logged, or why they are not used."""

    found: list[Truncation]
    unused: str | None = None


def log_truncations(cell_dir: Path, history: list[Event], topic: str | None) -> LogTruncations:
    if topic is None:
        return LogTruncations([], "no workload topic")
    if any(e.get("kind") == ev.FAULT_INJECT and e.get("fault") == "clock-skew" for e in history):
        return LogTruncations([], CLOCK_SKEWED)
    return LogTruncations(read_truncations(CellPaths(cell_dir).brokers, topic))


@dataclass(frozen=True)
class Damage:
    """A segment a fault damaged on one broker (`fault.discarded`): records acknowledged in
    its partition at or after `base` before `ts` were on it when it lost bytes."""

    place: str  # UNSYNCED | CORRUPTED
    ts: int
    node: str
    partition: int
    base: int


def damages(history: list[Event], topic: str | None) -> tuple[Damage, ...]:
    """The workload topic's damaged segments, from the history's fault.discarded events
    (power-loss: `segments`, paths `<topic>-<p>/<base>.log`; corrupt: `file`)."""
    if topic is None:
        return ()
    out: list[Damage] = []
    for e in history:
        place = DAMAGING.get(str(e.get("fault")))
        if e.get("kind") != ev.FAULT_DISCARDED or place is None:
            continue
        for node, what in (e.get("discarded") or {}).items():
            if not isinstance(what, dict):
                continue
            paths = what.get("segments") or ([what["file"]] if what.get("file") else [])
            for path in paths:
                where = _segment(str(path), topic)
                if where is not None:
                    out.append(Damage(place, int(e["ts"]), str(node), *where))
    return tuple(out)


def _segment(path: str, topic: str) -> tuple[int, int] | None:
    """`chaos-0/00000000000000000042.log` -> (0, 42) when it is `topic`'s, else None."""
    folder, _, name = path.rpartition("/")
    owner, _, p = folder.rpartition("-")
    base = name.removesuffix(".log")
    if owner != topic or not p.isdigit() or not base.isdigit():
        return None
    return int(p), int(base)


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
    # Brokers copied before they rejoined (a fault had them out): the deposed leaders. A
    # logged truncation by one of them is the one that placed a record no copy holds.
    rejoined: frozenset[str] = frozenset()
    damaged: tuple[Damage, ...] = ()  # segments a power-loss or corrupt fault damaged


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
    topic = _workload_topic(history)
    return CopyFacts(
        topic,
        blockers,
        {str(e.get("label")): str(e.get("reason")) for e in captured},
        None
        if first is None
        else (int(first["ts"]) - int(first.get("took_ms") or 0), str(first["label"])),
        frozenset(str(e.get("node")) for e in captured if e.get("reason") == "heal"),
        damages(history, topic),
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


def _logged(
    spark: SparkSession, lost: DataFrame, logs: LogTruncations, rejoined: frozenset[str]
) -> DataFrame:
    """seq -> the first logged truncation (ts, broker, offset) of its partition to at or below
    its acknowledged offset, no earlier than its ack time (less the clock tolerance); one by
    a broker that rejoined after a fault first. A follower that had copied the deposed
    leader's earlier records truncates to the same offset, often sooner (measured: broker-2
    14 s before the returning leader), but never held what the leader acknowledged alone."""
    rows = [(t.partition, t.offset, t.ts, t.broker) for t in logs.found] or [(-1, -1, -1, "")]
    cut = local_frame(spark, rows, "t_partition int, t_offset bigint, t_ts bigint, broker string")
    if not logs.found:
        cut = cut.limit(0)
    matched = lost.join(
        F.broadcast(cut),
        (F.col("acked_partition") == F.col("t_partition"))
        & (F.col("t_offset") <= F.col("acked_offset"))
        & (F.col("t_ts") >= F.col("ack_ts") - F.lit(LOG_CLOCK_TOLERANCE_MS)),
    )
    others = ~F.col("broker").isin(*sorted(rejoined)) if rejoined else F.lit(True)
    first = F.struct(
        others.alias("other"),
        F.col("t_ts").alias("ts"),
        F.col("broker").alias("node"),
        F.col("t_offset").alias("to"),
    )
    best = matched.groupBy("seq").agg(F.min(first).alias("b"))
    return best.select(
        "seq", F.struct(F.col("b.ts"), F.col("b.node"), F.col("b.to")).alias("logged")
    )


def placed(
    spark: SparkSession,
    lost: DataFrame,
    segments: DataFrame | None,
    facts: CopyFacts,
    starts: dict[int, int],
    logs: LogTruncations | None = None,
) -> DataFrame:
    """Each lost record with `place`, `why` (an unknown's reason) and its evidence (`hit`:
    the copy that placed it, `logged`: the logged truncation that did, null if none)."""
    logs = logs or LogTruncations([], "no broker logs read")
    empty = "struct<ts:bigint,capture:string,node:string,partition:int,offset:bigint>"
    if segments is not None and facts.topic is not None:
        reasons = local_frame(
            spark, list(facts.labels.items()) or [("", "")], "capture string, reason string"
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
    start_df = local_frame(spark, start_rows, "acked_partition int, final_start bigint")
    rows = rows.join(F.broadcast(start_df), "acked_partition", "left")
    rows = rows.join(_logged(spark, lost, logs, facts.rejoined), "seq", "left")
    blocked = "; ".join(facts.blockers)
    nothing = segments is None or facts.topic is None
    below = F.coalesce(F.col("acked_offset") < F.col("final_start"), F.lit(False))
    opened = facts.open_copy
    after_open = F.lit(False) if opened is None else F.col("ack_ts") >= F.lit(opened[0])
    no_log = "no broker logged a truncation of its partition to or below its offset after it"
    no_log += f" was acknowledged ({logs.unused})" if logs.unused else " was acknowledged"
    open_why = (
        None
        if opened is None
        else f"acknowledged after copy {opened[1]} of a broker still running (it may have "
        f"appended it before it learnt it was deposed), and {no_log}"
    )
    heal, wipe = F.col("heal").isNotNull(), F.col("wipe").isNotNull()
    in_final, logged = F.col("collect").isNotNull(), F.col("logged").isNotNull()
    no_copies = blocked or "no broker copies of the workload topic (segments.parquet)"
    corrupted, unsynced = (_damaged(facts.damaged, p) for p in (CORRUPTED, UNSYNCED))
    # (when, place, why, evidence), first match wins
    rules: list[tuple[Column, str, str | None, str | None]] = [
        (corrupted, CORRUPTED, None, "damage"),
        (heal, "truncated", None, "copy"),
        (wipe & ~in_final, "deleted", None, "copy"),
        (below, "deleted", None, "copy"),
        (in_final, "unknown", IN_FINAL_COPY, "copy"),
        (unsynced, UNSYNCED, None, "plfs"),
        (logged, "truncated", None, "log"),
        (F.lit(nothing), "unknown", f"{no_copies}, and {no_log}", None),
        (F.lit(bool(blocked)), "unknown", f"{blocked}, and {no_log}", None),
        (after_open, "unknown", open_why, None),
    ]
    place, why, evidence = (_first(rules, i) for i in (1, 2, 3))
    hit = F.coalesce(F.col("heal"), F.col("wipe"), F.col("collect"))
    return rows.select(
        "seq",
        "acked_partition",
        "acked_offset",
        F.coalesce(place, F.lit("never_appended")).alias("place"),
        why.cast("string").alias("why"),
        hit.alias("hit"),
        F.when(evidence == "log", F.col("logged")).alias("logged"),
        evidence.cast("string").alias("evidence"),
        F.when(evidence == "damage", _damaged_nodes(facts.damaged, CORRUPTED))
        .when(evidence == "plfs", _damaged_nodes(facts.damaged, UNSYNCED))
        .alias("damaged_on"),
    )


def _covers(d: Damage) -> Column:
    """The record sat on `d`'s segment when it lost bytes."""
    return (
        (F.col("acked_partition") == F.lit(d.partition))
        & (F.col("acked_offset") >= F.lit(d.base))
        & (F.col("ack_ts") <= F.lit(d.ts))
    )


def _damaged(found: tuple[Damage, ...], place: str) -> Column:
    """Some damage of this place covers the record (false for a null offset or ack time)."""
    out = F.lit(False)
    for d in found:
        if d.place == place:
            out = out | F.coalesce(_covers(d), F.lit(False))
    return out


def _damaged_nodes(found: tuple[Damage, ...], place: str) -> Column:
    """The brokers whose damage of this place covers the record, comma-separated."""
    nodes = [F.when(_covers(d), F.lit(d.node)) for d in found if d.place == place]
    return F.concat_ws(",", F.array_distinct(F.array(*nodes, F.lit(None).cast("string"))))


def _first(rules: list[tuple[Column, str, str | None, str | None]], field: int) -> Column:
    """CASE WHEN rule 1 THEN rule 1's `field` WHEN ... END (null when no rule matches)."""
    out = F.when(rules[0][0], F.lit(rules[0][field]))
    for rule in rules[1:]:
        out = out.when(rule[0], F.lit(rule[field]))
    return out


def summarise(rows: DataFrame) -> dict[str, Any]:
    """lost_where (every place, adding up to the rows), lost_where_reasons, lost_where_sample."""
    counts = {
        str(r["place"]): int(r["n"])
        for r in rows.groupBy("place").agg(F.count("*").alias("n")).collect()
    }
    reasons: Counter[str] = Counter()
    for r in rows.filter(F.col("why").isNotNull()).groupBy("why").count().collect():
        reasons[str(r["why"])] = int(r["count"])
    sample = [_example(r) for r in _mixed(rows).collect()]
    return {
        "lost_where": {p: counts.get(p, 0) for p in PLACES},
        "lost_where_reasons": dict(reasons),
        "lost_where_sample": sample,
    }


def _mixed(rows: DataFrame) -> DataFrame:
    """The first SAMPLE rows, taking the lowest seqs of each (place, evidence) in turn, so
    that every kind of placement shows."""
    kind = Window.partitionBy("place", "evidence").orderBy("seq")
    ranked = rows.withColumn("_rank", F.row_number().over(kind))
    return ranked.orderBy("_rank", "seq").limit(SAMPLE).orderBy("seq")


def _example(r: Row) -> dict[str, Any]:
    hit, logged, damaged_on = r["hit"], r["logged"], r["damaged_on"]
    broker = hit["node"] if hit else (logged["node"] if logged else None)
    out: dict[str, Any] = {
        "seq": int(r["seq"]),
        "where": str(r["place"]),
        "partition": hit["partition"] if hit else r["acked_partition"],
        "offset": hit["offset"] if hit else r["acked_offset"],
        "broker": damaged_on or broker,
        "capture": hit["capture"] if hit else None,
        "capture_ts": hit["ts"] if hit else None,
        "evidence": r["evidence"],
    }
    if logged:
        out["log_ts"] = logged["ts"]
        out["truncated_to"] = logged["to"]
    if r["why"]:
        out["why"] = r["why"]
    return out


def segments_frame(spark: SparkSession, cell_dir: Path) -> DataFrame | None:
    return read_parquet(spark, CellPaths(cell_dir).segments, SEGMENTS_SCHEMA)


CHECK = Check("forensics", needs=("summary",), decides=KEYS, run=run, lane=REVIEW)
