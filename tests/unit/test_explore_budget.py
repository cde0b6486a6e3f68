"""The budget's reserve (a shrink keeps its confirmation's k runs back, by cells and by the
clock) and `--max-trials` (drawn schedules at most; shrinking counts on the budget only)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from harness.cli import app
from harness.explore.budget import Budget
from harness.explore.search import Search
from harness.explore.shrink import BUDGET, Shrinker
from harness.spec.explore_roles import Entry
from harness.verdict.checks import Judgement
from tests.unit.test_explore_search import cells, fake_cluster, summary_of
from tests.unit.test_explore_shrink import Culprits, fault, verdicts


def test_a_reserve_holds_cells_back_while_inside() -> None:
    budget = Budget(cells=5)
    budget.spend(2)
    with budget.reserve(3):
        assert budget.exhausted()
    assert not budget.exhausted()


def test_a_reserve_by_the_clock_counts_the_mean_cell() -> None:
    now = {"t": 0.0}
    budget = Budget(seconds=600, clock=lambda: now["t"])
    now["t"] = 120.0
    budget.spend(2)  # a minute a cell
    with budget.reserve(3):
        assert not budget.exhausted()  # 120 + 3 * 60 < 600
        now["t"] = 430.0
        assert budget.exhausted()  # 430 + 3 * 215 >= 600
    now["t"] = 400.0
    assert not budget.exhausted()


def test_a_tight_budget_still_confirms_what_the_shrink_reached() -> None:
    faults = [fault(float(i), f"broker:{i}") for i in range(1, 9)]
    shrunk = Shrinker(Culprits(["broker:3"]), "lost", budget=Budget(cells=7)).run(faults)
    assert shrunk.stopped == BUDGET and len(shrunk.faults) < len(faults)
    assert shrunk.confirmed is not None and shrunk.confirmed.reproduced == "3/3"
    assert shrunk.log[-1].phase == "confirm"

    now = {"t": 0.0}

    def slow(faults: list[Entry]) -> list[Judgement]:
        now["t"] += 60.0
        return verdicts(True)

    budget = Budget(seconds=8 * 60, clock=lambda: now["t"])
    shrunk = Shrinker(slow, "lost", budget=budget).run(faults)
    assert shrunk.confirmed is not None and shrunk.confirmed.reproduced == "3/3"
    assert budget.spent <= 8


def test_max_trials_bounds_the_schedules_drawn_not_the_shrink(tmp_path: Path) -> None:
    found = Search(
        cells(tmp_path), 5, fake_cluster, tmp_path / "out", Budget(cells=200), max_trials=4
    )
    summary = found.explore(summary_of())
    assert len(summary.trials) == 4 and summary.budget["max_trials"] == 4
    assert summary.budget["cells_run"] > 4  # the shrink and its confirmation too
    assert summary.violations and summary.violations[0].shrunk is not None


def test_max_trials_is_an_option_of_explore() -> None:
    done = CliRunner().invoke(app, ["explore", "--help"], terminal_width=200)
    assert "--max-trials" in done.output
    done = CliRunner().invoke(app, ["explore", "x.yaml", "--max-trials", "0"])
    assert done.exit_code == 2
