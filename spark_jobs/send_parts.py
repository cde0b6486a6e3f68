"""The part of the run a record was sent in: what the ack latency splits by and the
producer's schedule slip is noted for (spark_jobs.checks.latency, .schedule).

`faulted`: sent while a fault window was open (fault.inject up to the fault.heal of the same
fault_id, harness.results.windows; never healed: to the end); else `recovering`: sent after
a heal until the cluster had recovered (harness.results.recovery); else `start`: sent
before the run's first ack (the producer's own start-up); else `steady`. Consumer crashes
are not faults of the producer's path and count in none.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from harness.results.events import Event
from harness.results.recovery import Period, recovering_periods
from harness.results.windows import fault_windows

ALL, FAULTED, RECOVERING, STEADY, START = "all", "faulted", "recovering", "steady", "start"
PARTS = (ALL, FAULTED, RECOVERING, STEADY, START)


@dataclass(frozen=True)
class SendPeriods:
    """The periods a send is classified by, in time order."""

    faulted: list[Period]
    recovering: list[Period]

    @classmethod
    def of(cls, history: list[Event]) -> SendPeriods:
        faulted = [(w.start_ms, w.end_ms) for w in fault_windows(history) if not w.consumer_crash]
        return cls(faulted, recovering_periods(history))


def sent_during(send_ts: Column, periods: list[Period]) -> Column:
    """Whether send_ts falls in any [start, end) period."""
    inside = F.lit(False)
    for start, end in periods:
        after = send_ts >= F.lit(start)
        inside = inside | (after if end is None else after & (send_ts < F.lit(end)))
    return inside


def first_ack(ledger: DataFrame) -> int | None:
    """The run's first ack_ts of an `ok` record (None: none)."""
    row = ledger.filter(F.col("status") == "ok").agg(F.min("ack_ts")).first()
    return None if row is None or row[0] is None else int(row[0])


def send_part(send_ts: Column, periods: SendPeriods, first: int | None) -> Column:
    """The part (FAULTED, RECOVERING, START, STEADY) of a record sent at send_ts; `first`
    is the run's first ack (None: no record is `start`)."""
    started = F.lit(True) if first is None else send_ts >= F.lit(first)
    return (
        F.when(sent_during(send_ts, periods.faulted), FAULTED)
        .when(sent_during(send_ts, periods.recovering), RECOVERING)
        .when(~started, START)
        .otherwise(STEADY)
    )
