"""How long a cell is planned to take: a simple sum, calibrated on measured runs.

estimate = cluster start + steady state + workload + settle (+ each Spark query's start)

Calibrated on `make chaos-run` of 2026-11-27, third round (8 cells of 75 s workload, 12 min
27 s, load 0.6-6.6, alone), from each cell's `timings` (medians):
* cluster start: 3 brokers ready, 6.3 s (JVM flags tuned for two cores and the images' CDS
  archive; 4.8-6.9 s); 6 s.
* steady state: the topic and `__consumer_offsets` side by side, every member assigned;
  1.3-2.5 s; 2 s.
* workload: the producer's planned duration (`records / rate` or `duration_s`), or the end of
  the last fault window (`at_s + duration_s`; an operation or a fault without a duration: its
  `at_s`), whichever is later — the phase lasts until both are over (it overran by ~1 s).
* settle: heal, recovery, drain and collect (1.1 of it; drain 0.2-6.8 as the group needs),
  and the wait for the previous cell's collect-behind and checks, which run while this
  cell's cluster starts and settles (`checks_wait`, 3.7 s: they took 9-17 s); 8 s.
* a Spark consumer set: its query's first batch, 15 s (10-20 s on two busy cores).

Per experiment (not per cell), EXPERIMENT_S: the run's own work around its cells (the last
cell's checks, the summaries and reports); the checks' Spark session starts once per suite,
behind the first cluster. The plan's floor is the workload itself: the nightly's 141 cells
schedule 2 h 22 min of it.

Recovery and drain that run into their timeouts (`recovery.timeout_s`,
`recovery.drain_timeout_s`) take longer than planned: the estimate is what a healthy run
takes, not a bound.
"""

from __future__ import annotations

from harness.spec import Spec

CLUSTER_START_S = 6.0
STEADY_STATE_S = 2.0
SETTLE_S = 8.0
SPARK_START_S = 15.0
EXPERIMENT_S = 20.0


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
