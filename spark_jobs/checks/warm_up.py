"""warm_up: whether the workload started warm (harness.workload.warm_up), from the history.

The summary's `warm_up` is the `warm_up.end` event's facts: settled (the ack p99 of two
consecutive quiet 1-s windows agreed), seconds (the phase's, beside the previous cell's
checks included), beside_checks_s (of those, spent while they ran), window_p99_ms (each
counted window's p99), records (acked), error (when its clients or topic failed). A warm-up
that did not settle is said, not judged: the workload started anyway, and its timing figures
meet the overload rule like any other (the machine check). A cell without the event (run
cold: `warm_up.max_s: 0`, or from before the warm-up) has no `warm_up`.
"""

from __future__ import annotations

from harness.results import events as ev
from harness.results.metrics import Figures
from spark_jobs import history_facts as hf
from spark_jobs.check import Check
from spark_jobs.context import CellContext

FIELDS = ("settled", "seconds", "beside_checks_s", "window_p99_ms", "records", "error")


def run(ctx: CellContext) -> Figures:
    ends = hf.events(ctx.data.history, ev.WARM_UP_END)
    if not ends:
        return {}
    last = ends[-1]
    return {"warm_up": {k: last[k] for k in FIELDS if k in last}}


CHECK = Check("warm_up", needs=(), decides=("warm_up",), run=run)
