"""Arguments and options more than one verb takes: the spec file, the seed's bound and the
Spark master the checks run on."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli.terminal import EXIT_USAGE, fail

SEED_MAX = 2**63 - 1  # harness.spec.models.MAX_SEED (not imported: the CLI loads lazily)
SpecArg = Annotated[Path, typer.Argument(help="Experiment file or suite file (YAML).")]
SparkMasterOpt = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        help="Spark master URL the checks run on (e.g. spark://host:7077), or a Spark Connect "
        "server (sc://host:15002); default $KAFKA_CHAOS_SPARK_MASTER, else local[2]. Its "
        "executors must reach the result folder by the same path.",
    ),
]


def use_spark_master(url: str | None) -> None:
    """The checks' session reads the master from the environment (spark_jobs.session), so a
    suite's every experiment and the one session of the run use it."""
    if url is None:
        return
    if not (url.startswith("local") or url == "yarn" or "://" in url):
        raise fail(
            EXIT_USAGE,
            f"--spark-master {url!r}: expected local[N], a URL like spark://host:7077 "
            "or a Spark Connect address like sc://host:15002",
        )
    import os

    from spark_jobs.session import MASTER_ENV

    os.environ[MASTER_ENV] = url
