"""Damaged input files at the CLI: exit 2 naming the file and what was wrong (issue 25)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.cli.options import SEED_MAX
from harness.cli.terminal import EXIT_USAGE
from harness.results.layout import figure_history
from harness.spec.load import MAX_SPEC_BYTES
from harness.spec.models import MAX_SEED
from tests.unit.index_folders import append_night, write_suite_folder
from tests.unit.suite_folders import cell_summary

runner = CliRunner()
SMALL = Path(__file__).resolve().parents[1] / "experiments" / "small-kill.yaml"


def _usage_error(args: list[str], *needles: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_USAGE, (result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    text = result.output.replace("\n", "")
    for needle in needles:
        assert needle in text, result.output
    return result.output


def test_a_non_utf8_spec_names_the_file(tmp_path: Path) -> None:
    spec = tmp_path / "binary.yaml"
    spec.write_bytes(b"name: x\n\xff\xfe\x00")
    _usage_error(["validate", str(spec)], str(spec), "not UTF-8")
    _usage_error(["run", str(spec), "--dry-run"], str(spec), "not UTF-8")


def test_a_device_or_fifo_is_not_read(tmp_path: Path) -> None:
    _usage_error(["validate", "/dev/zero"], "/dev/zero", "not a regular file")
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)  # reading it would block forever
    _usage_error(["validate", str(fifo)], str(fifo), "not a regular file")


def test_a_huge_spec_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    spec = tmp_path / "huge.yaml"
    with spec.open("wb") as f:
        f.truncate(MAX_SPEC_BYTES + 1)
    _usage_error(["validate", str(spec)], str(spec), "at most")


def test_a_key_that_is_a_list_is_a_yaml_error(tmp_path: Path) -> None:
    spec = tmp_path / "key.yaml"
    spec.write_text("? [1]\n: 2\n")
    _usage_error(["validate", str(spec)], str(spec), "a key must be a plain value")


def test_rich_markup_in_a_value_is_printed_as_written(tmp_path: Path) -> None:
    spec = tmp_path / "markup.yaml"
    spec.write_text(SMALL.read_text().replace("name: small-kill", "name: '[/x]'"))
    _usage_error(["validate", str(spec)], "[/x]")


def test_verify_of_a_binary_spec_yaml_exits_2(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "cells").mkdir(parents=True)
    (run / "spec.yaml").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xff")
    _usage_error(["verify", str(run)], "spec.yaml", "not UTF-8")


def test_the_seed_bound_is_the_same_in_the_cli_and_the_spec(tmp_path: Path) -> None:
    assert SEED_MAX == MAX_SEED
    _usage_error(["run", str(SMALL), "--dry-run", "--seed", str(MAX_SEED + 1)], "--seed")
    result = runner.invoke(app, ["run", str(SMALL), "--dry-run", "--seed", str(MAX_SEED)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("cells", "what"),
    [
        ([[1, 2]], "cells[0]: expected an object"),
        ("01_main", "cells: expected a list of cell objects"),
        ([{"cell": "01", "stalls_by_set": ["group"]}], "cells[0].stalls_by_set"),
        ([{"cell": "01", "counts": {"lost": "3"}}], "cells[0].counts.lost"),
        ([{"cell": ["01"]}], "cells[0].cell: expected a string"),
    ],
)
def test_compare_of_a_run_summary_of_the_wrong_shape(
    tmp_path: Path, cells: object, what: str
) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder, value in ((good, [cell_summary("01")]), (bad, cells)):
        folder.mkdir()
        summary = {"spec": "acks", "run_id": folder.name, "cells": value}
        (folder / "summary.json").write_text(json.dumps(summary))
    _usage_error(["compare", str(good), str(bad)], str(bad / "summary.json"), what)


def test_index_names_a_history_it_cannot_read(tmp_path: Path) -> None:
    figure_history(tmp_path).write_bytes(b"PAR1 not really")
    out = _usage_error(["index", str(tmp_path)], "history.parquet", "cannot be read")
    assert "no history.parquet" not in out


def test_index_refuses_a_history_of_other_column_types(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"suite_run": [1], "started": ["yesterday"]}), figure_history(tmp_path))
    _usage_error(["index", str(tmp_path)], "history.parquet", "suite_run is int64")


def test_index_writes_the_page_without_a_damaged_folder_and_exits_2(tmp_path: Path) -> None:
    append_night(tmp_path, 1, {"acks": [cell_summary("01")]})
    folder = write_suite_folder(tmp_path, 2, {"acks": [cell_summary("01")]}, history=False)
    summary = json.loads((folder / "summary.json").read_text())
    summary["experiments"][0]["cells"][0]["stalls_by_set"] = [5.0]
    (folder / "summary.json").write_text(json.dumps(summary))
    _usage_error(["index", str(tmp_path)], "summary.json", "stalls_by_set")
    assert (tmp_path / "index.html").is_file()  # from the history, the folder left out
