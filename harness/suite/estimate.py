"""How long a cell is planned to take: a simple sum, calibrated on measured runs.

estimate = cluster start + steady state + workload + settle (+ each Spark query's start)

* cluster start: 3 brokers ready took 5.3-9.0 s (docs/benchmarks.md: medians by mode and
  version); 8 s.
* steady state: the topic, `__consumer_offsets`, every member assigned; 10 s.
* workload: the producer's planned duration (`records / rate` or `duration_s`), or the end of
  the last fault window (`at_s + duration_s`; an operation or a fault without a duration: its
  `at_s`), whichever is later — the phase lasts until both are over.
* settle: heal, recovery, drain, collect and the Spark checks of a small cell; 25 s.
* a Spark consumer set: its query's first batch, 15 s (10-20 s on two busy cores).

Per experiment (not per cell), EXPERIMENT_S: the run's own work around its cells — the Spark
session of the checks, the run's summaries and reports. Measured in the nightly's shard 2/4
(2026-11-23, two cores, alone): an experiment's run took 46-115 s longer than its cells.

Calibration: the default matrix (8 cells of 75 s workload) estimates 8 x 118 s = 15.7 min;
it took 15 min 18 s standalone (2026-11-22). Recovery and drain that run into their timeouts
(`recovery.timeout_s`, `recovery.drain_timeout_s`) take longer than planned: the estimate is
what a healthy run takes, not a bound.
"""

from __future__ import annotations

from harness.spec import Spec

CLUSTER_START_S = 8.0
STEADY_STATE_S = 10.0
SETTLE_S = 25.0
SPARK_START_S = 15.0
EXPERIMENT_S = 60.0


def workload_s(spec: Spec) -> float:
    """The workload phase: until the producer is done and every planned fault window is over."""
    return spec.planned_workload_s


def estimate_experiment_s(cells_s: list[float]) -> float:
    """Planned wall time of one experiment's run: its cells, plus its own work if it has any."""
    return sum(cells_s) + EXPERIMENT_S if cells_s else 0.0


def estimate_cell_s(spec: Spec) -> float:
    """Planned wall time of one cell of this (cell) spec, in seconds."""
    spark = sum(1 for _, c in spec.consumer_sets() if c.kind == "spark")
    return CLUSTER_START_S + STEADY_STATE_S + workload_s(spec) + SETTLE_S + spark * SPARK_START_S
