"""The summary's `broker` section: Kafka's own view of the cell from metrics.parquet
(spark_jobs.checks_broker). Undecided figures are under `undecided` as `broker.<figure>`."""

from __future__ import annotations

from harness.results.layout import CellPaths
from harness.results.metrics import BROKER_FIGURES, BROKER_PREFIX, Figures
from spark_jobs import checks_broker as cb
from spark_jobs.check import Check
from spark_jobs.context import CellContext

DECIDES = tuple(BROKER_PREFIX + name for name in BROKER_FIGURES)


def run(ctx: CellContext) -> Figures:
    history = ctx.data.history
    frame = cb.read_metrics(CellPaths(ctx.cell_dir).metrics)
    if frame is None:
        reason = (
            "metrics.parquet missing (the scraper wrote none)"
            if cb.ran_with_metrics(history)
            else "metrics.parquet missing: the cell ran without metrics "
            "(cluster.metrics false, or a folder from before them)"
        )
        figures, undecided = cb.all_undecided(reason)
    else:
        version = next(
            (str(e.get("version")) for e in history if e.get("kind") == "cluster.start"), ""
        )
        figures, undecided = cb.broker_figures(frame, history, version)
    return {
        "broker": figures,
        "undecided": {BROKER_PREFIX + k: v for k, v in undecided.items()},
    }


CHECK = Check("broker_metrics", needs=(), decides=("broker", *DECIDES), run=run)
