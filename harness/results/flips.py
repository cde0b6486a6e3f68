"""Flips confirmed by a re-run (`run SUITE --confirm-flips N`): which verdict changes ask for
one, what the re-runs make of it, and how a flaky cell counts in a suite's verdict.

A **flip** is a cell's verdict against its verdict in the previous run of its suite
(history.parquet) that moved into `fail` (pass → fail, unknown → fail) or out of it into
`pass` (fail → pass). A move into `unknown` is none: `unknown` already says "not decided",
and a re-run could not make it a reason to alarm or not. A flipped cell is run again with
the same seed, up to N times (stopping once a re-run contradicts it); the flip is then

* `confirmed`: every re-run repeated the new verdict — it stands;
* `flaky`: a re-run gave the other decided verdict (pass and fail on one seed) — a status of
  the cell in its suite, not a verdict: the cell's verdict is kept, but the suite counts it
  apart and it does not fail the suite;
* `unconfirmed`: a re-run was `unknown` and none contradicted it — it stands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from harness.results.verdicts import Verdict, as_verdict

CONFIRM_FLIPS = 1  # re-runs of a flipped cell by default (`--confirm-flips`)
Confirmation = Literal["confirmed", "flaky", "unconfirmed"]
CONFIRMED: Confirmation = "confirmed"
FLAKY: Confirmation = "flaky"
UNCONFIRMED: Confirmation = "unconfirmed"
_OTHER = {"pass": "fail", "fail": "pass"}


def is_flip(previous: str | None, verdict: str) -> bool:
    """Whether a move from `previous` (None: the cell is new) to `verdict` asks for a re-run."""
    if previous is None or previous == verdict:
        return False
    return verdict == "fail" or (previous == "fail" and verdict == "pass")


def contradicts(verdict: str, rerun: str) -> bool:
    """A re-run that gave the other decided verdict on the same seed."""
    return _OTHER.get(verdict) == rerun


def confirmation(verdict: str, reruns: Sequence[str]) -> Confirmation:
    """What the re-runs' verdicts make of a flip to `verdict`."""
    if any(contradicts(verdict, r) for r in reruns):
        return FLAKY
    if reruns and all(r == verdict for r in reruns):
        return CONFIRMED
    return UNCONFIRMED


def flaky_cells(experiments: Iterable[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """(experiment, cell) of every flaky cell of a suite summary's experiment records."""
    return {
        (str(e.get("experiment")), str(c.get("cell")))
        for e in experiments
        for c in e.get("confirmations") or []
        if isinstance(c, Mapping) and c.get("status") == FLAKY
    }


def counted(verdict: object, status: object) -> Verdict:
    """A cell's verdict as its suite counts it: a flaky cell fails nothing (it counts as a
    pass in the suite's worst verdict, and is listed apart)."""
    return "pass" if status == FLAKY else as_verdict(verdict)
