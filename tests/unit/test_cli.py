"""The command line's contract without Docker: validate, --dry-run, exit code 2 on bad input."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from harness.cli import EXIT_USAGE, app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_validate_shows_cells_and_schedule() -> None:
    result = runner.invoke(app, ["validate", str(ROOT / "experiments/default-matrix.yaml")])
    assert result.exit_code == 0, result.output
    assert "12 cell(s)" in result.output
    assert "leader-of:chaos/0" in result.output
    assert "coordinator-of:chaos-group" in result.output


def test_dry_run_with_seed_and_cell_filter_starts_nothing() -> None:
    spec = ROOT / "experiments/default-matrix.yaml"
    result = runner.invoke(
        app, ["run", "--dry-run", "--seed", "5", "--cells", "*zookeeper*", str(spec)]
    )
    assert result.exit_code == 0, result.output
    assert "6 cell(s), seed 5" in result.output
    assert "mode=kraft" not in result.output


def test_bad_spec_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nproducer: {acks: 2}\nfaults: [{at_s: 1, kind: explode}]\n")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == EXIT_USAGE
    assert "bad.yaml" in result.output
    assert "producer.acks" in result.output and "faults[0].kind" in result.output


def test_missing_spec_and_unknown_cells_exit_2(tmp_path: Path) -> None:
    assert runner.invoke(app, ["validate", str(tmp_path / "nope.yaml")]).exit_code == EXIT_USAGE
    spec = str(ROOT / "experiments/default-matrix.yaml")
    result = runner.invoke(app, ["run", "--dry-run", "--cells", "no-such-cell", spec])
    assert result.exit_code == EXIT_USAGE
    assert "01_acks=0" in result.output  # the error lists the cell ids


def test_verify_a_folder_that_is_not_a_result_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["verify", str(tmp_path)])
    assert result.exit_code == EXIT_USAGE
    assert "no spec.yaml" in result.output


def test_spark_source_option_owned_by_a_spec_key_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "spark.yaml"
    spec.write_text(
        "name: s\nproducer: {records: 10}\n"
        "consumer: {kind: spark, config: {failOnDataLoss: 'false'}}\nexpect: {lost: 0}\n"
    )
    result = runner.invoke(app, ["run", "--dry-run", str(spec)])
    assert result.exit_code == EXIT_USAGE
    assert "consumer.config.failOnDataLoss" in result.output
    assert "consumer.fail_on_data_loss" in result.output
