"""`harness calibrate` through the command line without Docker: the runs are a fake `run_plan`
writing hand-built run folders with known figures; the burners of `--load` are real."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness._version import revision
from harness.cli import app
from harness.cli.calibration_table import bound_notes
from harness.cli.terminal import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_PASS, EXIT_USAGE
from harness.common.processes import ManagedProcess
from harness.errors import HarnessError
from harness.experiment import Plan
from harness.results.layout import CALIBRATION, RunPaths
from tests.unit.suite_folders import write_run
from tests.unit.test_burners import alive
from tests.unit.test_calibration import CELL_1, CELL_2, SPEC, summary
from tests.unit.test_suite_cli import every_build_there, tiny_suite

runner = CliRunner()
# Per run: cell -> (max stall = group stall, unavailable_s); `>= 54` with 60.1 is thin (10 %).
THIN = [
    {CELL_1: (60.1, 11.2), CELL_2: (80.0, 5.0)},
    {CELL_1: (61.0, 9.0), CELL_2: (81.0, 6.0)},
    {CELL_1: (70.0, 10.0), CELL_2: (82.0, 7.0)},
]


STARTED: list[ManagedProcess] = []  # the burners `calibrate` started, real processes


def burner_pids() -> list[int]:
    """The burners started in this test that are running."""
    return [b.pid for b in STARTED if b.running and alive(b.pid)]


class FakeRuns:
    """Stands in for `run_plan`: run n writes a run folder with `figures[n - 1]`; `fail`: a
    run number that raises `error` instead."""

    def __init__(
        self,
        figures: list[dict[str, tuple[float, float]]],
        fail: int = 0,
        error: Callable[[], BaseException] = lambda: HarnessError("Docker does not answer"),
    ) -> None:
        self.figures = figures
        self.fail, self.error = fail, error
        self.burners: list[int] = []  # burners running during each run
        self.seeds: list[int] = []

    def __call__(
        self,
        plan: Plan,
        out: Path,
        report: Any,
        on_cell_done: Callable[[dict[str, Any]], None],
        keep_cluster: bool = False,
        checks: Any = None,
    ) -> tuple[Path, dict[str, Any], None]:
        self.seeds.append(plan.seed)
        self.burners.append(len(burner_pids()))
        n = len(self.seeds)
        if n == self.fail:
            raise self.error()
        cells = []
        for cell in plan.cells:
            stall, unavailable = self.figures[n - 1][cell.id]
            cells.append(summary(cell.id, stall, unavailable))
            on_cell_done(cells[-1])
        run_dir = write_run(out / f"20260101T00000{n}Z-cal", "cal", cells)
        return run_dir, json.loads(RunPaths(run_dir).summary.read_text()), None


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "cal.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def fake_runs(monkeypatch: pytest.MonkeyPatch, fake: FakeRuns) -> FakeRuns:
    import harness.common.burners
    import harness.experiment

    def start_burners(count: int, max_s: float) -> list[ManagedProcess]:
        started = real_start(count, max_s)
        STARTED.extend(started)
        return started

    real_start = harness.common.burners.start_burners
    STARTED.clear()
    monkeypatch.setattr(harness.common.burners, "start_burners", start_burners)
    monkeypatch.setattr(harness.experiment, "run_plan", fake)
    every_build_there(monkeypatch)
    return fake


def test_a_thin_bound_exits_1_with_its_table_and_calibration_json(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_runs(monkeypatch, FakeRuns(THIN))
    out = tmp_path / "cal"
    result = runner.invoke(app, ["calibrate", str(spec), "--out", str(out)])
    assert result.exit_code == EXIT_FAIL, result.output
    assert fake.seeds == [5, 5, 5]  # the spec's seed each time: one schedule
    doc = json.loads((out / CALIBRATION).read_text())
    assert (doc["spec"], doc["runs"], doc["load"], doc["seed"]) == ("cal", 3, 0, 5)
    assert doc["status"] == "thin" and doc["cells_filter"] is None
    assert doc["harness"] == revision()  # the code that ran them: this checkout's
    assert [r["run"] for r in doc["run_folders"]] == [1, 2, 3]
    for run in doc["run_folders"]:
        assert Path(run["folder"]).parent == out and run["verdict"] == "pass"
        assert len(run["loadavg_start"]) == 3 and len(run["loadavg_end"]) == 3
    (stall,) = [b for b in doc["cells"][0]["bounds"] if b["metric"] == "max_stall_s"]
    assert stall["figures"] == [60.1, 61.0, 70.0] and stall["suggested"] == ">= 42"
    text = result.output
    assert "cell 01_duration_s=60" in text and "max_stall_s >= 54" in text
    assert "60.1 61 70" in text and "10.1 %" in text and ">= 42 (30.1 %)" in text
    assert "lost: a count bound says whether" in text
    assert "calibration: thin" in text and f"written: {out / CALIBRATION}" in text


def test_bounds_with_room_exit_0_and_cells_filters(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roomy = SPEC.replace('">= 54"', '">= 30"').replace("0.8 *", "0.5 *").replace("15.3", "20")
    spec.write_text(roomy)
    fake = fake_runs(monkeypatch, FakeRuns(THIN))
    out = tmp_path / "cal"
    args = ["calibrate", str(spec), "--runs", "2", "--cells", "01_*", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_PASS, result.output
    doc = json.loads((out / CALIBRATION).read_text())
    assert [c["cell"] for c in doc["cells"]] == [CELL_1] and doc["cells_filter"] == "01_*"
    assert doc["runs"] == 2 and len(fake.seeds) == 2 and doc["status"] == "ok"


def test_record_merges_the_figures_into_the_specs_record_once_per_calibration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "experiments" / "incidents"
    folder.mkdir(parents=True)
    spec = folder / "cal.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    fake_runs(monkeypatch, FakeRuns(THIN + THIN))
    for n in (1, 2):
        args = ["calibrate", str(spec), "--out", str(tmp_path / f"cal{n}"), "--record"]
        result = runner.invoke(app, args)
        assert result.exit_code == EXIT_FAIL, result.output
    record = json.loads((tmp_path / "experiments" / "calibrations" / "cal.json").read_text())
    assert record["spec"] == "cal" and len(record["calibrations"]) == 2
    (stall,) = [
        b for b in record["calibrations"][0]["cells"][0]["bounds"] if b["metric"] == "max_stall_s"
    ]
    assert stall["figures"] == [60.1, 61.0, 70.0] and stall["verdicts"] == ["pass"] * 3
    assert "recorded: " in result.output
    shown = runner.invoke(app, ["validate", str(spec)]).output
    assert "calibrated 20" in shown and "6 quiet run(s)" in shown
    assert "thin: 01_duration_s=60 max_stall_s >= 54, margin 10 %" in shown


def test_load_runs_burners_beside_every_run_and_leaves_none(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_runs(monkeypatch, FakeRuns(THIN))
    args = ["calibrate", str(spec), "--runs", "2", "--load", "2", "--out", str(tmp_path / "c")]
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_FAIL, result.output
    assert fake.burners == [2, 2]
    assert len(STARTED) == 2 and burner_pids() == []
    assert "2 CPU burner(s)" in result.output


def test_ctrl_c_stops_the_burners_and_exits_130(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_runs(monkeypatch, FakeRuns(THIN, fail=2, error=KeyboardInterrupt))
    args = ["calibrate", str(spec), "--load", "1", "--out", str(tmp_path / "c")]
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_INTERRUPTED, result.output
    assert fake.burners == [1, 1] and burner_pids() == []
    assert not (tmp_path / "c" / CALIBRATION).exists()


def test_a_run_that_breaks_leaves_its_figures_undecided_and_the_next_runs(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_runs(monkeypatch, FakeRuns(THIN, fail=2))
    out = tmp_path / "cal"
    result = runner.invoke(app, ["calibrate", str(spec), "--out", str(out)])
    assert result.exit_code == EXIT_FAIL, result.output  # still thin
    assert len(fake.seeds) == 3
    doc = json.loads((out / CALIBRATION).read_text())
    broken = doc["run_folders"][1]
    assert broken["folder"] is None and broken["error"] == "HarnessError: Docker does not answer"
    (stall,) = [b for b in doc["cells"][0]["bounds"] if b["metric"] == "max_stall_s"]
    assert stall["figures"] == [60.1, None, 70.0]
    assert stall["undecided"] == [{"run": 2, "reason": "HarnessError: Docker does not answer"}]
    assert "run 2 undecided: HarnessError: Docker does not answer" in result.output


def test_the_default_folder_is_under_results(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_runs(monkeypatch, FakeRuns(THIN))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["calibrate", str(spec), "--runs", "1"])
    assert result.exit_code == EXIT_FAIL, result.output
    (folder,) = (tmp_path / "results").iterdir()
    assert folder.name.endswith("-calibrate-cal") and (folder / CALIBRATION).is_file()


def test_bad_input_exits_2_and_runs_nothing(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_runs(monkeypatch, FakeRuns(THIN))
    suite = runner.invoke(app, ["calibrate", str(tiny_suite(tmp_path))])
    assert suite.exit_code == EXIT_USAGE and "is a suite file" in suite.output
    spec.write_text("name: cal\nproducer: {records: 10}\nexpect: {recovered: true}\n")
    flag_only = runner.invoke(app, ["calibrate", str(spec)])
    assert flag_only.exit_code == EXIT_USAGE and "has a numeric bound" in flag_only.output
    spec.write_text("name: cal\nexpect: {lost: 0}\nproducer: {colour: red}\n")
    assert runner.invoke(app, ["calibrate", str(spec)]).exit_code == EXIT_USAGE
    assert runner.invoke(app, ["calibrate", str(spec), "--runs", "0"]).exit_code == EXIT_USAGE
    assert fake.seeds == []


def test_from_judges_earlier_run_folders_and_records_them_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "experiments"
    folder.mkdir()
    spec = folder / "cal.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    fake = fake_runs(monkeypatch, FakeRuns(THIN))
    runs = []
    for n, figures in enumerate(THIN, start=1):
        cells = [summary(cell, *figures[cell], machine={"load1_max": 1.5 * n}) for cell in figures]
        run = write_run(tmp_path / "chaos" / f"run{n}", "cal", cells)
        run_summary = json.loads(RunPaths(run).summary.read_text())
        run_summary["started"] = f"2026-11-2{n}T04:00:00+00:00"
        run_summary["harness"] = "6048c91"  # the commit that ran them: all three agree
        RunPaths(run).summary.write_text(json.dumps(run_summary))
        runs.append(run)
    args = ["calibrate", str(spec), "--out", str(tmp_path / "cal"), "--record"]
    for run in runs:
        args += ["--from", str(run)]
    for _ in range(2):  # judged twice: recorded once
        result = runner.invoke(app, args)
        assert result.exit_code == EXIT_FAIL, result.output  # the same thin bound as if run
    assert fake.seeds == []  # nothing ran
    doc = json.loads((tmp_path / "cal" / CALIBRATION).read_text())
    assert (doc["runs"], doc["load"], doc["seed"], doc["from_runs"]) == (3, 0, 1, True)
    assert [r["load1_max"] for r in doc["run_folders"]] == [1.5, 3.0, 4.5]
    assert "run 3: pass, load up to 4.5" in result.output
    (stall,) = [b for b in doc["cells"][0]["bounds"] if b["metric"] == "max_stall_s"]
    assert stall["figures"] == [60.1, 61.0, 70.0] and stall["status"] == "thin"
    record = json.loads((folder / "calibrations" / "cal.json").read_text())
    (entry,) = record["calibrations"]
    assert entry["loadavg_max"] == 4.5 and entry["run_ids"] == ["run1", "run2", "run3"]
    assert entry["started"] == "2026-11-21T04:00:00+00:00"  # the earliest run's start
    assert doc["harness"] == entry["harness"] == "6048c91"  # the runs', not today's code


def test_from_refuses_another_specs_run_and_burners(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_runs(monkeypatch, FakeRuns(THIN))
    other = write_run(tmp_path / "other", "not-cal", [summary(CELL_1, 60.0, 10.0)])
    wrong = runner.invoke(app, ["calibrate", str(spec), "--from", str(other)])
    assert wrong.exit_code == EXIT_USAGE and "a run of 'not-cal', not of 'cal'" in wrong.output
    empty = runner.invoke(app, ["calibrate", str(spec), "--from", str(tmp_path)])
    assert empty.exit_code == EXIT_USAGE and "not a finished run's folder" in empty.output
    loaded = runner.invoke(app, ["calibrate", str(spec), "--from", str(other), "--load", "2"])
    assert loaded.exit_code == EXIT_USAGE and "--load cannot apply" in loaded.output


def test_a_run_unknown_for_more_than_the_load_is_named_under_its_cell() -> None:
    cell = {"cell": CELL_1, "bounds": [], "unknown_why": [None, "load", "faults: never fired"]}
    assert bound_notes(cell) == ["run 3 unknown, not for the load: faults: never fired"]
