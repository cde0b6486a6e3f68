"""Seeded fault schedules for one cell, drawn from its `explore:` section.

Trial n of seed S draws from `random.Random("explore:S:n")`: the same seed gives the same
schedules, and trial n does not depend on how many trials came before. A schedule holds one
to max_faults entries of the spec's ordinary `faults:` (a role of several brokers is several
entries), only (kind, role) pairs the cell supports (harness.spec.explore_rules), starting
inside the quiet periods, each next one a gap after the last; every prefix passes the
spec's own rules, so a trial is an ordinary cell.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from harness.errors import ConfigError
from harness.explore.coverage import phase_of
from harness.faults.cell_view import CellView
from harness.faults.registry import is_operation
from harness.spec import Spec, SpecError
from harness.spec.explore import Role
from harness.spec.explore_roles import CONTROLLER, LEADER_OF, Entry, role_entries
from harness.spec.explore_rules import drawable_pairs, fault_window, on_written_faults, section
from harness.spec.models import parse_fault
from harness.spec.problems import cell_view, spec_problems

MAX_TRIES = 8  # draws of one slot whose fault breaks a rule with the others before giving up


@dataclass(frozen=True)
class Drawn:
    """One drawn fault: its kind on a role at a time, as the entries that play it."""

    kind: str
    role: Role
    phase: str  # of the workload: early, middle, late (harness.explore.coverage)
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Schedule:
    trial: int
    drawn: tuple[Drawn, ...]

    @property
    def faults(self) -> list[Entry]:
        """The spec's `faults:` of this trial."""
        return [dict(e) for d in self.drawn for e in d.entries]

    def tried(self) -> list[tuple[str, str, str]]:
        """(kind, role, phase) of each drawn fault, for the coverage table."""
        return [(d.kind, d.role, d.phase) for d in self.drawn]


def with_faults(spec: Spec, faults: list[Entry]) -> Spec:
    """The cell's spec with these `faults:` (parsed as the spec parses them, not checked),
    without the expectations bound to its written faults (`'>= 0.55 * faults.1.duration_s'`:
    a drawn schedule has other faults, or fewer)."""
    expect = {k: v for k, v in spec.expect.items() if not on_written_faults(v)}
    return spec.model_copy(update={"faults": [parse_fault(f) for f in faults], "expect": expect})


def schedule_problems(spec: Spec, faults: list[Entry]) -> list[str]:
    """The spec's own problems with these faults (`key: why`); [] for a runnable cell."""
    try:
        trial = with_faults(spec, faults)
    except ValueError as exc:  # pydantic's ValidationError is one
        return [str(exc)]
    return [f"{key}: {why}" for key, why in spec_problems(trial)]


Pair = tuple[str, Role]
# Picks the (kind, role) of the next slot among those that fit, knowing the schedule's faults
# so far (harness.explore.guide's least-tried choice; by default a uniform one).
Choose = Callable[[list[Pair], "list[Drawn]", random.Random], Pair]


def uniform(fits: list[Pair], drawn: list[Drawn], rng: random.Random) -> Pair:
    return rng.choice(fits)


@dataclass(frozen=True)
class Drawer:
    """What one cell's draws need, worked out once: its base spec (no faults), its view,
    the pairs it supports and how many entries each makes."""

    spec: Spec
    base: Spec
    cell: CellView
    pairs: list[Pair]
    sizes: dict[Pair, int]

    @classmethod
    def of(cls, spec: Spec) -> Drawer:
        if spec.matrix is not None:
            raise ConfigError("explore draws for one cell: expand the spec's matrix first")
        base = with_faults(spec, [])
        cell = cell_view(base)
        pairs = drawable_pairs(base, cell)
        if not pairs:
            raise SpecError([f"{spec.name}: explore: nothing to draw in this cluster"])
        sizes = {p: len(role_entries(p[0], p[1], cell, None)) for p in pairs}
        return cls(spec, base, cell, pairs, sizes)

    def one(
        self,
        rng: random.Random,
        at: float,
        drawn: list[Drawn],
        choose: Choose = uniform,
        duration: float | None = None,
        pairs: list[Pair] | None = None,
    ) -> Drawn | None:
        """One more fault at `at` that fits beside `drawn` (max_faults, the spec's rules, no
        overlap that would leave it nothing to do); None after MAX_TRIES draws that did not.
        `duration`: this one (else drawn); `pairs`: only these (else every supported one)."""
        ex = section(self.spec)
        used = sum(len(d.entries) for d in drawn)
        fits = [p for p in pairs or self.pairs if used + self.sizes[p] <= ex.max_faults]
        for _ in range(MAX_TRIES):
            if not fits:
                return None
            kind, role = choose(fits, drawn, rng)
            fits = [p for p in fits if p != (kind, role)]  # a retry tries another pair
            length = duration if duration is not None else _round(rng.uniform(*ex.duration_s))
            length_or_none = None if is_operation(kind) else length
            made = role_entries(kind, role, self.cell, rng)
            entries = tuple(_entry(at, length_or_none, e) for e in made)
            one = Drawn(kind, role, phase_of(at, self.spec.producer.planned_duration_s), entries)
            if self.fits([*drawn, one]):
                return one
        return None

    def fits(self, drawn: list[Drawn]) -> bool:
        """Whether these faults make a runnable cell (the spec's rules, no dead overlap)."""
        faults = [e for d in drawn for e in d.entries]
        nodes = len(self.cell.brokers) + len(self.cell.controllers)
        return (
            not _overlaps(faults)
            and not _cut_with_no_peer_up(faults, nodes)
            and not schedule_problems(self.base, faults)
        )


def draw(spec: Spec, seed: int, trial: int, choose: Choose = uniform) -> Schedule:
    """Trial `trial`'s schedule for this cell's spec (a matrix cell's: no `matrix:`)."""
    return fresh(Drawer.of(spec), random.Random(f"explore:{seed}:{trial}"), trial, choose)


def fresh(drawer: Drawer, rng: random.Random, trial: int, choose: Choose = uniform) -> Schedule:
    """A schedule drawn from nothing: 1..max_faults faults, the first inside the quiet
    periods, each next one a gap after the last."""
    ex = section(drawer.spec)
    start, end = fault_window(drawer.spec)
    wanted = rng.randint(1, ex.max_faults)
    at = _round(rng.uniform(start, min(end, start + ex.gap_s[1])))
    drawn: list[Drawn] = []
    while len(drawn) < wanted and at <= end:
        one = drawer.one(rng, at, drawn, choose)
        if one is None:
            break  # MAX_TRIES draws for this slot broke a rule: the schedule ends here
        drawn.append(one)
        at = _round(at + rng.uniform(*ex.gap_s))
    return Schedule(trial, tuple(drawn))


def schedules(spec: Spec, seed: int, first: int = 0) -> Iterator[Schedule]:
    """Trials first, first + 1, ... (endless; take what the budget allows)."""
    trial = first
    while True:
        yield draw(spec, seed, trial)
        trial += 1


SYMBOLIC = (CONTROLLER, LEADER_OF)  # targets resolved when the fault fires
# Kinds that leave their node down until they heal: a broker whose every log directory is full
# shuts itself down (Kafka's own doing: seen, a reset of it then found it not running).
DOWN = ("kill", "stop", "power-loss", "disk-full")
SITE = "all"  # every Kafka node: may be any node
ENDED_BY_DOWN = ("pause", "isolate")  # a kill of a paused or isolated node still plays


def _overlaps(faults: list[Entry]) -> bool:
    """Two faults whose windows overlap on what may be one node (the same target, or either
    target resolved only when it fires: `controller`, `leader-of:`), where the later one
    would find nothing to do and turn the trial `unknown`: the same kind (a pause of the
    leader, broker 2, then of broker 2: "already paused"), or any fault on a node a kill,
    stop or full disk holds down (a pause of a killed broker, a reset of a broker Kafka shut
    down when its disk filled: "not running"), or a kill, stop, full disk or power cut
    of a node under any other fault but a pause or an isolation (a clock skew's heal cannot
    exec into a killed node). All seen in explore runs. A kill of a paused or isolated node
    still plays (it ends the pause: harness.faults.pause).
    """
    held: list[tuple[str, str, float, float]] = []
    for f in sorted(faults, key=lambda f: float(f["at_s"])):
        start = float(f["at_s"])
        end = start + float(f.get("duration_s") or 0.0)
        target, kind = str(f["target"]), str(f["kind"])
        for t, k, s, e in held:
            if not (start <= e and s <= end):
                continue
            if t == target:
                return True
            maybe_same = (
                t.startswith(SYMBOLIC) or target.startswith(SYMBOLIC) or SITE in (t, target)
            )
            down_first = k in DOWN or (kind in DOWN and s == start)  # at once: either order
            # ... or a node taken down under a fault that must undo itself on it (a clock
            # skew's heal execs into the container: "409 Conflict" once it is killed).
            down_under = kind in DOWN and k not in ENDED_BY_DOWN
            if maybe_same and (k == kind or down_first or down_under):
                return True
        held.append((target, kind, start, end))
    return False


# Kinds that cut nodes off their peers with iptables rules in the nodes still running.
CUTS = ("isolate", "split", "cut-replication", "cut-quorum", "cut-zookeeper")


def _cut_with_no_peer_up(faults: list[Entry], nodes: int) -> bool:
    """A cut that starts while every node but its target is held down (kill, stop, power
    cut or full disk of each, or of `all`): no running peer to install its rules in, and the
    trial is `unknown` (seen twice: a stop of brokers 1 and 3, then an isolation of broker 2).
    A target resolved when it fires counts as one node down."""
    for cut in faults:
        if cut["kind"] not in CUTS:
            continue
        at = float(cut["at_s"])
        down: set[str] = set()
        for f in faults:
            start = float(f["at_s"])
            if f["kind"] in DOWN and start <= at <= start + float(f.get("duration_s") or 0.0):
                if f["target"] == SITE:
                    return True
                down.add(str(f["target"]))
        others = down - {str(cut["target"])}
        if others and len(others) >= nodes - 1:
            return True
    return False


def _entry(at_s: float, duration_s: float | None, entry: Entry) -> Entry:
    """at_s, kind, target, duration_s, then the options: the order a spec writes them."""
    out: dict[str, Any] = {"at_s": at_s, "kind": entry["kind"], "target": entry["target"]}
    if duration_s is not None:
        out["duration_s"] = duration_s
    out.update({k: v for k, v in entry.items() if k not in out})
    return out


def _round(seconds: float) -> float:
    return round(seconds, 1)
