"""JVM options for the tests' short-lived Spark drivers (the `spark` fixture, `harness verify`
in a subprocess): their checks run on a few rows each, so the JIT's optimizing compiler (C2)
compiles far more than it ever pays back. C1 only (TieredStopAtLevel=1) took the CPU of a
small cell's verify from ~5 s to ~4 s warm and from ~26 s to ~11 s for the first one, the JVM
start from ~5 s to ~3 s; the code cache then needs more room than C1's default 48 MB (Spark
generates a class per query stage), else the JVM stops compiling. Passed through
SPARK_SUBMIT_OPTS, which spark-submit puts on the driver's command line: the product's own
JVM options (spark_jobs.session) stay as they are; they choose the same for small cells."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from spark_jobs.session import SMALL_CELLS_JVM

SUBMIT_OPTS = "SPARK_SUBMIT_OPTS"
# The product's own choice for small cells' checks, for every test driver.
TEST_JVM_OPTIONS = SMALL_CELLS_JVM


def with_test_jvm(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with the test JVM options added to SPARK_SUBMIT_OPTS (for a subprocess)."""
    given = env.get(SUBMIT_OPTS, "")
    return {**env, SUBMIT_OPTS: f"{given} {TEST_JVM_OPTIONS}".strip()}


@contextmanager
def short_lived_jvm() -> Iterator[None]:
    """While a driver JVM is started in this process: the test JVM options set."""
    given = os.environ.get(SUBMIT_OPTS)
    os.environ[SUBMIT_OPTS] = with_test_jvm(os.environ)[SUBMIT_OPTS]
    try:
        yield
    finally:
        if given is None:
            os.environ.pop(SUBMIT_OPTS, None)
        else:
            os.environ[SUBMIT_OPTS] = given
