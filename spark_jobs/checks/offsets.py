"""inconsistent_offsets, poll_skip, nonmonotonic_send (spark_jobs.checks_offsets). Needs
nothing the other checks share: it runs in a lane of its own."""

from __future__ import annotations

from harness.results.metrics import Figures
from spark_jobs import checks_offsets as co
from spark_jobs.check import Check, combine, lower_bound
from spark_jobs.context import NO_CONSUMED, NO_LEDGER, CellContext


def run(ctx: CellContext) -> Figures:
    data = ctx.data
    ledger, consumed, log = data.ledger, data.consumed, data.log
    counts: dict[str, int | None] = {}
    undecided: dict[str, str] = {}
    parts: list[Figures] = [{"counts": counts, "undecided": undecided}]
    if ledger is None:
        undecided["nonmonotonic_send"] = NO_LEDGER
    else:
        counts["nonmonotonic_send"] = co.nonmonotonic_send(ledger)

    gaps = [] if ctx.log_reason is None else [ctx.log_reason]
    gaps += [
        f"{name}.parquet missing"
        for name, df in (("ledger", ledger), ("consumed", consumed))
        if df is None
    ]
    if ledger is None and consumed is None and log is None:
        undecided["inconsistent_offsets"] = "; ".join(gaps)
    else:
        found, sample = co.inconsistent_offsets(ledger, consumed, log)
        parts.append({"inconsistent_offsets_sample": sample})
        parts.append(lower_bound("inconsistent_offsets", found, gaps))

    if consumed is None:
        undecided["poll_skip"] = NO_CONSUMED
    elif ctx.log_reason is not None or log is None:
        undecided["poll_skip"] = str(ctx.log_reason)
    else:
        skipped, by_set = co.poll_skip(consumed, log, ctx.read_committed, ctx.sets)
        counts["poll_skip"] = skipped
        parts.append({"poll_skip_by_set": by_set})
    return combine(*parts)


CHECK = Check(
    "offsets",
    needs=("log_reason", "read_committed", "sets"),
    decides=(
        "nonmonotonic_send",
        "inconsistent_offsets",
        "poll_skip",
        "inconsistent_offsets_sample",
        "poll_skip_by_set",
    ),
    run=run,
    lane="offsets",
)
