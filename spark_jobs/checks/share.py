"""share: what each share group's members were handed and what the broker made of their
answers (share.parquet), per set: records delivered more than once and the spread of their
delivery counts, records handed to another member after the broker took one member's
ACCEPT (the promise share groups make is that an accepted record is never handed out
again), records archived (rejected, or handed out `delivery_limit` times without an ACCEPT
the broker took), and acknowledgements refused because the acquisition lock had expired.

A record is a (partition, offset), not a seq: a producer that wrote one seq twice wrote two
records. `reprocessed` leaves share sets out (redelivery is their contract: `redelivered`
counts it); `lost_never_consumed.<set>` is the consumers check's, over the records members
processed to ACCEPT (their `consumed` rows).

`redelivery_wait_s.<set>` is one wait, the longest: its window (the delivery before it to the
redelivery) goes under `timing_windows` for the machine check, which leaves the figure
undecided when the machine was overloaded for half of it (harness.results.overload_rules,
ONE_WINDOW).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from harness.results.machine import Span
from harness.results.member_files import ACKED, DELIVERED
from harness.results.metrics import SHARE_FIGURES, Figures, ShareSetFigures
from spark_jobs.cell_data import consumer_set
from spark_jobs.check import Check
from spark_jobs.context import CellContext

# What each client calls a refusal because the acquisition lock had expired (librdkafka's
# error name; the Java client's exception).
LOCK_EXPIRED = ("INVALID_RECORD_STATE", "InvalidRecordStateException")
NOTE = "reprocessed leaves this set out: redelivery is a share group's contract (redelivered)"


def run(ctx: CellContext) -> Figures:
    sets = ctx.share_sets
    if not sets:
        return {"share_by_set": {}}
    share = ctx.data.share
    if share is None:
        return {
            "share_by_set": {},
            "undecided": {
                "share_by_set": "share.parquet missing",
                **dict.fromkeys(SHARE_FIGURES, "share.parquet missing"),
            },
        }
    by_set: dict[str, ShareSetFigures] = {}
    undecided: dict[str, str] = {}
    windows: dict[str, list[list[int]]] = {}
    for name, facts in sorted(sets.items()):
        rows = share.filter(consumer_set(F.col("consumer")) == name)
        by_set[name], longest = set_figures(rows, facts["delivery_limit"], facts["lock_ms"])
        if ctx.drain_reason is not None:
            undecided.update(_unsettled(name, by_set[name], ctx.drain_reason))
        if longest is not None and by_set[name]["redelivery_wait_s"] is not None:
            windows[f"redelivery_wait_s.{name}"] = [list(longest)]
    return {"share_by_set": by_set, "undecided": undecided, "timing_windows": windows}


def _unsettled(name: str, figures: ShareSetFigures, reason: str) -> dict[str, str]:
    """A drain that ended before the group settled leaves deliveries and answers to come:
    every figure here can only grow, so a positive one stands as a lower bound and a zero
    (or none) decides nothing (spark_jobs.check.lower_bound's rule), per `<figure>.<set>`."""
    out: dict[str, str] = {}
    for figure in SHARE_FIGURES:
        key = f"{figure}.{name}"
        if figures[figure]:  # type: ignore[literal-required]
            out[key] = f"a lower bound ({reason})"
        else:
            figures[figure] = None  # type: ignore[literal-required]
            out[key] = reason
    return out


def set_figures(rows: DataFrame, limit: int, lock_ms: int) -> tuple[ShareSetFigures, Span | None]:
    """The set's figures, and the window of its longest redelivery wait (None: none)."""
    delivered = F.col("event") == DELIVERED
    ok = (F.col("event") == ACKED) & F.col("error").isNull()
    taken = ok & (F.col("ack") == "accept")
    # The broken promise: a record handed to another member after the broker took one
    # member's ACCEPT (that member held the record's acquisition then, so the other's came
    # later). A later delivery to the accepting member itself proves nothing: a client that
    # fetched ahead may hold an acquisition the broker made before the ACCEPT, which the
    # ACCEPT then settled. Two taken answers alone prove nothing either: Kafka answers an
    # acknowledgement of an offset below the share-partition's start offset with success.
    record = Window.partitionBy("partition", "offset")
    first_taken = F.min(F.when(taken, F.col("ts"))).over(record)
    taker = F.first(F.when(taken, F.col("consumer")), ignorenulls=True).over(
        record.orderBy("ts").rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    )
    per_record = (
        rows.withColumn(
            "after_taken",
            delivered & (F.col("ts") > first_taken) & (F.col("consumer") != taker),
        )
        .groupBy("partition", "offset")
        .agg(
            F.sum(delivered.cast("int")).alias("deliveries"),
            F.max("delivery_count").alias("top"),
            F.sum(taken.cast("int")).alias("accepts"),
            F.sum((ok & (F.col("ack") == "reject")).cast("int")).alias("rejects"),
            F.sum(F.coalesce(F.col("after_taken"), F.lit(False)).cast("int")).alias("after"),
        )
    )
    never_accepted = F.col("accepts") == 0
    rejected = never_accepted & (F.col("rejects") > 0)
    at_limit = never_accepted & ~(F.col("rejects") > 0) & (F.col("top") >= limit)
    totals = per_record.agg(
        F.count(F.lit(1)).alias("records"),
        F.coalesce(F.sum("deliveries"), F.lit(0)).alias("deliveries"),
        F.sum(((F.col("deliveries") > 1) | (F.col("top") > 1)).cast("int")).alias("redelivered"),
        F.sum((F.col("accepts") > 0).cast("int")).alias("accepted"),
        F.sum(((F.col("accepts") > 0) & (F.col("after") > 0)).cast("int")).alias("accepted_twice"),
        F.sum((F.col("accepts") > 1).cast("int")).alias("accept_taken_twice"),
        F.sum(rejected.cast("int")).alias("rejected"),
        F.sum(at_limit.cast("int")).alias("at_limit"),
    ).first()
    counts = {
        str(r["top"]): int(r["n"])
        for r in per_record.filter(F.col("top").isNotNull())
        .groupBy("top")
        .agg(F.count(F.lit(1)).alias("n"))
        .orderBy("top")
        .collect()
    }
    longest, median, window = _redelivery_waits(rows)
    refusals = (
        rows.filter((F.col("event") == ACKED) & F.col("error").isNotNull())
        .groupBy("ack", "error")
        .agg(F.count(F.lit(1)).alias("n"))
        .collect()
    )
    errors: dict[str, int] = {}
    expired_by_ack: dict[str, int] = {}
    for r in refusals:
        errors[str(r["error"])] = errors.get(str(r["error"]), 0) + int(r["n"])
        if r["error"] in LOCK_EXPIRED:
            ack = str(r["ack"])
            expired_by_ack[ack] = expired_by_ack.get(ack, 0) + int(r["n"])

    def total(key: str) -> int:
        return int((totals[key] if totals is not None else 0) or 0)

    figures: ShareSetFigures = {
        "deliveries": total("deliveries"),
        "records": total("records"),
        "redelivered": total("redelivered"),
        "delivery_counts": dict(sorted(counts.items(), key=lambda kv: int(kv[0]))),
        "accepted": total("accepted"),
        "accepted_twice": total("accepted_twice"),
        "accept_taken_twice": total("accept_taken_twice"),
        "archived": total("rejected") + total("at_limit"),
        "archived_by": {"reject": total("rejected"), "limit": total("at_limit")},
        "lock_expired": sum(n for e, n in errors.items() if e in LOCK_EXPIRED),
        "redelivery_wait_s": longest,
        "redelivery_wait_p50_s": median,
        "ack_errors": dict(sorted(errors.items())),
        "lock_expired_by_ack": dict(sorted(expired_by_ack.items())),
        "delivery_limit": limit,
        "lock_ms": lock_ms,
        "note": NOTE,
    }
    return figures, window


def _redelivery_waits(rows: DataFrame) -> tuple[float | None, float | None, Span | None]:
    """(longest, median) seconds from a record's delivery to its next one, over every
    redelivery (None without one): how long what a member held stayed out of reach; and the
    longest one's window, [the delivery, the next]."""
    order = Window.partitionBy("partition", "offset").orderBy("ts", "_row")
    deliveries = rows.filter(F.col("event") == DELIVERED)
    waits = deliveries.select(
        (F.col("ts") - F.lag("ts").over(order)).alias("wait_ms"),
        F.lag("ts").over(order).alias("since"),
        "ts",
    ).filter(F.col("wait_ms").isNotNull())
    r = waits.agg(
        F.max(F.struct("wait_ms", "since", "ts")).alias("top"),
        F.percentile_approx("wait_ms", 0.5).alias("mid"),
    ).first()
    if r is None or r["top"] is None:
        return None, None, None
    top = r["top"]
    window = (int(top["since"]), int(top["ts"]))
    return round(int(top["wait_ms"]) / 1000, 3), round(int(r["mid"]) / 1000, 3), window


CHECK = Check(
    name="share",
    needs=("share_sets", "drain_reason"),
    decides=("share_by_set", *SHARE_FIGURES),
    run=run,
)
