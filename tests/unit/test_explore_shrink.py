"""The shrinker against a fake runner: a known minimal failing subset, a flaky oracle kept
only at need of k, durations, times and targets made simpler, the budget and its clock."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.explore.budget import Budget
from harness.explore.oracle import failed_properties, repeat
from harness.explore.shrink import BUDGET, FIXED_POINT, Shrinker
from harness.spec.explore_roles import Entry
from harness.verdict.checks import Judgement


def fault(at: float, target: str, kind: str = "kill", duration: float = 10.0) -> Entry:
    return {"at_s": at, "kind": kind, "target": target, "duration_s": duration}


def verdicts(lost: bool) -> list[Judgement]:
    return [
        Judgement("run", "pass", "every phase ran"),
        Judgement("lost", "fail" if lost else "pass", f"lost = {100 if lost else 0}, expected 0"),
    ]


class Culprits:
    """Violates `lost` when the schedule holds a fault on each of `targets` (whatever its
    time and duration): the known minimal failing subset."""

    def __init__(self, targets: Sequence[str]) -> None:
        self.targets = set(targets)
        self.calls = 0

    def __call__(self, faults: list[Entry]) -> list[Judgement]:
        self.calls += 1
        return verdicts(self.targets <= {str(f["target"]) for f in faults})


def test_ddmin_finds_the_two_culprits_of_six() -> None:
    faults = [fault(5 + 3 * i, f"broker:{i % 3 + 1}", kind=k) for i, k in enumerate("aabbcc")]
    faults = [dict(f, kind="kill", target=t) for f, t in zip(faults, "123456", strict=True)]
    oracle = Culprits(["2", "5"])
    shrunk = Shrinker(oracle, "lost", budget=Budget(cells=500)).run(faults)
    assert sorted(f["target"] for f in shrunk.faults) == ["2", "5"]
    assert shrunk.stopped == FIXED_POINT
    assert shrunk.confirmed is not None and shrunk.confirmed.reproduced == "3/3"
    assert shrunk.log[-1].phase == "confirm" and shrunk.log[-1].kept
    # every step of the log is a schedule tried, with its runs and whether it was kept
    assert all(step.runs or step.note for step in shrunk.log)
    assert [s.as_dict()["violated"] for s in shrunk.log if s.kept][-1] == "3/3"


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=7),
    data=st.data(),
)
def test_ddmin_always_ends_at_the_culprits(n: int, data: st.DataObject) -> None:
    targets = [f"broker:{i}" for i in range(n)]
    culprits = data.draw(st.lists(st.sampled_from(targets), min_size=1, max_size=n, unique=True))
    faults = [fault(float(i), t) for i, t in enumerate(targets)]
    shrunk = Shrinker(Culprits(culprits), "lost", budget=Budget(cells=2000)).run(
        faults, confirm=False
    )
    assert sorted(f["target"] for f in shrunk.faults) == sorted(culprits)


def test_durations_shorter_and_times_earlier_down_to_what_still_fails() -> None:
    def oracle(faults: list[Entry]) -> list[Judgement]:
        (f,) = faults
        return verdicts(float(f["duration_s"]) >= 4 and float(f["at_s"]) >= 3)

    shrunk = Shrinker(oracle, "lost", min_duration_s=1.0, earliest_s=2.0).run(
        [fault(20.0, "broker:1", duration=16.0)]
    )
    (f,) = shrunk.faults
    assert 4 <= f["duration_s"] < 8 and 3 <= f["at_s"] < 5.5
    phases = {s.phase for s in shrunk.log}
    assert {"shorter", "earlier", "confirm"} <= phases


def test_no_step_under_a_second() -> None:
    """Halving towards the floor stops once a step would move a time by under min_step_s:
    a schedule whose fault starts at 5.8 s instead of 6.5 s says nothing new for k cells."""
    shrunk = Shrinker(lambda faults: verdicts(True), "lost", earliest_s=5.0, k=1, need=1).run(
        [fault(17.3, "broker:1", duration=6.0)], confirm=False
    )
    moves = [s.faults[0]["at_s"] for s in shrunk.log if s.phase == "earlier"]
    assert moves == [11.2, 8.1, 6.5]  # 5.8 would be a step of 0.7 s
    assert [s.faults[0]["duration_s"] for s in shrunk.log if s.phase == "shorter"] == [3.5, 2.2]


def test_simpler_targets_taken_when_they_still_fail() -> None:
    def simpler(entry: Entry) -> list[Entry]:  # as harness.spec.explore_roles.simpler_targets
        out = [{**entry, "side": "minority"}] if entry.get("side") == "majority" else []
        return out + ([{**entry, "target": "broker:1"}] if entry["target"] != "broker:1" else [])

    def oracle(faults: list[Entry]) -> list[Judgement]:
        # the majority side fails; the minority side only with broker 1 on it
        return verdicts(faults[0]["target"] == "broker:1" or faults[0]["side"] == "majority")

    start = {**fault(5.0, "leader-of:chaos/0", kind="split", duration=1.0), "side": "majority"}
    shrunk = Shrinker(oracle, "lost", simpler=simpler, min_duration_s=1.0, earliest_s=5.0).run(
        [start]
    )
    assert shrunk.faults == [{**start, "side": "minority", "target": "broker:1"}]


def test_refused_candidates_are_logged_and_never_run() -> None:
    oracle = Culprits(["broker:1"])
    shrinker = Shrinker(
        oracle,
        "lost",
        problems=lambda faults: (
            ["faults[0].duration_s: too short"] if any(f["duration_s"] < 10 for f in faults) else []
        ),
    )
    shrunk = shrinker.run([fault(0.0, "broker:1", duration=10.0), fault(0.0, "broker:2")])
    assert shrunk.faults == [fault(0.0, "broker:1", duration=10.0)]
    refused = [s for s in shrunk.log if s.note.startswith("refused")]
    assert refused and all(not s.runs and not s.kept for s in refused)


class Flaky:
    """Violates on a fixed pattern of runs, per schedule (True: violated)."""

    def __init__(self, pattern: Sequence[bool]) -> None:
        self.pattern = itertools.cycle(pattern)
        self.calls = 0

    def __call__(self, faults: list[Entry]) -> list[Judgement]:
        self.calls += 1
        return verdicts(next(self.pattern))


def test_a_flaky_candidate_is_kept_only_at_need_of_k() -> None:
    one = [fault(1.0, "broker:1")]
    # 1 of 3: dropped, after all three runs (it could still have reached 2 after two)
    r = repeat(Flaky([True, False, False]), one, "lost", k=3, need=2)
    assert (r.kept, r.reproduced) == (False, "1/3")
    # 2 of 3: kept, and the third run is not needed when the first two violate
    r = repeat(Flaky([True, True, False]), one, "lost", k=3, need=2)
    assert (r.kept, r.reproduced) == (True, "2/2")
    r = repeat(Flaky([False, True, True]), one, "lost", k=3, need=2)
    assert (r.kept, r.reproduced) == (True, "2/3")
    # two misses: decided after two runs
    r = repeat(Flaky([False, False, True]), one, "lost", k=3, need=2)
    assert (r.kept, r.reproduced) == (False, "0/2")
    # configurable: 3 of 5
    r = repeat(Flaky([True, False, True, False, True]), one, "lost", k=5, need=3)
    assert (r.kept, r.reproduced) == (True, "3/5")
    r = repeat(Flaky([True, False, True, False, True]), one, "lost", k=3, need=3)
    assert r.kept is False


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), p=st.floats(0.0, 1.0))
def test_kept_exactly_when_need_of_the_runs_violate(seed: int, p: float) -> None:
    rng = random.Random(seed)
    oracle = Flaky([rng.random() < p for _ in range(3)])
    r = repeat(oracle, [fault(0.0, "broker:1")], "lost", k=3, need=2, early_stop=False)
    assert len(r.runs) == 3
    assert r.kept == (sum(run.violated for run in r.runs) >= 2)


def test_a_shrink_kept_by_luck_falls_back_to_the_schedule_kept_before_it() -> None:
    """The pair always violates; broker:1 alone violates in its first two runs only (kept by
    luck), so its confirmation fails: the pair is confirmed instead, and the log says so."""
    calls = {"alone": 0}

    def oracle(faults: list[Entry]) -> list[Judgement]:
        targets = {f["target"] for f in faults}
        if targets == {"broker:1", "broker:2"}:
            return verdicts(True)
        if targets == {"broker:1"}:
            calls["alone"] += 1
            return verdicts(calls["alone"] <= 2)
        return verdicts(False)

    pair = [fault(5.0, "broker:1"), fault(9.0, "broker:2")]
    shrinker = Shrinker(oracle, "lost", budget=Budget(cells=100), min_duration_s=10.0)
    shrunk = shrinker.run(pair)
    assert sorted(f["target"] for f in shrunk.faults) == ["broker:1", "broker:2"]
    assert shrunk.confirmed is not None and shrunk.confirmed.reproduced == "3/3"
    confirms = [s for s in shrunk.log if s.phase == "confirm"]
    assert [(len(s.faults), s.kept) for s in confirms] == [(1, False), (2, True)]
    assert "kept before it" in confirms[0].note


def test_no_confirmation_holds_reports_the_smallest_ones_runs() -> None:
    calls = {"n": 0}

    def once(faults: list[Entry]) -> list[Judgement]:
        calls["n"] += 1
        return verdicts(calls["n"] <= 2)  # the shrink's first candidate, then never again

    shrunk = Shrinker(once, "lost", budget=Budget(cells=100)).run(
        [fault(5.0, "broker:1"), fault(9.0, "broker:2")]
    )
    assert [f["target"] for f in shrunk.faults] == ["broker:1"]
    assert shrunk.confirmed is not None and shrunk.confirmed.reproduced == "0/3"
    assert [s.kept for s in shrunk.log if s.phase == "confirm"] == [False, False]


def test_a_flaky_oracle_does_not_lose_the_culprit() -> None:
    """Real clusters: the culprit pair violates 2 runs in 3, anything else violates 1 in 3
    (noise); shrinking keeps the pair and drops every other fault."""
    calls = {"n": 0}

    def oracle(faults: list[Entry]) -> list[Judgement]:
        calls["n"] += 1
        has = {"broker:2", "broker:4"} <= {f["target"] for f in faults}
        noise = calls["n"] % 3 == 0
        return verdicts(has != noise if has else noise)

    faults = [fault(float(i), f"broker:{i}") for i in range(1, 6)]
    shrunk = Shrinker(oracle, "lost", budget=Budget(cells=400)).run(faults)
    assert sorted(f["target"] for f in shrunk.faults) == ["broker:2", "broker:4"]


def test_the_budget_stops_the_shrink_by_cells_and_by_the_clock() -> None:
    faults = [fault(float(i), f"broker:{i}") for i in range(1, 9)]
    shrunk = Shrinker(Culprits(["broker:3"]), "lost", budget=Budget(cells=4)).run(faults)
    assert shrunk.stopped == BUDGET
    assert sum(len(s.runs) for s in shrunk.log) == 4

    now = {"t": 0.0}

    def slow(faults: list[Entry]) -> list[Judgement]:
        now["t"] += 60.0  # each cell a minute
        return verdicts(True)

    budget = Budget(seconds=5 * 60, clock=lambda: now["t"])
    shrunk = Shrinker(slow, "lost", budget=budget).run(faults)
    assert shrunk.stopped == BUDGET and budget.spent == 5


def test_same_expectation_only() -> None:
    """A candidate that fails another expectation is not a reproduction of this one."""

    def oracle(faults: list[Entry]) -> list[Judgement]:
        return [Judgement("lost", "pass", ""), Judgement("max_stall_s", "fail", "")]

    assert not repeat(oracle, [fault(0.0, "broker:1")], "lost").kept
    checks = [{"name": "recovery", "verdict": "fail"}, {"name": "lost", "verdict": "fail"}]
    assert failed_properties(checks, ["lost", "recovered"]) == ["recovered", "lost"]
    assert failed_properties(checks, ["lost"]) == ["lost"]
