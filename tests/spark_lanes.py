"""A check lane stopped while it runs many small Spark jobs: shared by the classic session's
test (tests/unit/test_verify.py) and Spark Connect's (tests/experiments/test_spark_cluster.py)."""

from __future__ import annotations

import threading
from typing import Any

JOBS = 1000  # bounded: ~1000 small jobs if nothing cancelled them


def stop_a_busy_lane(spark: Any) -> tuple[list[int], list[str]]:
    """Start a lane of JOBS jobs, stop it once the first has started: the jobs done and the
    errors the lane's function caught (the cancellation)."""
    from spark_jobs.verify import _Lane

    done: list[int] = []
    errors: list[str] = []
    started = threading.Event()

    def many_jobs() -> None:
        try:
            for i in range(JOBS):
                started.set()
                spark.range(0, 2_000_000, numPartitions=2).selectExpr("sum(id)").collect()
                done.append(i)
        except Exception as exc:  # the cancellation: the outcome the callers assert
            errors.append(str(exc))

    lane = _Lane(spark, "test")
    lane.start(many_jobs)
    started.wait()
    lane.stop()
    return done, errors
