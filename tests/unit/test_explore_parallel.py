"""Explore's trials side by side (`--parallel`): the loop with a fake runner whose trials end
in any order (records in trial order, never more than `parallel` under way, the budget never
overshot, the same schedules whatever the order, a shrink only once nothing else runs), and
the worker processes with a fake worker life (no cluster: outcomes, a worker that dies, an
interrupt passed on)."""

from __future__ import annotations

import os
import random
import threading
import time
from concurrent.futures import Future
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from harness.cli.progress import CellProgress
from harness.explore.budget import Budget
from harness.explore.search import Search, TrialRun
from harness.explore.summary import ExploreSummary, TrialRecord
from harness.explore.workers import TrialWorkers, WorkerSetup
from harness.spec import Cell
from harness.spec.explore_roles import Entry
from tests.unit.test_explore_search import SPEC, cells, fake_cluster, summary_of


class Shuffled:
    """Starts each trial at once and ends it after a seeded random delay: trials end out of
    order. Counts what is under way (started, not ended)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.futures: list[Future[TrialRun]] = []
        self.recorded = 0
        self.most = 0
        self.shrink_beside: list[int] = []  # trials under way when a shrink cell ran

    def under_way(self) -> int:
        return sum(1 for f in self.futures if not f.done())

    def start(self, cell: Cell, faults: list[Entry], label: str) -> Future[TrialRun]:
        future: Future[TrialRun] = Future()
        self.futures.append(future)
        self.most = max(self.most, self.under_way())
        delay = self.rng.uniform(0.0, 0.02)

        def end() -> None:
            time.sleep(delay)
            future.set_result(fake_cluster(cell, faults, label))

        threading.Thread(target=end, daemon=True).start()
        return future

    def run(self, cell: Cell, faults: list[Entry], label: str) -> TrialRun:
        self.shrink_beside.append(self.under_way())
        return fake_cluster(cell, faults, label)

    def on_trial(self, record: TrialRecord) -> None:
        self.recorded += 1


def explore(
    tmp_path: Path, order: int, parallel: int, budget: int
) -> tuple[Shuffled, ExploreSummary]:
    fake = Shuffled(order)
    search = Search(cells(tmp_path), 5, fake.run, tmp_path / f"out-{order}", Budget(cells=budget))
    search.on_trial, search.parallel, search.start = fake.on_trial, parallel, fake.start
    return fake, search.explore(summary_of())


@pytest.mark.parametrize("parallel", [2, 3])
def test_trials_side_by_side_are_recorded_in_order_within_the_budget(
    tmp_path: Path, parallel: int
) -> None:
    fake, summary = explore(tmp_path, 1, parallel, budget=40)
    assert [t.trial for t in summary.trials] == list(range(len(summary.trials)))
    assert fake.most == parallel  # as many as asked, never more
    assert summary.budget["cells_run"] <= 40 and summary.budget["parallel"] == parallel
    # the acks=1 cell loses records: found, shrunk and confirmed with nothing beside it
    assert summary.violations and summary.violations[0].shrunk is not None
    assert fake.shrink_beside and set(fake.shrink_beside) == {0}
    # the trials drawn while the violating one ran still ran and were recorded
    assert summary.trials[-1].trial >= summary.violations[0].trial


def test_the_same_seed_draws_the_same_schedules_whatever_order_trials_end_in(
    tmp_path: Path,
) -> None:
    safe = {**SPEC, "matrix": None, "producer": {**SPEC["producer"], "acks": "all"}}
    safe = {k: v for k, v in safe.items() if v is not None}
    runs = []
    for order in (1, 2, 3):
        fake = Shuffled(order)
        search = Search(
            cells(tmp_path, safe), 5, fake.run, tmp_path / f"o{order}", Budget(cells=12)
        )
        search.on_trial, search.parallel, search.start = fake.on_trial, 2, fake.start
        summary = search.explore(summary_of())
        runs.append([(t.faults, t.origin) for t in summary.trials])
    assert len(runs[0]) == 12 and runs[0] == runs[1] == runs[2]


def test_a_worker_draws_its_next_trial_while_an_older_one_still_runs(tmp_path: Path) -> None:
    """Trial 0 runs until trial 2 has started: with two workers, trial 2 (drawn knowing no
    outcome) starts as soon as trial 1 ends; trial 3 waits for trial 0 (it is drawn knowing
    it)."""
    third = threading.Event()
    order: list[str] = []

    def start(cell: Cell, faults: list[Entry], label: str) -> Future[TrialRun]:
        order.append(f"start {label}")
        if label == "trial-002":
            third.set()
        future: Future[TrialRun] = Future()

        def end() -> None:
            if label == "trial-000":
                third.wait(timeout=30)
            order.append(f"end {label}")
            future.set_result(fake_cluster(cell, faults, label))

        threading.Thread(target=end, daemon=True).start()
        return future

    safe = {**SPEC, "matrix": None, "producer": {**SPEC["producer"], "acks": "all"}}
    safe = {k: v for k, v in safe.items() if v is not None}
    search = Search(cells(tmp_path, safe), 5, fake_cluster, tmp_path, Budget(cells=4))
    search.parallel, search.start = 2, start
    summary = search.explore(summary_of())
    assert [t.trial for t in summary.trials] == [0, 1, 2, 3]
    assert order.index("start trial-002") < order.index("end trial-000")
    assert order.index("end trial-000") < order.index("start trial-003")


def test_running_trials_count_against_the_budget() -> None:
    budget = Budget(cells=4)
    budget.spend(2)
    assert not budget.exhausted(1) and budget.exhausted(2)
    clock = iter([0.0, 100.0, 100.0])  # started; then 100 s for 2 cells: 50 s a cell
    timed = Budget(seconds=250, clock=lambda: next(clock))
    timed.spend(2)
    assert timed.exhausted(3)  # 100 s + 3 x 50 s >= 250 s


# --- the worker processes, with a fake worker life ---------------------------------------
def echo(conn: Connection, setup: WorkerSetup, parent: int) -> None:
    """A worker life without clusters: each trial's outcome names its label and worker; a
    label with "die" ends the process mid-trial; "slow" waits for an interrupt."""
    os.setsid()
    try:
        while True:
            job = conn.recv()
            if job is None:
                break
            _cell, _faults, label = job
            if "die" in label:
                os._exit(3)
            if "slow" in label:
                (setup.out / "slow-started").touch()
                time.sleep(3600)  # until interrupted
            conn.send(("trial", label, TrialRun([], "pass", f"{label}@{os.getpid()}")))
        conn.send(("pool", {"fresh": 1, "reused": 2, "not_reused": [f"{os.getpid()}"]}))
    except KeyboardInterrupt:
        conn.send(("trial", "interrupted", TrialRun([], "unknown", None, "interrupted")))


def workers(tmp_path: Path) -> TrialWorkers:
    return TrialWorkers(2, WorkerSetup(tmp_path, 1, tmp_path, True, True, CellProgress), serve=echo)


def test_two_workers_run_trials_at_once_and_sum_their_pools(tmp_path: Path) -> None:
    pool = workers(tmp_path)
    cell = cells(tmp_path)[0]
    try:
        futures = [pool.start(cell, [], f"trial-{i}") for i in range(2)]
        outcomes = [f.result(timeout=30) for f in futures]
        third = pool.run(cell, [], "trial-2")
    finally:
        pool.close()
    assert [str(o.folder).split("@")[0] for o in outcomes] == ["trial-0", "trial-1"]
    assert len({str(o.folder).split("@")[1] for o in outcomes}) == 2  # two processes
    assert third.verdict == "pass"
    described = pool.describe()
    assert described["fresh"] == 2 and described["reused"] == 4
    assert len(described["not_reused"]) == 2


def test_a_worker_that_dies_loses_its_trial_not_the_run(tmp_path: Path) -> None:
    pool = workers(tmp_path)
    cell = cells(tmp_path)[0]
    try:
        lost = pool.start(cell, [], "trial-0-die").result(timeout=30)
        kept = pool.run(cell, [], "trial-1")  # the other worker still serves
    finally:
        pool.close()
    assert lost.verdict == "unknown" and "worker stopped" in str(lost.error)
    assert kept.verdict == "pass"


def test_close_interrupts_a_running_trial_and_ends_every_worker(tmp_path: Path) -> None:
    pool = workers(tmp_path)
    cell = cells(tmp_path)[0]
    slow = pool.start(cell, [], "trial-0-slow")
    for _ in range(600):  # until the worker has the trial (its start: imports, under load)
        if (tmp_path / "slow-started").exists():
            break
        time.sleep(0.1)
    pool.close()
    # its outcome came from its KeyboardInterrupt (the trial was never waited out)
    assert slow.result(timeout=5).error == "interrupted"
    assert all(not w.process.is_alive() for w in pool._workers)
