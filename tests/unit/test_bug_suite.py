"""The bug suite: a `bug:` section's rule over its cells, and docs/bugs.md's table from the
files and their calibration records (known answers on hand-built records)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.bug_table import bug_entries, markdown
from harness.spec import load_spec
from harness.spec.load import SpecError
from harness.spec.matrix import expand_cells

ROOT = Path(__file__).parents[2]

BUG = """
bug:
  id: KAFKA-1
  url: https://issues.apache.org/jira/browse/KAFKA-1
  affected: ["3.9.2"]
  fixed: ["4.3.1"]
  mechanism: the broker forgets
  status: reproduced
"""
GOOD = (
    "name: b\nproducer: {records: 1}\nexpect: {lost: 0}\n"
    "matrix:\n  cluster.version: ['3.9.2', '4.3.1']\n  expect:\n"
    "    - when: {cluster.version: '3.9.2'}\n      expect: {lost: '>= 1'}\n" + BUG
)


def _cells(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "b.yaml"
    path.write_text(text)
    return [c.id for c in expand_cells(load_spec(path), str(path))]


def _problems(tmp_path: Path, text: str) -> str:
    with pytest.raises(SpecError) as err:
        _cells(tmp_path, text)
    return str(err.value)


def test_a_bug_crossing_affected_and_fixed_with_their_own_expectations_validates(
    tmp_path: Path,
) -> None:
    assert _cells(tmp_path, GOOD) == ["01_version=3.9.2", "02_version=4.3.1"]


def test_a_bug_without_a_fixed_release_in_its_matrix_is_refused(tmp_path: Path) -> None:
    text = GOOD.replace("['3.9.2', '4.3.1']", "['3.9.2']").replace(
        "  expect:\n    - when: {cluster.version: '3.9.2'}\n      expect: {lost: '>= 1'}\n", ""
    )
    assert "no cell runs a fixed release (4.3.1)" in _problems(tmp_path, text)


def test_a_release_the_section_does_not_place_is_named(tmp_path: Path) -> None:
    text = GOOD.replace("['3.9.2', '4.3.1']", "['3.9.2', '4.3.1', '3.8.1']")
    assert "runs 3.8.1, which is in neither bug.affected" in _problems(tmp_path, text)


def test_the_same_expectations_on_both_sides_cannot_tell_the_bug_apart(tmp_path: Path) -> None:
    text = GOOD.replace(
        "  expect:\n    - when: {cluster.version: '3.9.2'}\n      expect: {lost: '>= 1'}\n", ""
    )
    assert "an affected cell expects what a fixed cell expects" in _problems(tmp_path, text)


def test_a_version_both_affected_and_fixed_and_a_bad_status_are_refused(tmp_path: Path) -> None:
    text = GOOD.replace('fixed: ["4.3.1"]', 'fixed: ["4.3.1", "3.9.2"]')
    assert "3.9.2 listed as both affected and fixed" in _problems(tmp_path, text)
    text = GOOD.replace("status: reproduced", "status: maybe")
    assert "bug.status" in _problems(tmp_path, text)


def _record(tmp_path: Path, cells: dict[str, list[str]], load: int = 0) -> None:
    folder = tmp_path / "experiments" / "calibrations"
    folder.mkdir(parents=True, exist_ok=True)
    calibration = {
        "started": f"2026-12-0{1 + load}T00:00:00+00:00",
        "load": load,
        "runs": 3,
        "cells": [{"cell": c, "verdicts": v, "bounds": []} for c, v in cells.items()],
    }
    path = folder / "b.json"
    old = json.loads(path.read_text())["calibrations"] if path.exists() else []
    path.write_text(json.dumps({"spec": "b", "calibrations": [*old, calibration]}))


def test_the_table_counts_quiet_runs_per_release_and_judges_the_status(tmp_path: Path) -> None:
    (tmp_path / "experiments" / "bugs").mkdir(parents=True)
    (tmp_path / "experiments" / "bugs" / "b.yaml").write_text(GOOD)
    ids = _cells(tmp_path, GOOD)
    (entry,) = bug_entries(tmp_path)
    assert [t.text() for t in entry.tallies] == ["3.9.2: not run", "4.3.1: not run"]
    assert not entry.reproduced_by_runs
    _record(tmp_path, {ids[0]: ["pass", "fail", "pass"], ids[1]: ["pass"] * 3})
    _record(tmp_path, {ids[0]: ["fail"] * 3, ids[1]: ["fail"] * 3}, load=2)  # burners: not counted
    (entry,) = bug_entries(tmp_path)
    assert [t.text() for t in entry.tallies] == ["3.9.2: shown 2/3", "4.3.1: held 3/3"]
    assert entry.reproduced_by_runs
    table = markdown([entry])
    assert "| [KAFKA-1](https://issues.apache.org/jira/browse/KAFKA-1) | the broker forgets |" in (
        table
    )
    assert "3.9.2: shown 2/3<br>4.3.1: held 3/3 | reproduced |" in table
    # one fixed run that broke, and the record no longer bears the status out
    _record(tmp_path, {ids[1]: ["pass", "pass", "fail"]})
    (entry,) = bug_entries(tmp_path)
    assert [t.text() for t in entry.tallies][1] == "4.3.1: held 2/3"
    assert not entry.reproduced_by_runs


def test_a_file_in_the_bug_folder_without_a_bug_section_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "experiments" / "bugs").mkdir(parents=True)
    (tmp_path / "experiments" / "bugs" / "x.yaml").write_text(
        "name: x\nproducer: {records: 1}\nexpect: {lost: 0}\n"
    )
    with pytest.raises(Exception, match="no `bug:` section"):
        bug_entries(tmp_path)


def test_every_shipped_bug_marked_reproduced_is_borne_out_by_its_quiet_runs() -> None:
    entries = bug_entries(ROOT)
    for e in entries:
        if e.bug.status == "reproduced":
            assert e.reproduced_by_runs, (
                f"{e.file}: status reproduced, but its quiet runs say "
                + "; ".join(t.text() for t in e.tallies)
            )
