"""The guided drawing (breadth first by role, then kind; a corpus of schedules that reached a
new state, mutated), the explore summary's verdict rules and the validation holes the issue
named: all pure logic, with a fake runner where a trial runs."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.explore.budget import Budget
from harness.explore.generator import (
    _cut_with_no_peer_up,
    _overlaps,
    schedule_problems,
    with_faults,
)
from harness.explore.guide import Guide
from harness.explore.search import Search, TrialRun
from harness.explore.summary import ExploreSummary, ShrunkRecord, TrialRecord, ViolationRecord
from harness.spec import Cell, Spec, SpecError, expand_cells, load_spec
from harness.spec.explore_roles import Entry, role_of

SITE: dict[str, Any] = {
    "name": "explore-site",
    "cluster": {"mode": "kraft", "version": "3.9.2", "brokers": 3},
    "topic": {
        "name": "chaos",
        "partitions": 3,
        "replication_factor": 3,
        "config": {"min.insync.replicas": 2},
    },
    "producer": {"acks": "all", "rate": 200, "duration_s": 30},
    "consumer": {"kind": "group", "group": "chaos-group", "members": 1},
    "expect": {"lost": 0},
    "explore": {"max_faults": 3},
}


def cells_of(tmp_path: Path, data: dict[str, Any] = SITE) -> list[Cell]:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return expand_cells(load_spec(path), str(path))


def spec_of(tmp_path: Path, data: dict[str, Any] = SITE) -> Spec:
    return cells_of(tmp_path, data)[0].spec


def site_cut(faults: list[Entry]) -> bool:
    return any(f["kind"] == "power-loss" and f["target"] == "all" for f in faults)


# --- breadth first ------------------------------------------------------------------------
def test_every_role_is_drawn_before_any_twice(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)
    guide = Guide(spec, 7)
    roles = {r for _, r in guide.drawer.pairs}
    assert {"one", "minority", "majority", "leader", "controller", "all"} <= roles
    drawn: list[str] = []
    trial = 0
    while len(drawn) < len(roles):
        schedule, origin = guide.next(trial)
        assert origin == "fresh"
        guide.record(schedule, [])
        drawn += [d.role for d in schedule.drawn]
        trial += 1
    assert set(drawn[: len(roles)]) == roles  # no role twice before every role once


@pytest.mark.parametrize("seed", range(12))
def test_a_site_power_cut_is_drawn_within_eight_trials_whatever_the_seed(
    tmp_path: Path, seed: int
) -> None:
    """The spec never names power-loss: it is drawn because its module says it can be, on
    the role `all` that no other kind has, and breadth draws each of the eight roles once
    before any twice (a trial draws at least one)."""
    guide = Guide(spec_of(tmp_path), seed)
    firsts = []
    for trial in range(8):
        schedule, _ = guide.next(trial)
        # a new state at once (a corpus from trial 0): breadth still comes first
        guide.record(schedule, ["isr_at_min"] if trial == 0 else [])
        firsts.append(site_cut(schedule.faults))
    assert any(firsts)


def test_random_drawing_keeps_no_corpus_and_ignores_counts(tmp_path: Path) -> None:
    guide = Guide(spec_of(tmp_path), 3, "random")
    schedule, origin = guide.next(0)
    assert guide.record(schedule, ["leaderless"]) == ["leaderless"]
    assert not guide.corpus and origin == "fresh"


# --- the corpus ---------------------------------------------------------------------------
def test_a_new_state_keeps_the_schedule_and_later_trials_mutate_it(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)
    guide = Guide(spec, 11)
    first, _ = guide.next(0)
    assert guide.record(first, ["isr_at_min", "leaderless"]) == ["isr_at_min", "leaderless"]
    assert guide.corpus == [first]
    assert guide.record(first, ["leaderless"]) == []  # nothing new: not kept again
    assert len(guide.corpus) == 1
    origins = []
    for trial in range(1, 40):
        breadth_done = guide.breadth_done()
        schedule, origin = guide.next(trial)
        origins.append(origin)
        assert breadth_done or origin == "fresh"  # breadth first: no mutation before it
        assert schedule.drawn, origin
        assert not schedule_problems(spec, schedule.faults), (origin, schedule.faults)
        guide.record(schedule, [])
    mutated = [o for o in origins if o != "fresh"]
    assert mutated and all(o.endswith("of trial 0") for o in mutated)
    after = origins[origins.index(mutated[0]) :]
    assert 0.25 < len(mutated) / len(after) < 0.8  # MUTATE_P 0.5 once breadth is done
    assert len({o.split()[0] for o in mutated}) >= 2  # shift, stretch, drop, add, retarget


def test_same_seed_and_outcomes_give_the_same_schedules(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)

    def run(seed: int) -> list[list[Entry]]:
        guide = Guide(spec, seed)
        out = []
        for trial in range(12):
            schedule, _ = guide.next(trial)
            guide.record(schedule, ["leaderless"] if trial == 2 else [])
            out.append(schedule.faults)
        return out

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_role_of_reads_the_site_and_the_client_roles() -> None:
    assert role_of({"kind": "power-loss", "target": "all"}) == "all"
    assert role_of({"kind": "kill", "target": "broker:2"}) == "one"


# --- the summary's verdict ----------------------------------------------------------------
def summary_with(**fields: Any) -> ExploreSummary:
    base = ExploreSummary(spec="s", file="s.yaml", seed=1, started="now", k=3, need=2, budget={})
    return base.model_copy(update=fields)


def trial(n: int, verdict: str = "pass", injected: int | None = 1, **kw: Any) -> TrialRecord:
    faults = [{"at_s": 5.0, "kind": "kill", "target": "broker:1", "duration_s": 5.0}]
    return TrialRecord(
        trial=n, cell="01_main", faults=faults, verdict=verdict, injected=injected, **kw
    )


def violation(file: str | None) -> ViolationRecord:
    shrunk = ShrunkRecord(faults=[], reproduced="1/3", file=file, stopped="budget", log="l")
    return ViolationRecord(property="lost", trial=0, cell="01_main", original=[], shrunk=shrunk)


def test_an_unconfirmed_violation_makes_the_verdict_unknown_not_fail() -> None:
    assert summary_with(trials=[trial(0)], unconfirmed=[violation(None)]).verdict == "unknown"
    assert summary_with(trials=[trial(0)], violations=[violation("r.yaml")]).verdict == "fail"
    assert summary_with(trials=[trial(0), trial(1)]).verdict == "pass"


def test_a_trial_that_injected_nothing_does_not_count() -> None:
    idle = trial(1, verdict="unknown", injected=0)
    assert not idle.counted and trial(2, injected=None).counted
    assert summary_with(trials=[trial(0), idle]).verdict == "pass"
    assert summary_with(trials=[idle]).verdict == "unknown"  # nothing was tested


def fake(loses: bool) -> Any:
    def run(cell: Cell, faults: list[Entry], label: str) -> TrialRun:
        lost = loses and site_cut(faults)
        checks = [{"name": "lost", "verdict": "fail" if lost else "pass", "detail": "lost = 9"}]
        reached = ("leaderless",) if any(f["kind"] == "kill" for f in faults) else ()
        return TrialRun(checks, "fail" if lost else "pass", f"/r/{label}", None, reached, 1)

    return run


def test_the_search_finds_a_site_power_cut_it_was_never_told_of(tmp_path: Path) -> None:
    found = Search(cells_of(tmp_path), 21, fake(True), tmp_path / "o", Budget(cells=40))
    summary = found.explore(summary_with())
    assert summary.verdict == "fail"
    first = summary.violations[0]
    assert first.shrunk is not None and first.shrunk.faults == [
        f for f in first.shrunk.faults if f["kind"] == "power-loss"
    ]
    assert len(first.shrunk.faults) <= 2 and first.shrunk.reproduced in ("2/2", "3/3", "2/3")
    assert summary.curve and summary.curve[-1].states == len(
        {s for t in summary.trials for s in t.reached}
    )
    assert [p.states for p in summary.curve] == sorted(p.states for p in summary.curve)
    assert summary.budget["drawing"] == "guided"


def test_a_confirmation_that_fails_leaves_the_violation_unconfirmed(tmp_path: Path) -> None:
    calls = iter(range(1000))

    def once(cell: Cell, faults: list[Entry], label: str) -> TrialRun:
        hit = label == "trial-000" and next(calls) == 0
        checks = [{"name": "lost", "verdict": "fail" if hit else "pass", "detail": ""}]
        return TrialRun(checks, "fail" if hit else "pass", f"/r/{label}", injected=1)

    summary = Search(cells_of(tmp_path), 2, once, tmp_path / "o", Budget(cells=12)).explore(
        summary_with()
    )
    assert not summary.violations and [v.trial for v in summary.unconfirmed] == [0]
    assert summary.verdict == "unknown"


# --- validation holes ---------------------------------------------------------------------
def problems(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(SpecError) as err:
        load_spec(path)
    return str(err.value)


def test_explore_without_expect_is_refused(tmp_path: Path) -> None:
    data = {k: v for k, v in SITE.items() if k != "expect"}
    assert "expects nothing: no trial could fail" in problems(tmp_path, data)


def test_a_kind_this_cell_cannot_draw_is_refused(tmp_path: Path) -> None:
    data = {**SITE, "explore": {"kinds": ["cut-zookeeper"]}}  # KRaft: no ZooKeeper
    assert "explore.kinds[0]: cut-zookeeper cannot be drawn here" in problems(tmp_path, data)
    data = {**SITE, "explore": {"kinds": ["power-loss"], "targets": ["minority"]}}
    assert "explore.kinds[0]: power-loss cannot be drawn here" in problems(tmp_path, data)


# --- any shipped workload ---------------------------------------------------------------------
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
SHIPPED = sorted(
    p
    for p in EXPERIMENTS.rglob("*.yaml")
    if p.relative_to(EXPERIMENTS).parts[0] not in ("suites", "calibrations")
)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(EXPERIMENTS)))
def test_every_shipped_experiment_can_be_explored(path: Path) -> None:
    """Transactions, share groups, pipelines, Spark, Java clients, ZooKeeper, migrations:
    every cell of every shipped experiment draws schedules its own rules accept, with the
    defaults (its `explore:` where it has one)."""
    for cell in expand_cells(load_spec(path), str(path)):
        guide = Guide(cell.spec, 5)
        for trial in range(6):
            schedule, _ = guide.next(trial)
            assert schedule.drawn, (cell.id, trial)
            assert not schedule_problems(cell.spec, schedule.faults), (cell.id, schedule.faults)
            guide.record(schedule, ["leaderless"] if trial == 0 else [])


def test_expectations_bound_to_the_written_faults_are_left_out_of_a_trial(tmp_path: Path) -> None:
    data = {
        **SITE,
        "faults": [{"at_s": 10, "kind": "kill", "target": "broker:1", "duration_s": 8}],
        "expect": {"lost": 0, "max_stall_s": ">= 0.5 * faults.0.duration_s"},
    }
    spec = spec_of(tmp_path, data)
    trial = with_faults(spec, [])
    assert list(trial.expect) == ["lost"]
    only = {**data, "expect": {"max_stall_s": ">= 0.5 * faults.0.duration_s"}}
    assert "every expectation is bound to the spec's own faults" in problems(tmp_path, only)


def test_a_power_cut_of_the_site_under_a_clock_skew_is_never_drawn() -> None:
    """Seen: a clock skew of broker 3 whose heal ran into the site's power cut (409 Conflict)."""
    skew = {"at_s": 9.8, "kind": "clock-skew", "target": "broker:3", "duration_s": 20.0}
    cut = {"at_s": 18.6, "kind": "power-loss", "target": "all", "duration_s": 10.0}
    pause = {"at_s": 9.8, "kind": "pause", "target": "leader-of:chaos/0", "duration_s": 20.0}
    assert _overlaps([skew, cut])
    assert not _overlaps([pause, {**cut, "kind": "kill", "target": "broker:3"}])
    assert not _overlaps([skew, {**cut, "at_s": 30.0}])  # after the skew healed


def test_no_fault_is_drawn_onto_a_node_its_full_disk_may_have_shut_down() -> None:
    """Seen: a disk-full of the controller (broker 1, which Kafka shut down: every log
    directory failed), then a reset of broker 1 inside it: "broker-1 is not running"."""
    full = {"at_s": 9.8, "kind": "disk-full", "target": "controller", "duration_s": 23.8}
    reset = {"at_s": 18.9, "kind": "reset", "target": "broker:1", "duration_s": 6.0}
    assert _overlaps([full, reset])
    assert not _overlaps([full, {**reset, "at_s": 34.0}])  # after the disk was freed


def test_no_cut_is_drawn_while_every_peer_of_its_target_is_down() -> None:
    """Seen (issue 64, and the parallel control run): brokers 1 and 3 stopped, then broker 2
    isolated: "no running node to install rules in"."""
    stops = [
        {"at_s": 17.6, "kind": "stop", "target": f"broker:{n}", "duration_s": 14.2} for n in (1, 3)
    ]
    isolate = {"at_s": 22.1, "kind": "isolate", "target": "broker:2", "duration_s": 9.0}
    assert _cut_with_no_peer_up([*stops, isolate], nodes=3)
    assert not _cut_with_no_peer_up([stops[0], isolate], nodes=3)  # broker 3 still up
    assert not _cut_with_no_peer_up([*stops, isolate], nodes=4)  # a controller still up
    assert not _cut_with_no_peer_up([*stops, {**isolate, "at_s": 32.0}], nodes=3)  # after
    site = {"at_s": 20.0, "kind": "power-loss", "target": "all", "duration_s": 5.0}
    assert _cut_with_no_peer_up([site, isolate], nodes=3)


def test_reoption_keeps_the_fault_and_draws_its_options_again(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)
    guide = Guide(spec, 4)
    cut = next(d for d in _site_cut_schedule(guide).drawn if d.role == "all")
    changed = [guide._changed("reoption", cut, random.Random(i)) for i in range(20)]
    assert all(c is not None and c.kind == "power-loss" and c.role == "all" for c in changed)
    assert all(
        c.entries[0]["at_s"] == cut.entries[0]["at_s"]
        and c.entries[0]["duration_s"] == cut.entries[0]["duration_s"]
        and c.entries[0]["target"] == "all"
        for c in changed
        if c is not None
    )
    tails = {c.entries[0].get("unsynced_tail") for c in changed if c is not None}
    assert tails == {"drop", "zeros"}  # the options were drawn again


def _site_cut_schedule(guide: Guide) -> Any:
    for trial in range(20):
        schedule, _ = guide.next(trial)
        guide.record(schedule, [])
        if site_cut(schedule.faults):
            return schedule
    raise AssertionError("no site power cut in 20 trials")


def test_ctrl_c_keeps_what_was_found_so_far(tmp_path: Path) -> None:
    calls = iter(range(100))

    def run(cell: Cell, faults: list[Entry], label: str) -> TrialRun:
        if next(calls) == 2:
            raise KeyboardInterrupt
        checks = [{"name": "lost", "verdict": "pass", "detail": "lost = 0"}]
        return TrialRun(checks, "pass", f"/r/{label}", None, ("leaderless",), 1)

    summary = summary_with()
    with pytest.raises(KeyboardInterrupt):
        Search(cells_of(tmp_path), 1, run, tmp_path / "o", Budget(cells=10)).explore(summary)
    assert summary.interrupted and len(summary.trials) == 2
    assert summary.verdict == "unknown"  # every trial passed, but it did not end
    assert [p.states for p in summary.curve] == [1, 1] and summary.budget["cells_run"] == 2
