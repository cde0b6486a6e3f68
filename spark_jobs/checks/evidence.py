"""evidence: the cell's tables against what its history says was written and read
(spark_jobs.checks_evidence). A review: it reads the other checks' merged figures and
undecides those a disagreeing table feeds."""

from __future__ import annotations

from harness.results.metrics import Figures
from spark_jobs import checks_evidence as ce
from spark_jobs.check import REVIEW, Check
from spark_jobs.context import CellContext


def run(ctx: CellContext) -> Figures:
    return ce.evidence(ctx.cell_dir, ctx.data.history, ctx.summary, ctx.ledger_duplicates)


CHECK = Check(
    "evidence", needs=("summary", "ledger_duplicates"), decides=("evidence",), run=run, lane=REVIEW
)
