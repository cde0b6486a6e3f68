"""Plan a suite: each experiment file with the suite's axes added, impossible cells left out.

How a suite axis meets an experiment (per experiment, per axis):

* the experiment has no say about the key: the axis is **added** to its matrix, after the
  experiment's own axes (so the suite's values vary fastest and a cell's id ends with them,
  e.g. `03_acks=1_version=4.3.1`); an experiment without a matrix gets one;
* the experiment's matrix already has that axis: its own values are **kept** (it chose them);
* the experiment's file sets that key (`cluster: {mode: zookeeper}`): its value is **kept**,
  the axis is not added — the experiment is written for that value (an incident pinned to
  ZooKeeper mode stays in ZooKeeper mode).

An axis the suite names in `replace:` **replaces** the experiment's own axis of that key
instead (the weekly suite's `cluster.version: listed` over consumer-offsets-rf1's own two
versions): the axis keeps its place among the experiment's own, and its `matrix.exclude` and
`matrix.expect` entries whose `when` names a value of that axis the suite's lacks are dropped
(they matched no cell any more). A value the file sets is kept all the same.

A cell that cannot exist with the added values (ZooKeeper mode on Kafka 4.x, the spec's one
rule: `harness.spec.impossible_cluster`) is left out of the plan and listed with its reason;
it is not run and not an error. The left-out combinations are written into the experiment's
`matrix.exclude`, so its run folder's spec.yaml expands to exactly the cells that ran
(`verify` works on it). An experiment none of whose cells can exist is left out whole.
"""

from __future__ import annotations

import copy
import fnmatch
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.experiment import Plan
from harness.nemesis.schedule import plan_faults
from harness.spec import (
    Cell,
    Spec,
    SpecError,
    choose_seed,
    excluded_combinations,
    expand_cells,
    impossible_cluster,
    load_spec,
    parse_spec,
    resolve_path,
)
from harness.spec.load import read_yaml
from harness.spec.matrix import when_matches
from harness.spec.paths import Segment, set_at
from harness.suite.estimate import estimate_cell_s, estimate_experiment_s
from harness.suite.model import Suite, SuiteAxis, load_suite
from harness.suite.shards import Shard, assign_shards

_CLUSTER_KEYS = (("cluster",), ("cluster", "mode"), ("cluster", "version"))


@dataclass(frozen=True)
class Impossible:
    """A combination of axis values left out because its cluster cannot exist."""

    params: dict[str, Any]
    reason: str


@dataclass
class ExperimentPlan:
    """One experiment of a suite: its plan (cells may be empty: left out), and how the suite's
    axes met it."""

    file: str  # as the suite names it: relative to the suite's root
    plan: Plan
    added: dict[str, list[Any]] = field(default_factory=dict)  # suite axes added to its matrix
    kept: dict[str, str] = field(default_factory=dict)  # suite axis key -> why it was not added
    # the experiment's own axes the suite replaced (`replace:`): its key -> the suite's values
    replaced: dict[str, list[Any]] = field(default_factory=dict)
    impossible: list[Impossible] = field(default_factory=list)
    # left out by its own matrix.exclude (its own axes only: before the suite's were added)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    estimates: dict[str, float] = field(default_factory=dict)  # cell id -> planned s
    left_out: str = ""  # why no cell of it runs ("" when some do)
    shard: int = 1  # the shard that runs it (harness.suite.shards; 1 when not sharded)

    @property
    def name(self) -> str:
        return self.plan.spec.name

    @property
    def cells(self) -> list[Cell]:
        return self.plan.cells

    @property
    def planned_s(self) -> float:
        return estimate_experiment_s(list(self.estimates.values()))


@dataclass
class SuitePlan:
    suite: Suite
    seed: int  # for experiments that name no seed (unless --seed)
    seed_given: bool
    experiments: list[ExperimentPlan]  # all of the plan's, whichever shard runs them
    shard: Shard | None = None  # this run is one part of the plan (`--shard K/N`)

    @property
    def mine(self) -> list[ExperimentPlan]:
        """The experiments this run is for: all, or its shard's."""
        if self.shard is None:
            return list(self.experiments)
        return [e for e in self.experiments if e.shard == self.shard.index]

    @property
    def runnable(self) -> list[ExperimentPlan]:
        return [e for e in self.mine if e.cells]

    @property
    def left_out(self) -> list[ExperimentPlan]:
        return [e for e in self.mine if not e.cells]

    @property
    def cell_count(self) -> int:
        return sum(len(e.cells) for e in self.mine)

    @property
    def planned_s(self) -> float:
        return sum(e.planned_s for e in self.mine)

    @property
    def total_planned_s(self) -> float:
        """The whole plan's, every shard's."""
        return sum(e.planned_s for e in self.experiments)


def make_suite_plan(
    path: Path | str,
    seed: int | None = None,
    cells_filter: str | None = None,
    shard: Shard | None = None,
) -> SuitePlan:
    """Every experiment's cells, or SpecError naming each bad file and key (all at once).

    Seeds: `seed` (--seed) for every experiment; else an experiment's own `seed:`; else the
    suite's `seed:`; else one chosen for the whole run (printed and stored) — not with
    `shard`: the shards of one run must agree on it without talking to each other.
    """
    suite = load_suite(path)
    suite_seed = seed if seed is not None else suite.model.seed
    if shard is not None and suite_seed is None:
        raise ConfigError(
            f"--shard {shard}: the shards of one run need the same seed; set `seed:` in "
            f"{suite.shown(suite.path)} or pass --seed"
        )
    seed_value = suite_seed if suite_seed is not None else choose_seed()
    problems: list[str] = []
    plans: list[ExperimentPlan] = []
    for file in suite.files:
        try:
            plans.append(plan_experiment(suite, file, seed, seed_value))
        except SpecError as exc:
            problems += exc.lines
    if problems:
        raise SpecError(problems)
    if cells_filter:
        _filter(plans, cells_filter)
    if shard is not None:
        chosen = assign_shards([(e.file, e.planned_s) for e in plans], shard.count)
        for e, k in zip(plans, chosen, strict=True):
            e.shard = k
    return SuitePlan(suite, seed_value, suite_seed is not None, plans, shard)


def plan_experiment(
    suite: Suite, file: Path, cli_seed: int | None, suite_seed: int
) -> ExperimentPlan:
    spec = load_spec(file)  # valid on its own first: its errors name only its own file
    raw = read_yaml(file)
    shown = suite.shown(file)
    own_axes = spec.matrix.axes if spec.matrix is not None else {}
    own_segments = {_segments(k): k for k in own_axes}
    added: dict[str, list[Any]] = {}
    kept: dict[str, str] = {}
    replaced: dict[str, list[Any]] = {}
    for axis in suite.axes:
        if axis.segments in own_segments and axis.replace:
            replaced[own_segments[axis.segments]] = list(axis.values)
        elif axis.segments in own_segments:
            values = ", ".join(str(v) for v in own_axes[own_segments[axis.segments]])
            kept[axis.key] = f"the experiment's own axis ({values})"
        elif (pinned := _given(raw, axis.segments)) is not None:
            kept[axis.key] = f"set by the experiment ({pinned[0]})"
        else:
            added[axis.key] = list(axis.values)
    chosen = cli_seed if cli_seed is not None else spec.seed
    seed = chosen if chosen is not None else suite_seed
    given = chosen is not None or suite.model.seed is not None
    out = ExperimentPlan(shown, Plan(file, spec, seed, given, [], {}), added, kept, replaced)
    if not added and not replaced:
        cells = expand_cells(spec, str(file))
        out.excluded = excluded_combinations(spec)
        return _with_cells(out, spec, cells)

    source = f"{shown} (with the axes of suite {suite.shown(suite.path)})"
    data = copy.deepcopy(raw)
    matrix = dict(data.get("matrix") or {})
    for key, new in replaced.items():
        matrix[key] = new
        _drop_dead_whens(matrix, key, new)
    matrix.update(added)
    data["matrix"] = matrix
    merged = parse_spec(data, source)
    out.excluded = excluded_combinations(spec)  # shown as the experiment wrote them
    excluded = excluded_combinations(merged)
    out.impossible = _impossible(merged, excluded)
    if len(out.impossible) + len(excluded) == _combinations(merged):
        out.plan = Plan(file, merged, seed, given, [], {})
        out.left_out = "no cell can exist: " + "; ".join(sorted({i.reason for i in out.impossible}))
        return out
    matrix["exclude"] = list(matrix.get("exclude") or []) + _exclude_entries(
        merged, out.impossible, source
    )
    final = parse_spec(data, source)
    return _with_cells(out, final, expand_cells(final, source))


def _with_cells(out: ExperimentPlan, spec: Spec, cells: list[Cell]) -> ExperimentPlan:
    seed = out.plan.seed
    schedules = {c.id: plan_faults(c, seed) for c in cells}
    out.plan = Plan(out.plan.spec_path, spec, seed, out.plan.seed_given, cells, schedules)
    out.estimates = {c.id: estimate_cell_s(c.spec) for c in cells}
    return out


def _drop_dead_whens(matrix: dict[str, Any], key: str, values: list[Any]) -> None:
    """Drop the `exclude` entries and `expect` overrides that name a value of axis `key` none
    of `values` has: they matched no cell once the axis took these values."""

    def dead(when: Any) -> bool:
        return (
            isinstance(when, dict)
            and key in when
            and not any(when_matches(v, when[key]) for v in values)
        )

    if isinstance(matrix.get("exclude"), list):
        matrix["exclude"] = [e for e in matrix["exclude"] if not dead(e)]
    if isinstance(matrix.get("expect"), list):
        matrix["expect"] = [
            o for o in matrix["expect"] if not (isinstance(o, dict) and dead(o.get("when")))
        ]


def _segments(key: str) -> tuple[Segment, ...]:
    try:
        return resolve_path(key)
    except ValueError:  # load_spec has checked the experiment's own keys
        return (key,)


def _given(raw: Any, segments: tuple[Segment, ...]) -> tuple[Any] | None:
    """(value,) when the experiment file itself sets the key at `segments`, else None."""
    node = raw
    for seg in segments:
        if isinstance(seg, int):
            if not isinstance(node, list) or seg >= len(node):
                return None
        elif not isinstance(node, dict) or seg not in node:
            return None
        node = node[seg]
    return (node,)


def _combinations(spec: Spec) -> int:
    assert spec.matrix is not None
    n = 1
    for values in spec.matrix.axes.values():
        n *= len(values)
    return n


def _impossible(spec: Spec, excluded: list[dict[str, Any]]) -> list[Impossible]:
    """Combinations (not already excluded by the experiment) whose cluster cannot exist."""
    assert spec.matrix is not None
    axes = spec.matrix.axes
    base = spec.model_dump(mode="json", exclude={"matrix"})
    out = []
    for combo in itertools.product(*axes.values()):
        params = dict(zip(axes, combo, strict=True))
        if params in excluded:
            continue
        cluster = _cluster_of(base, params)
        reason = impossible_cluster(str(cluster.get("mode")), str(cluster.get("version")))
        if reason is not None:
            out.append(Impossible(params, reason))
    return out


def _cluster_of(base: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    data = {"cluster": copy.deepcopy(base["cluster"])}
    for key, value in params.items():
        segments = _segments(key)
        if segments[0] == "cluster":
            set_at(data, segments, copy.deepcopy(value))
    cluster: dict[str, Any] = data["cluster"]
    return cluster


def _exclude_entries(spec: Spec, impossible: list[Impossible], source: str) -> list[dict[str, Any]]:
    """`matrix.exclude` entries naming only the axes that decide the cluster's mode and version
    (exact: nothing else makes a cluster impossible)."""
    assert spec.matrix is not None
    deciding = [k for k in spec.matrix.axes if _segments(k)[:2] in _CLUSTER_KEYS]
    entries: list[dict[str, Any]] = []
    for item in impossible:
        entry = {k: item.params[k] for k in deciding}
        if any(isinstance(v, dict | list) for v in entry.values()):
            raise SpecError(
                [
                    f"{source}: matrix: cannot leave out impossible cells of an axis whose values "
                    f"are mappings or lists ({', '.join(deciding)})"
                ]
            )
        if entry not in entries:
            entries.append(entry)
    return entries


def _filter(plans: list[ExperimentPlan], pattern: str) -> None:
    """`--cells`: comma list of substrings or globs on `<cell id>` or `<experiment>/<cell id>`;
    an experiment with no matching cell is left out."""
    terms = [t.strip() for t in pattern.split(",") if t.strip()]

    def hit(name: str, term: str) -> bool:
        if any(ch in term for ch in "*?["):
            return fnmatch.fnmatchcase(name, term)
        return term in name

    total = 0
    for e in plans:
        chosen = [
            c for c in e.cells if any(hit(c.id, t) or hit(f"{e.name}/{c.id}", t) for t in terms)
        ]
        if e.cells and not chosen:
            e.left_out = f"no cell matches --cells {pattern!r}"
        e.plan.cells = chosen
        e.plan.schedules = {c.id: e.plan.schedules[c.id] for c in chosen}
        e.estimates = {c.id: e.estimates[c.id] for c in chosen}
        total += len(chosen)
    if not total:
        raise ConfigError(f"--cells {pattern!r} matches no cell of any experiment of the suite")


__all__ = [
    "ExperimentPlan",
    "Impossible",
    "SuiteAxis",
    "SuitePlan",
    "make_suite_plan",
    "plan_experiment",
]
