"""The producer's own schedule as a measured fact: how far its sends fell behind the times
its pacing planned for them, how many records it planned, how long it waited in the client.

A figure that depends on the send rate (the ack latencies, unavailable_s) measures Kafka
only while the producer kept its schedule: Kafka's Java producer blocks in send() (for
metadata of a partition it does not know, for room in buffer.memory, each up to
max.block.ms), librdkafka's produce() never does. So the slip is measured, not assumed.

The schedule (`producer.schedule`, one per incarnation: its ts is when the pacing started,
record first_seq + j is due j / rate s later, `planned` records are due before its end):
record seq's planned time = ts + (seq - first_seq) / rate; behind = send_ts - planned time
(send_ts is taken when the record's batch is written to the ledger, before the client has
it: a wait inside a batch shows from the next batch on). A history before the event: the
incarnations from `producer.start` (rate, first_seq), each starting at its first send;
`producer_planned` and `producer_blocked_s` are then undecided.

* producer_planned = the first incarnation's `planned`: the records the workload's schedule
  planned from its start to its end (beside `attempted`; a producer-crash loses some too).
* producer_behind_max_s = the most a record was behind: the sends', and when the last
  incarnation stopped short of its plan, the first record never sent, behind until the
  schedule's end (or the producer's end, if earlier).
* producer_behind_s = the seconds during which the producer was more than
  SCHEDULE_TOLERANCE_S behind, i.e. the oldest record not yet sent was due more than that
  long ago (between two consecutive sends, the later batch's first record tells), with the
  same tail.
* producer_blocked_s = the `producer.blocked` waits summed: the Java client's send() calls
  of 10 ms or more, librdkafka's full local queue.
* timing_windows: producer_behind_max_s -> its one window, the worst record's [planned time,
  send time] (the tail's: [due, stop]), when it was behind at all: a maximum the machine
  check undecides when the machine was overloaded for half of it (harness.results.overload_rules,
  ONE_WINDOW); the sums are judged over the workload.
* schedule_notes: figure -> how far behind the producer was in the part of the run the
  figure is over (spark_jobs.send_parts; the whole run for ack_p50/p99/max and
  unavailable_s), when that is more than the tolerance. A note, never an undecided: the
  figure stands, measured on a producer that sent late.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from harness.results import events as ev
from harness.results.events import Event
from harness.results.machine import Span
from harness.results.metrics import SCHEDULE_METRICS, SCHEDULE_TOLERANCE_S, Figures
from spark_jobs.check import Check
from spark_jobs.context import NO_LEDGER, CellContext
from spark_jobs.send_parts import (
    ALL,
    FAULTED,
    RECOVERING,
    STEADY,
    SendPeriods,
    first_ack,
    send_part,
)

TOLERANCE_MS = SCHEDULE_TOLERANCE_S * 1000
# A rate-dependent figure -> the part of the run it is over, and how a note names it.
NOTED = {
    "ack_p50_ms": (ALL, "the whole run"),
    "ack_p99_ms": (ALL, "the whole run"),
    "ack_max_ms": (ALL, "the whole run"),
    "unavailable_s": (ALL, "the whole run"),
    "ack_p99_ms_faulted": (FAULTED, "records sent while a fault window was open"),
    "ack_p99_ms_recovering": (RECOVERING, "records sent while the cluster recovered"),
    "ack_p99_ms_steady": (STEADY, "records sent outside faults and recoveries"),
}
NO_SCHEDULE = "no producer.start with a rate (nor producer.schedule) in history.jsonl"
OLD_PRODUCER = "the producer wrote no producer.schedule event (a history from before it)"


@dataclass(frozen=True)
class Segment:
    """One incarnation's schedule."""

    first_seq: int
    rate: float
    start_ms: int | None  # None: from its first send
    end_ms: int | None
    planned: int | None
    stopped_ms: int | None = None  # its producer.end, if any


def segments(history: list[Event]) -> tuple[list[Segment], bool]:
    """The incarnations' schedules by first_seq, and whether they came from
    `producer.schedule` events (else from `producer.start`)."""
    ordered = sorted(history, key=lambda e: e["ts"])
    found = [e for e in ordered if e["kind"] == ev.PRODUCER_SCHEDULE and _rate(e) is not None]
    if found:
        ends = [int(e["ts"]) for e in ordered if e["kind"] == ev.PRODUCER_END]
        out = []
        for e in found:
            after = [t for t in ends if t >= int(e["ts"])]
            out.append(
                Segment(
                    first_seq=_int(e.get("first_seq")) or 0,
                    rate=_rate(e) or 0.0,
                    start_ms=int(e["ts"]),
                    end_ms=_int(e.get("end_ms")),
                    planned=_int(e.get("planned")),
                    stopped_ms=min(after) if after else None,
                )
            )
        return sorted(out, key=lambda s: s.first_seq), True
    starts = [e for e in ordered if e["kind"] == ev.PRODUCER_START and _rate(e) is not None]
    old = [
        Segment(_int(e.get("first_seq")) or 0, _rate(e) or 0.0, None, None, None) for e in starts
    ]
    return sorted(old, key=lambda s: s.first_seq), False


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _rate(event: Event) -> float | None:
    rate = event.get("rate")
    if isinstance(rate, bool) or not isinstance(rate, int | float) or rate <= 0:
        return None
    return float(rate)


def _by_segment(segs: list[Segment], value: list[Column]) -> Column:
    """value[k] for the segment a seq falls in (the last one whose first_seq it reaches)."""
    out = value[0]
    for seg, v in zip(segs[1:], value[1:], strict=True):
        out = F.when(F.col("seq") >= F.lit(seg.first_seq), v).otherwise(out)
    return out


def behind_frame(ledger: DataFrame, segs: list[Segment]) -> tuple[DataFrame, list[int | None]]:
    """The sent records with `planned_ts` and `behind_ms` (ms, double), and each segment's
    start (its first send when its schedule does not say)."""
    sent = ledger.filter(F.col("send_ts").isNotNull() & F.col("seq").isNotNull())
    index = _by_segment(segs, [F.lit(k) for k in range(len(segs))])
    starts: list[int | None] = [s.start_ms for s in segs]
    if any(s is None for s in starts):
        rows = sent.groupBy(index.alias("k")).agg(F.min("send_ts").alias("t")).collect()
        firsts = {int(r["k"]): int(r["t"]) for r in rows}
        starts = [s if s is not None else firsts.get(k) for k, s in enumerate(starts)]
    planned = _by_segment(
        segs,
        [
            F.lit(float(t if t is not None else 0))
            + (F.col("seq") - F.lit(s.first_seq)) * F.lit(1000.0 / s.rate)
            for s, t in zip(segs, starts, strict=True)
        ],
    )
    frame = sent.select("seq", "send_ts", planned.alias("planned_ts")).withColumn(
        "behind_ms", F.col("send_ts") - F.col("planned_ts")
    )
    return frame, starts


def late_ms(frame: DataFrame) -> float:
    """Milliseconds during which the oldest unsent record was due more than TOLERANCE_MS
    ago: per distinct send time T (its batch's first record planned at P) with the previous
    send time T', the span [max(T', P + tolerance), T). Only late batches are needed: a
    batch on time before a late one leaves its span starting at P + tolerance anyway."""
    late = (
        frame.filter(F.col("behind_ms") > F.lit(TOLERANCE_MS))
        .groupBy("send_ts")
        .agg(F.min("planned_ts").alias("p"))
    )
    previous = F.lag("send_ts").over(Window.orderBy("send_ts"))
    span = F.col("send_ts") - F.greatest(
        F.col("p") + F.lit(TOLERANCE_MS), F.coalesce(previous.cast("double"), F.lit(0.0))
    )
    row = late.select(F.greatest(span, F.lit(0.0)).alias("s")).agg(F.sum("s")).first()
    return 0.0 if row is None or row[0] is None else float(row[0])


class Tail(NamedTuple):
    """The records the last incarnation planned and never sent: the first of them."""

    behind_ms: float  # the most it was behind: from when it was due until the stop
    late_ms: float  # the ms it was more than the tolerance behind, after the last send
    window: Span | None  # [due, stop]: the maximum's own window (None: not behind)


NO_TAIL = Tail(0.0, 0.0, None)


def tail(
    segs: list[Segment], starts: list[int | None], last_seq: int | None, last_send: int | None
) -> Tail:
    """The first record the last incarnation planned and never sent, from the last send
    until its schedule's end (or its producer.end if earlier). NO_TAIL when it sent its plan
    or its plan is unknown."""
    seg, start = segs[-1], starts[-1]
    if seg.planned is None or seg.end_ms is None or start is None:
        return NO_TAIL
    unsent = max(seg.first_seq, (last_seq + 1) if last_seq is not None else seg.first_seq)
    if unsent >= seg.first_seq + seg.planned:
        return NO_TAIL
    due = start + (unsent - seg.first_seq) * 1000.0 / seg.rate
    stop = seg.end_ms if seg.stopped_ms is None else min(seg.end_ms, seg.stopped_ms)
    since = max(float(last_send if last_send is not None else start), due + TOLERANCE_MS)
    window = (round(due), stop) if stop > due else None
    return Tail(max(stop - due, 0.0), max(stop - since, 0.0), window)


def notes(behind: dict[str, float]) -> dict[str, str]:
    """figure -> its note, for the parts more than the tolerance behind (ms)."""
    out = {}
    for figure, (part, words) in NOTED.items():
        ms = behind.get(part, 0.0)
        if ms > TOLERANCE_MS:
            out[figure] = (
                f"the producer was up to {ms / 1000:.1f} s behind its schedule during this"
                f" figure's window ({words})"
            )
    return out


def behind_window(worst: list[Row], unsent: Tail) -> Span | None:
    """producer_behind_max_s's own window: the most-behind record's [planned, sent] (the
    parts' worst rows, `w`), or the unsent tail's when that was behind more; None when no
    record was behind its plan (a figure of 0 spans no time)."""
    sent = max(worst, key=lambda w: float(w["behind_ms"]), default=None)
    if sent is not None and float(sent["behind_ms"]) > 0 and sent["behind_ms"] >= unsent.behind_ms:
        return round(float(sent["planned_ts"])), int(sent["send_ts"])
    return unsent.window


def schedule_figures(ledger: DataFrame, history: list[Event]) -> Figures:
    segs, scheduled = segments(history)
    if not segs:
        return {"undecided": dict.fromkeys((*SCHEDULE_METRICS, "schedule_notes"), NO_SCHEDULE)}
    frame, starts = behind_frame(ledger, segs)
    part = send_part(F.col("send_ts"), SendPeriods.of(history), first_ack(ledger))
    worst = F.struct("behind_ms", "planned_ts", "send_ts")  # the most-behind record's
    rows = frame.groupBy(part.alias("part")).agg(
        F.max(worst).alias("w"), F.max("seq").alias("seq"), F.max("send_ts").alias("t")
    )
    by_part = {str(r["part"]): r for r in rows.collect()}
    behind = {p: max(float(r["w"]["behind_ms"]), 0.0) for p, r in by_part.items()}
    last_seq = max((int(r["seq"]) for r in by_part.values()), default=None)
    last_send = max((int(r["t"]) for r in by_part.values()), default=None)
    unsent = tail(segs, starts, last_seq, last_send)
    behind[ALL] = max([unsent.behind_ms, *behind.values()])
    out: Figures = {
        "producer_behind_max_s": round(behind[ALL] / 1000, 3),
        "producer_behind_s": round((late_ms(frame) + unsent.late_ms) / 1000, 3),
        "schedule_notes": notes(behind),
    }
    window = behind_window([r["w"] for r in by_part.values()], unsent)
    if window is not None:
        out["timing_windows"] = {"producer_behind_max_s": [list(window)]}
    if scheduled:
        blocked = sum(
            e["ms"] for e in history if e["kind"] == ev.PRODUCER_BLOCKED and _int(e.get("ms"))
        )
        out["producer_planned"] = segs[0].planned
        out["producer_blocked_s"] = round(blocked / 1000, 3)
        if segs[0].planned is None:
            out["undecided"] = {"producer_planned": "producer.schedule without `planned`"}
    else:
        out["producer_planned"] = out["producer_blocked_s"] = None
        out["undecided"] = dict.fromkeys(("producer_planned", "producer_blocked_s"), OLD_PRODUCER)
    return out


def run(ctx: CellContext) -> Figures:
    data = ctx.data
    if data.ledger is None:
        return {"undecided": dict.fromkeys((*SCHEDULE_METRICS, "schedule_notes"), NO_LEDGER)}
    if not data.has_history:
        why = "history.jsonl missing: the schedule unknown"
        return {"undecided": dict.fromkeys((*SCHEDULE_METRICS, "schedule_notes"), why)}
    return schedule_figures(data.ledger, data.history)


CHECK = Check("schedule", needs=(), decides=(*SCHEDULE_METRICS, "schedule_notes"), run=run)
