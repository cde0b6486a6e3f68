"""The seeded fault schedule of a cell: when each fault fires, for how long, on what.

`random` targets are drawn here, from an RNG seeded with the run seed and the cell id, so
spec + seed fix the schedule; symbolic targets (leader-of, controller, coordinator-of) name
a role and are resolved by the runner when the fault fires.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.faults.kind import FaultKind
from harness.faults.registry import is_operation, spec_of
from harness.spec.expect import format_number
from harness.spec.matrix import Cell
from harness.spec.models import Spec
from harness.spec.problems import cell_view


@dataclass(frozen=True)
class PlannedFault:
    index: int  # position in the spec's faults list
    at_s: float  # seconds after the workload starts
    kind: str  # 'partition' already folded into 'isolate'
    target: str  # by the kind's target style (registry): a node, a topic, "" for none
    duration_s: float | None  # None: healed in the heal phase (restart: instantaneous)
    spec: FaultKind | None = None  # the kind's model from the spec (None: no options given)
    optional: bool = False  # skipped or failed, it does not make the cell unknown
    after_step: str | None = None  # at_s counts from this operation step's start instead

    def given(self) -> dict[str, Any]:
        """The options the spec set, for `validate` and the dry run."""
        return {} if self.spec is None else self.spec.given()

    @property
    def heal_at_s(self) -> float | None:
        return None if self.duration_s is None else self.at_s + self.duration_s

    @property
    def process(self) -> str | None:
        """The client process it acts on (producer, consumer:<set>/<i>); None: the cluster."""
        kind = self.spec if self.spec is not None else spec_of(self.kind)
        return self.target if kind.process_target() is not None else None

    @property
    def is_consumer_fault(self) -> bool:
        """Played on a consumer member (its kind's `plays`)."""
        kind = self.spec if self.spec is not None else spec_of(self.kind)
        return kind.plays == "consumer"


def plan_faults(cell: Cell, seed: int) -> list[PlannedFault]:
    """Faults sorted by start time (spec order breaks ties); deterministic in (seed, cell.id).
    Each kind fixes its own target (FaultKind.plan_target), drawing from one seeded RNG."""
    rng = random.Random(f"{seed}:{cell.id}")
    spec = cell.spec
    view = cell_view(spec)
    planned = [
        PlannedFault(
            i,
            f.at_s,
            f.kind,
            f.plan_target(view, rng),
            f.duration_s,
            f,
            f.optional,
            f.after_step,
        )
        for i, f in enumerate(spec.faults)
    ]
    return sorted(planned, key=lambda p: (p.at_s, p.index))


def describe_schedule(cells: Sequence[Cell], seed: int) -> str:
    """Plain text for `validate` / `--dry-run`: each cell's setup, expectations and faults."""
    lines = [f"seed {seed}; {len(cells)} cell(s)"]
    for cell in cells:
        spec = cell.spec
        lines.append("")
        lines.append(cell.id)
        lines.append(f"  {_setup(spec)}")
        expect = ", ".join(f"{k} {b}" for k, b in spec.expect.items() if b is not None)
        lines.append(f"  expect: {expect or '(nothing: verdict unknown)'}")
        workload_end = spec.producer.planned_duration_s
        faults = plan_faults(cell, seed)
        if not faults:
            lines.append("  faults: none")
        for f in faults:
            span = (
                "instant"
                if is_operation(f.kind)
                else f"for {format_number(f.duration_s)}s"
                if f.duration_s is not None
                else "until heal"
            )
            late = (
                f"  (after the workload ends at {format_number(workload_end)}s)"
                if f.at_s >= workload_end and f.after_step is None
                else ""
            )
            given = ", ".join(f"{k}={v}" for k, v in f.given().items())
            step = f" after step {f.after_step}" if f.after_step is not None else ""
            lines.append(
                f"  t={format_number(f.at_s):>5}s{step}  #{f.index} {f.kind:<14} {f.target or '-':<28} "
                f"{span}{late}"
                + (f"  ({given})" if given else "")
                + ("  optional" if f.optional else "")
            )
    return "\n".join(lines)


def _setup(spec: Spec) -> str:
    c, t, p = spec.cluster, spec.topic, spec.producer
    controllers = f" + {c.controllers} controllers" if c.controllers else ""
    stop = []
    if p.records is not None:
        stop.append(f"{p.records} records")
    if p.duration_s is not None:
        stop.append(f"{format_number(p.duration_s)}s")
    sets = ", ".join(
        f"{name}({c.members})" if c.kind == "group" else name for name, c in spec.consumer_sets()
    )
    if spec.pipeline is not None:
        q = spec.pipeline
        sets += f"; pipeline({q.members}) {q.guarantee} -> {q.output}"
    return (
        f"{c.mode} {c.version}, {c.brokers} brokers{controllers}; topic {t.name} "
        f"{t.partitions}x RF{t.replication_factor}; acks={p.acks} "
        f"idempotence={'on' if p.idempotence else 'off'} {format_number(p.rate)}/s "
        f"for {' or '.join(stop)}; consumers {sets}"
    )
