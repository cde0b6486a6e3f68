"""Suites through the command line, without Docker: validate, --dry-run, and a tiny suite run
end to end with the experiment runner (`run_plan`) replaced by hand-built run folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.cli.terminal import EXIT_FAIL, EXIT_INFRA, EXIT_PASS, EXIT_USAGE
from harness.experiment import Plan
from harness.results.layout import SuitePaths
from tests.unit.suite_folders import FakeRunner
from tests.unit.test_suite_plan import VERSIONS, make_tree

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def tiny_suite(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path / "tree",
        f"experiments: [exp/plain.yaml, exp/modes.yaml]\nseed: 4\naxes: {{{VERSIONS}}}\n",
    )


def test_validate_a_suite_prints_every_cell_the_left_out_and_the_total(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tiny_suite(tmp_path))])
    assert result.exit_code == EXIT_PASS, result.output
    out = result.output
    assert "suite s" in out and "2 experiment file(s), 7 cell(s)" in out
    for cell in (
        "01_version=3.9.2",
        "02_version=4.3.1",
        "05_mode=zookeeper_acks=all_version=3.9.2",
    ):
        assert cell in out
    assert (
        "left out (cannot exist): cluster.mode=zookeeper, producer.acks=all, cluster.version=4.3.1"
        in out
    )
    assert "excluded by matrix.exclude: cluster.mode=zookeeper, producer.acks=1" in out
    assert "+ cluster.version: 3.9.2, 4.3.1" in out
    assert "total: 7 cell(s) in 2 experiment(s), planned" in out
    assert "suite is valid" in out


def test_dry_run_of_a_suite_starts_nothing(tmp_path: Path) -> None:
    out = tmp_path / "results"
    suite = str(tiny_suite(tmp_path))
    result = runner.invoke(
        app, ["run", "--dry-run", "--seed", "3", "--cells", "plain/*", "--out", str(out), suite]
    )
    assert result.exit_code == EXIT_PASS, result.output
    assert "2 cell(s), planned" in result.output and "seed 3" in result.output
    assert "02_version=4.3.1" in result.output
    assert "no cell matches --cells" in result.output  # modes: left out by the filter
    assert not out.exists()


def test_the_nightly_suite_validates() -> None:
    result = runner.invoke(app, ["validate", str(ROOT / "experiments/suites/nightly.yaml")])
    assert result.exit_code == EXIT_PASS, result.output
    assert "consumer-offsets-rf1" in result.output and "left out (cannot exist)" in result.output


def test_a_bad_suite_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    suite = make_tree(tmp_path, "experiments: [exp/none-*.yaml]\naxes: {cluster.colour: [x]}\n")
    result = runner.invoke(app, ["validate", str(suite)])
    assert result.exit_code == EXIT_USAGE
    assert "s.yaml: axes.cluster.colour: unknown path" in result.output
    assert "experiments[0]: 'exp/none-*.yaml' matches no file" in result.output
    result = runner.invoke(app, ["run", str(suite)])
    assert result.exit_code == EXIT_USAGE


def test_keep_cluster_is_refused_for_a_suite(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--keep-cluster", str(tiny_suite(tmp_path))])
    assert result.exit_code == EXIT_USAGE
    assert "not for a suite" in result.output


def _fake_run_plan(monkeypatch: pytest.MonkeyPatch, fake: FakeRunner) -> None:
    import harness.experiment

    def run_plan(
        plan: Plan,
        out: Path,
        report: Any,
        on_cell_done: Any,
        keep_cluster: bool = False,
        checks: Any = None,
    ) -> tuple[Path, dict[str, Any], None]:
        run_dir, summary = fake(plan, out, on_cell_done)
        return run_dir, summary, None

    monkeypatch.setattr(harness.experiment, "run_plan", run_plan)
    every_build_there(monkeypatch)


def every_build_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check before a suite runs finds every broker image and Java jar (no Docker asked)."""
    import harness.suite.builds

    probes = harness.suite.builds.Probes(
        lambda _version: True, lambda _version: True, lambda: True, lambda: True
    )
    monkeypatch.setattr(harness.suite.builds, "local_probes", lambda: probes)


@pytest.mark.parametrize(
    ("verdicts", "code"),
    [
        ({}, EXIT_PASS),
        ({"modes/04_mode=kraft_acks=all_version=4.3.1": "fail"}, EXIT_FAIL),
        ({"plain/01_version=3.9.2": "unknown"}, EXIT_INFRA),
    ],
)
def test_a_tiny_suite_end_to_end_exit_code_is_the_worst_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verdicts: dict[str, str], code: int
) -> None:
    _fake_run_plan(monkeypatch, FakeRunner(verdicts))
    out = tmp_path / "results"
    result = runner.invoke(app, ["run", "--out", str(out), str(tiny_suite(tmp_path))])
    assert result.exit_code == code, result.output
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    paths = SuitePaths(folder)
    summary = json.loads(paths.summary.read_text())
    assert [len(e["cells"]) for e in summary["experiments"]] == [2, 5]
    assert len(list(paths.experiments.iterdir())) == 2
    assert pq.read_table(out / "history.parquet").num_rows == 7
    assert "[1/2] plain" in result.output and "[7/7 cells]" in result.output
    assert f"results: {folder}" in result.output
    assert "history: appended to" in result.output


def test_an_experiment_that_breaks_does_not_stop_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_run_plan(monkeypatch, FakeRunner(raise_in={"plain"}))
    out = tmp_path / "results"
    result = runner.invoke(app, ["run", "--out", str(out), str(tiny_suite(tmp_path))])
    assert result.exit_code == EXIT_INFRA, result.output
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    summary = json.loads(SuitePaths(folder).summary.read_text())
    assert [e["verdict"] for e in summary["experiments"]] == ["unknown", "pass"]


def test_history_that_cannot_be_appended_turns_a_pass_into_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_run_plan(monkeypatch, FakeRunner())
    out = tmp_path / "results"
    (out / "history.parquet").mkdir(parents=True)
    result = runner.invoke(app, ["run", "--out", str(out), str(tiny_suite(tmp_path))])
    assert result.exit_code == EXIT_INFRA, result.output
    assert "history not appended" in result.output


def test_two_suite_runs_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "results"
    suite = str(tiny_suite(tmp_path))
    _fake_run_plan(monkeypatch, FakeRunner())
    assert runner.invoke(app, ["run", "--out", str(out / "a"), suite]).exit_code == EXIT_PASS
    _fake_run_plan(monkeypatch, FakeRunner({"plain/02_version=4.3.1": "fail"}))
    assert runner.invoke(app, ["run", "--out", str(out / "b"), suite]).exit_code == EXIT_FAIL
    (a,) = [p for p in (out / "a").iterdir() if p.is_dir()]
    (b,) = [p for p in (out / "b").iterdir() if p.is_dir()]
    result = runner.invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == EXIT_FAIL, result.output
    assert "flipped from pass: plain 02_version=4.3.1 (pass → fail)" in result.output
    assert runner.invoke(app, ["compare", str(b), str(a)]).exit_code == EXIT_PASS


@pytest.mark.parametrize(
    ("args", "code", "flaky"),
    [([], EXIT_PASS, True), (["--confirm-flips", "0"], EXIT_FAIL, False)],
)
def test_a_flip_a_rerun_contradicts_is_flaky_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], code: int, flaky: bool
) -> None:
    out, suite = tmp_path / "results", str(tiny_suite(tmp_path))
    _fake_run_plan(monkeypatch, FakeRunner())
    assert runner.invoke(app, ["run", "--out", str(out), suite]).exit_code == EXIT_PASS
    _fake_run_plan(monkeypatch, FakeRunner({"plain/01_version=3.9.2": ["fail", "pass"]}))
    result = runner.invoke(app, ["run", "--out", str(out), *args, suite])
    assert result.exit_code == code, result.output
    assert ("flaky (fails nothing): plain 01_version=3.9.2" in result.output) is flaky


def test_confirm_flips_is_for_a_suite(tmp_path: Path) -> None:
    spec = tmp_path / "one.yaml"
    spec.write_text("name: one\nproducer: {records: 10}\nexpect: {lost: 0}\n")
    result = runner.invoke(app, ["run", "--confirm-flips", "2", str(spec)])
    assert result.exit_code == EXIT_USAGE and "--confirm-flips is for a suite" in result.output
