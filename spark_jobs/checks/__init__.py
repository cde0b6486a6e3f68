"""The registry: every check of a cell, one line each (spark_jobs.check.Check).

`verify_cell` runs them in this order (a check in a lane of its own alongside, a review
after the others) and merges their figures in this order. Adding a check: a module here
with its `CHECK`, and its line below.
"""

from __future__ import annotations

from spark_jobs.check import Check
from spark_jobs.checks import (
    availability,
    broker_logs,
    broker_metrics,
    consumers,
    evidence,
    forensics,
    latency,
    machine,
    offsets,
    ownership,
    pipeline,
    quorum,
    records,
    schedule,
    share,
    spark_sets,
    stall,
    steps,
    transactions,
    warm_up,
)

CHECKS: tuple[Check, ...] = (
    records.CHECK,
    latency.CHECK,
    schedule.CHECK,  # beside the ack figures: the producer's own schedule slip
    consumers.CHECK,
    transactions.CHECK,
    pipeline.CHECK,
    spark_sets.CHECK,
    share.CHECK,
    availability.CHECK,
    broker_metrics.CHECK,
    quorum.CHECK,  # a dynamic controller quorum's final voters
    warm_up.CHECK,  # whether the workload started warm
    offsets.CHECK,  # lane "offsets"
    stall.CHECK,  # lane "stall"
    broker_logs.CHECK,  # lane "broker_logs"
    steps.CHECK,  # review: each operation step's ack gaps and stalls
    evidence.CHECK,  # review: after the others
    forensics.CHECK,  # review: places the lost records once `lost` stands
    ownership.CHECK,  # review: beside reprocessed_by_generation
    machine.CHECK,  # review: reads the stall windows
)
