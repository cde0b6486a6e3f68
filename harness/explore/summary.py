"""The explore run's own `summary.json`: its trials, its violations (each with the original
schedule and the shrunk one: `shrunk: {faults, reproduced: "k/n", file}`) and its coverage
(kind x target role x workload phase tried). Typed, so the file a later reader (the index
page, the nightly) takes is the one this writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

EXPLORE_SUMMARY = "summary.json"
SHRINK_LOG = "shrink-log.json"  # beside each violation's minimal-repro.yaml


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TrialRecord(_Model):
    trial: int
    cell: str
    faults: list[dict[str, Any]]
    verdict: str  # the trial cell's verdict: pass / fail / unknown
    violated: list[str] = []  # the `expect:` keys it failed
    folder: str | None = None  # its run folder (None: it did not run)
    error: str | None = None
    reached: list[str] = []  # the "sometimes" states its cell folder shows (explore.states)
    new_states: list[str] = []  # of which no trial of its cell had reached before
    injected: int | None = None  # faults its history shows injected (None: not read)
    origin: str = "fresh"  # drawn afresh, or "<mutation> of trial <n>" (harness.explore.guide)
    cells_spent: int | None = None  # the budget's cells spent once it ran (shrinks included)

    @property
    def counted(self) -> bool:
        """A trial counts when it injected a fault (or its history was not read): one that
        had faults and injected none tested nothing."""
        return not (self.faults and self.injected == 0)


class ShrunkRecord(_Model):
    faults: list[dict[str, Any]]
    reproduced: str  # "k/n": how many of the shrunk schedule's own runs violated it
    file: str | None  # its minimal-repro.yaml (None: not confirmed, nothing written)
    stopped: str  # "fixed point" or "budget"
    log: str  # its shrink log (each step: schedule, verdicts, kept or not)


class ViolationRecord(_Model):
    property: str
    trial: int
    cell: str
    original: list[dict[str, Any]]
    shrunk: ShrunkRecord | None = None  # None: the budget ended before shrinking began
    seen_again: list[int] = []  # later trials that violated the same property


class CoverageRow(_Model):
    kind: str
    role: str
    phase: str
    trials: int


class CurvePoint(_Model):
    trial: int
    cells_spent: int | None  # the budget spent by then (trials and shrinks)
    states: int  # distinct states reached by the counted trials up to this one


class ExploreSummary(_Model):
    spec: str
    file: str
    seed: int
    started: str
    k: int  # runs of each shrink candidate
    need: int  # of which must violate for it to be kept
    budget: dict[str, Any]
    trials: list[TrialRecord] = []
    # Violations whose shrunk schedule reproduced (`shrunk.reproduced` k/n, need of k) ...
    violations: list[ViolationRecord] = []
    # ... and those whose shrink was not confirmed or never ran (budget): seen once, not shown.
    unconfirmed: list[ViolationRecord] = []
    coverage: list[CoverageRow] = []
    # "sometimes" states (harness.explore.states.STATES: ISR at min.insync.replicas, a
    # leaderless partition...): each with the first trial that reached it, None: never.
    reached: dict[str, int | None] = {}
    # The coverage curve: after each counted trial, the distinct states reached so far.
    curve: list[CurvePoint] = []
    interrupted: bool = False  # Ctrl-C ended it: what it found so far

    @property
    def verdict(self) -> str:
        """fail with a confirmed violation; unknown with an unconfirmed one or when
        interrupted; pass when every counted trial passed (and there was one); else unknown."""
        if self.violations:
            return "fail"
        counted = [t for t in self.trials if t.counted]
        if self.unconfirmed or not counted or self.interrupted:
            return "unknown"
        return "pass" if all(t.verdict == "pass" for t in counted) else "unknown"


def coverage_curve(trials: list[TrialRecord]) -> list[CurvePoint]:
    """States reached against trials (Antithesis' coverage over time), counted trials only."""
    seen: set[str] = set()
    out: list[CurvePoint] = []
    for t in trials:
        if not t.counted:
            continue
        seen |= set(t.reached)
        out.append(CurvePoint(trial=t.trial, cells_spent=t.cells_spent, states=len(seen)))
    return out


def write_summary(folder: Path, summary: ExploreSummary) -> Path:
    path = folder / EXPLORE_SUMMARY
    doc = {"verdict": summary.verdict, **summary.model_dump(mode="json")}
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path


def read_summary(path: Path) -> ExploreSummary:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc.pop("verdict", None)
    return ExploreSummary.model_validate(doc)
