"""harness.verdict.checks_behind: a cell's checks run behind the next cell's cluster start,
every summary reaches the caller in the cells' order, and the cells' totals still add up."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from harness.spec import Cell
from harness.verdict.checks_behind import ChecksBehind
from harness.verdict.run_verify import SparkChecks


class FakeChecks:
    """verify() blocks until the test lets that cell's checks end; writes summary.json."""

    def __init__(self) -> None:
        self.release: dict[str, threading.Event] = {}
        self.started: list[str] = []
        self.readies = 0

    def ready(self) -> None:
        self.readies += 1

    def verify(self, cell: Any, cell_dir: Path) -> dict[str, Any]:
        self.started.append(cell.id)
        self.release.setdefault(cell.id, threading.Event()).wait(10)
        summary = {"cell": cell.id, "timings": {"checks": 4.0, "total": 50.0}}
        cell_dir.mkdir(parents=True, exist_ok=True)
        (cell_dir / "summary.json").write_text(json.dumps(summary))
        return summary

    def let(self, cell_id: str) -> None:
        self.release.setdefault(cell_id, threading.Event()).set()


class C:
    def __init__(self, cell_id: str) -> None:
        self.id = cell_id


def behind(fake: FakeChecks, done: list[dict[str, Any]]) -> ChecksBehind:
    return ChecksBehind(cast(SparkChecks, fake), done.append)


def test_checks_run_behind_the_next_cell_and_are_hidden_from_its_total(tmp_path: Path) -> None:
    fake, done = FakeChecks(), []
    b = behind(fake, done)
    b.run(cast(Cell, C("01")), tmp_path / "01", last=False)
    assert done == []  # not waited for: the next cell starts its cluster meanwhile
    fake.let("01")
    b.barrier()  # the next cell's checks-wait
    assert fake.readies == 1
    assert [s["cell"] for s in done] == ["01"]
    timings = done[0]["timings"]
    assert timings == {"checks": 4.0, "total": 46.0, "checks_hidden": 4.0}
    written = json.loads((tmp_path / "01" / "summary.json").read_text())
    assert written["timings"] == timings
    fake.let("02")
    b.run(cast(Cell, C("02")), tmp_path / "02", last=True)  # the last: at once, not hidden
    assert [s["cell"] for s in done] == ["01", "02"]
    assert done[1]["timings"] == {"checks": 4.0, "total": 50.0}


def test_checks_waited_for_outside_any_cell_count_as_the_cells_own(tmp_path: Path) -> None:
    fake, done = FakeChecks(), []
    b = behind(fake, done)
    b.run(cast(Cell, C("01")), tmp_path / "01", last=False)
    threading.Timer(0.3, fake.let, ("01",)).start()
    b.drain()  # the next cell broke before its barrier: the run waits here, in no cell
    (timings,) = [s["timings"] for s in done]
    assert 0.25 <= 4.0 - timings["checks_hidden"] <= 4.0
    assert timings["total"] == pytest.approx(50.0 - timings["checks_hidden"])
    b.drain()  # nothing pending: nothing happens
    assert len(done) == 1


def test_a_barrier_with_nothing_pending_only_waits_for_the_session(tmp_path: Path) -> None:
    fake, done = FakeChecks(), []
    b = behind(fake, done)
    b.barrier()
    assert fake.readies == 1 and done == []


def test_a_collect_behind_runs_first_in_the_thread_and_is_hidden_with_the_checks(
    tmp_path: Path,
) -> None:
    fake, done, order = FakeChecks(), [], []

    def collect_behind() -> None:  # the cell's folder completed, then its checks
        order.append("collect-behind")
        assert fake.started == []

    class Behind(FakeChecks):
        def verify(self, cell: Any, cell_dir: Path) -> dict[str, Any]:
            summary = fake.verify(cell, cell_dir)
            summary["timings"]["collect_behind"] = 2.5
            (cell_dir / "summary.json").write_text(json.dumps(summary))
            return summary

    b = ChecksBehind(cast(SparkChecks, Behind()), done.append)
    fake.let("01")
    b.run(cast(Cell, C("01")), tmp_path / "01", last=False, before=collect_behind)
    b.barrier()
    assert order == ["collect-behind"] and fake.started == ["01"]
    assert done[0]["timings"] == {
        "checks": 4.0,
        "collect_behind": 2.5,
        "checks_hidden": 6.5,
        "total": 43.5,
    }
    ran: list[str] = []
    fake.let("02")
    b.run(cast(Cell, C("02")), tmp_path / "02", last=True, before=lambda: ran.append("02"))
    assert ran == ["02"] and done[1]["timings"]["total"] == 50.0
