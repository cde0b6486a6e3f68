"""A check as a value: its name, what it needs, the figures it decides, and `run(ctx)`.

A check reads the cell through its context (spark_jobs.context.CellContext: the files, the
history's facts and the shared frames, each built once) and returns the figures it decides:
a part of the cell's summary (harness.results.metrics.Figures), never writing another
check's. `verify_cell` composes the registered checks (spark_jobs.checks.CHECKS) and merges
their parts in the table's order. A check that raises decides nothing: its figures are
undecided naming the error, the cell's `failed_checks` names it (its verdict is `unknown`),
and every other check is still run (Jepsen's checker `check-safe` and `compose`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.results.metrics import COUNT_NAMES, Figures

if TYPE_CHECKING:
    from spark_jobs.context import CellContext

# Where the composer runs a check (`Check.lane`): MAIN in the caller's thread, in the table's
# order; REVIEW after every other check, reading their merged figures (`ctx.summary`); any
# other name in a thread of its own, started first (its Spark jobs fill the cores the main
# checks' narrow stages leave idle), merged after the main ones.
MAIN = "main"
REVIEW = "review"


@dataclass(frozen=True)
class Check:
    name: str
    # The context's shared facts it reads (CellContext attribute names): documentation of
    # the dependency, checked against the context by the registry's test.
    needs: tuple[str, ...]
    # The figures it decides: counts (COUNT_NAMES) or summary keys; all undecided if it raises.
    decides: tuple[str, ...]
    run: Callable[[CellContext], Figures]
    lane: str = MAIN


def failed(check: Check, error: BaseException) -> Figures:
    """The figures of a check that raised: each one it decides undecided, naming the error."""
    reason = f"the {check.name} check failed: {type(error).__name__}: {error}"
    return {
        "counts": {n: None for n in check.decides if n in COUNT_NAMES},
        "undecided": dict.fromkeys(check.decides, reason),
        "failed_checks": {check.name: f"{type(error).__name__}: {error}"},
    }


# Summary keys any check may add to, by figure: the bookkeeping about figures.
BY_KEY = ("counts", "undecided", "failed_checks", "timing_windows")


def merge(summary: Figures, part: Figures) -> None:
    """Merge one check's figures into the summary: the BY_KEY sections (`counts`,
    `undecided`, ...) by key, a list onto the list already there (two checks add
    resumptions), anything else (a value, None, a per-set dict) in place of what was there."""
    for key, value in part.items():
        old = summary.get(key)
        if isinstance(value, dict) and key in BY_KEY:
            merged = dict(old) if isinstance(old, dict) else {}
            merged.update(value)
            summary[key] = merged  # type: ignore[literal-required]
        elif isinstance(value, list) and isinstance(old, list):
            summary[key] = [*old, *value]  # type: ignore[literal-required]
        else:
            summary[key] = value  # type: ignore[literal-required]


def lower_bound(name: str, value: int, gaps: list[str]) -> Figures:
    """A count over the readers at hand: decided when none is missing; otherwise a positive
    count stands as a lower bound (noted in `undecided`) and a zero is undecided."""
    if not gaps:
        return {"counts": {name: value}}
    reason = "; ".join(gaps)
    if value > 0:
        return {"counts": {name: value}, "undecided": {name: f"a lower bound ({reason})"}}
    return {"undecided": {name: reason}}


def combine(*parts: Figures) -> Figures:
    """One check's figures from its parts (merged in order)."""
    out: Figures = {}
    for part in parts:
        merge(out, part)
    return out
