"""The command line's contract without Docker: validate, --dry-run, verify's exit codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.cli.terminal import EXIT_FAIL, EXIT_INFRA, EXIT_PASS, EXIT_USAGE
from harness.errors import ClusterStartError

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_validate_shows_cells_and_schedule() -> None:
    result = runner.invoke(app, ["validate", str(ROOT / "experiments/default-matrix.yaml")])
    assert result.exit_code == 0, result.output
    assert "8 cell(s)" in result.output
    assert "leader-of:chaos/* except coordinator-of:chaos-group" in result.output
    assert "excluded by matrix.exclude: producer.acks=0" in result.output


def test_dry_run_with_seed_and_cell_filter_starts_nothing() -> None:
    spec = ROOT / "experiments/default-matrix.yaml"
    result = runner.invoke(
        app, ["run", "--dry-run", "--seed", "5", "--cells", "*zookeeper*", str(spec)]
    )
    assert result.exit_code == 0, result.output
    assert "4 cell(s), seed 5" in result.output
    assert "_mode=kraft" not in result.output  # no kraft cell (excluded ones are listed)


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


# --- verify's exit codes: 2 bad spec or usage, 3 infrastructure or unknown, 1 fail, 0 pass --


def _result_folder(tmp_path: Path, spec_text: str, cells: list[str]) -> Path:
    run = tmp_path / "run"
    (run / "cells").mkdir(parents=True)
    (run / "spec.yaml").write_text(spec_text)
    for cell in cells:
        (run / "cells" / cell).mkdir()
    return run


def test_verify_a_result_folder_with_a_bad_spec_exits_2(tmp_path: Path) -> None:
    run = _result_folder(tmp_path, "name: x\nproducer: {acks: 2}\n", ["01_main"])
    result = runner.invoke(app, ["verify", str(run)])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "producer.acks" in result.output


def test_verify_cells_that_are_not_of_the_spec_exits_2(tmp_path: Path) -> None:
    run = _result_folder(tmp_path, "name: x\nproducer: {records: 5}\n", ["07_other"])
    result = runner.invoke(app, ["verify", str(run)])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "07_other" in result.output


def test_verify_infrastructure_error_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.verdict.run_verify

    def broken(run_dir: Path) -> dict[str, Any]:
        raise ClusterStartError("the disk went away")

    monkeypatch.setattr(harness.verdict.run_verify, "verify_run", broken)
    result = runner.invoke(app, ["verify", str(tmp_path)])
    assert result.exit_code == EXIT_INFRA, result.output
    assert "the disk went away" in result.output


def test_verify_an_unwritable_folder_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.verdict.run_verify

    def unwritable(run_dir: Path) -> dict[str, Any]:
        raise PermissionError(13, "Permission denied", str(run_dir / "summary.json"))

    monkeypatch.setattr(harness.verdict.run_verify, "verify_run", unwritable)
    result = runner.invoke(app, ["verify", str(tmp_path)])
    assert result.exit_code == EXIT_INFRA, result.output
    assert "Permission denied" in result.output


@pytest.mark.parametrize(
    ("verdict", "code"), [("pass", EXIT_PASS), ("fail", EXIT_FAIL), ("unknown", EXIT_INFRA)]
)
def test_verify_exit_code_follows_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verdict: str, code: int
) -> None:
    import harness.verdict.run_verify

    def verified(run_dir: Path) -> dict[str, Any]:
        return {"verdict": verdict, "cells": [{"cell": "01_main", "verdict": verdict}]}

    monkeypatch.setattr(harness.verdict.run_verify, "verify_run", verified)
    result = runner.invoke(app, ["verify", str(tmp_path)])
    assert result.exit_code == code, result.output


def test_version_is_the_package_version() -> None:
    import importlib.metadata

    from harness._version import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"kafka-chaos {__version__}"
    assert importlib.metadata.version("kafka-chaos") == __version__


def test_verify_loads_no_docker_and_no_kafka_client(tmp_path: Path) -> None:
    """`harness verify` is judging only: measured the way a user would (-X importtime), on a
    folder that is not a result folder (exit 2 after the command's imports are done)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness", "verify", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == EXIT_USAGE, done.stderr[-2000:]
    imported = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "harness.verdict.run_verify" in imported  # the measurement saw the command
    loaded = sorted(m for m in imported if m.split(".")[0] in _RUN_SIDE)
    assert loaded == [], loaded


_RUN_SIDE = ("docker", "testcontainers", "confluent_kafka")
