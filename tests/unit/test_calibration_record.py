"""The calibration record (no Docker): what it keeps of a calibration.json, merging, its
headline, and today's bounds judged against its figures (harness.verdict.calibrated)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.experiment import make_plan
from harness.results.calibration_record import (
    headline,
    merged,
    read_record,
    record_path,
    write_record,
)
from harness.verdict.calibrated import calibrated_bounds, unknown_cells
from harness.verdict.calibration import calibration
from tests.unit.suite_folders import write_run
from tests.unit.test_calibration import CELL_1, CELL_2, SPEC, make_spec, summary
from tests.unit.test_docs_generated import script


def calibrate(
    tmp_path: Path,
    name: str,
    runs: list[list[dict[str, Any]]],
    load: int,
    started: str,
    spec: str = SPEC,
) -> dict[str, Any]:
    plan = make_spec(tmp_path, spec)
    folders: list[Path | str] = [
        write_run(tmp_path / f"{name}{i}", "cal", cells) for i, cells in enumerate(runs, 1)
    ]
    info = {
        "spec": "cal",
        "file": "cal.yaml",
        "seed": 5,
        "runs": len(runs),
        "load": load,
        "cells_filter": None,
        "started": started,
        "duration_s": 1.0,
        "run_folders": [
            {"run": i, "loadavg_start": [1.5, 1, 1], "loadavg_end": [2.25 + load, 1, 1]}
            for i in range(1, len(runs) + 1)
        ],
    }
    return calibration(info, plan.cells, folders)


def quiet(tmp_path: Path, spec: str = SPEC) -> dict[str, Any]:
    runs = [
        [summary(CELL_1, 60.1, 11.2), summary(CELL_2, 80.0, 5.0)],
        [summary(CELL_1, 61.0, 9.0), summary(CELL_2, 81.0, 6.0)],
    ]
    return calibrate(tmp_path, "q", runs, 0, "2026-11-28T01:00:00+00:00", spec)


def loaded(tmp_path: Path) -> dict[str, Any]:
    overloaded = {"stall_s.group": "machine overloaded for 12 s"}
    runs = [[summary(CELL_1, None, 30.0, overloaded=overloaded), summary(CELL_2, 85.0, 4.0)]]
    return calibrate(tmp_path, "l", runs, 2, "2026-11-28T02:00:00+00:00")


def rows(record: dict[str, Any], tmp_path: Path, spec: str = SPEC) -> dict[tuple[str, str], Any]:
    cells = make_spec(tmp_path, spec).cells
    return {(r.cell, r.metric): r for r in calibrated_bounds(record, cells)}


def test_the_record_keeps_figures_verdicts_and_flags_and_merges_once(tmp_path: Path) -> None:
    q, ld = quiet(tmp_path), loaded(tmp_path)
    record = merged(merged(None, q), ld)
    assert merged(record, q) == record  # recording the same calibration twice changes nothing
    assert [c["load"] for c in record["calibrations"]] == [0, 2]
    (cell,) = [c for c in record["calibrations"][1]["cells"] if c["cell"] == CELL_1]
    stall = next(b for b in cell["bounds"] if b["metric"] == "stall_s.group")
    assert stall["figures"] == [None]
    assert stall["overloaded_runs"] == [1] and stall["undecided_runs"] == [1]
    assert cell["verdicts"] == ["pass"] and cell["unknown_why"] == [None]  # kept, judged
    assert record["calibrations"][0]["loadavg_max"] == 2.25
    assert headline(record) == (
        "calibrated 2026-11-28: 2 quiet run(s) (load ≤ 2.25), 1 beside 2 CPU burner(s)"
    )
    path = tmp_path / "experiments" / "calibrations" / "cal.json"
    write_record(path, record)
    assert read_record(path) == record
    assert record_path(tmp_path / "experiments" / "incidents" / "cal.yaml", "cal") == path


def test_a_damaged_record_is_named(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    path.write_text('{"spec": "cal"}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"cal\.json: not a calibration record"):
        read_record(path)
    assert read_record(tmp_path / "none.json") is None
    assert headline({"spec": "cal", "calibrations": []}) == (
        "calibrated: no calibration recorded yet"
    )


def test_todays_bound_is_judged_against_the_recorded_figures(tmp_path: Path) -> None:
    record = merged(merged(None, quiet(tmp_path)), loaded(tmp_path))
    by = rows(record, tmp_path)
    # `>= 54` against 60.1 and 61: 10 %, thin; a count held
    floor = by[(CELL_1, "max_stall_s")]
    assert floor.quiet == [60.1, 61.0] and floor.margin == pytest.approx(0.1015, abs=1e-3)
    assert floor.status == "thin" and floor.before is None
    assert by[(CELL_1, "lost")].status == "ok"
    # beside burners: the stall undecided and flagged, a pass elsewhere
    stall = by[(CELL_1, "stall_s.group")]
    assert stall.loaded == [None] and stall.loaded_verdicts == ["unknown"]
    assert stall.loaded_overloaded == 1 and stall.burners == [2]
    # `< 15.3` beside burners with 30.0 (not flagged): a fail the docs must show
    assert by[(CELL_1, "unavailable_s")].status == "failed"


def test_a_bound_changed_since_keeps_its_old_margin_beside_the_new(tmp_path: Path) -> None:
    record = merged(None, quiet(tmp_path))
    changed = SPEC.replace('max_stall_s: ">= 54"', 'max_stall_s: ">= 42"')
    floor = rows(record, tmp_path, changed)[(CELL_1, "max_stall_s")]
    assert floor.bound == ">= 42" and floor.before == ">= 54"
    assert floor.margin == pytest.approx(1 - 42 / 60.1, abs=1e-3)
    assert floor.margin_before == pytest.approx(0.1015, abs=1e-3)
    assert floor.status == "ok"


def test_a_bound_no_quiet_run_measured_is_unmeasured(tmp_path: Path) -> None:
    record = merged(None, loaded(tmp_path))
    assert rows(record, tmp_path)[(CELL_2, "stall_s.group")].status == "unmeasured"


def test_a_record_naming_a_cell_the_spec_lost_is_stale(tmp_path: Path) -> None:
    record = merged(None, quiet(tmp_path))
    cells = make_plan(make_spec_path(tmp_path, SPEC.split("matrix:")[0])).cells
    assert unknown_cells(record, cells) == [CELL_1, CELL_2]


def make_spec_path(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "other.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_damaged_record_stops_the_catalogue_with_its_name(tmp_path: Path) -> None:
    from harness.errors import ConfigError
    from harness.report.catalogue import catalogue

    root = Path(__file__).resolve().parents[2]
    folder = tmp_path / "experiments" / "incidents"
    folder.mkdir(parents=True)
    spec = root / "experiments" / "incidents" / "unclean-election.yaml"
    (folder / spec.name).write_text(spec.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "experiments" / "calibrations").mkdir()
    bad = tmp_path / "experiments" / "calibrations" / "unclean-election.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unclean-election\.json: not JSON"):
        catalogue(tmp_path)


ALLOW_SPEC = SPEC.replace("  recovered: true\n", "  recovered: true\n  broker_errors: 0\n")
LEADER_LINE = (
    "[2026-11-29 19:31:02,411] ERROR [GroupCoordinator id=2] Failed to load metadata from "
    "__consumer_offsets-41 ... because the partition is not online or is no longer the leader"
)


def with_allow(spec: str, *patterns: str) -> str:
    listed = ", ".join(f'"{p}"' for p in patterns)
    return spec.replace("expect:\n", f"broker_logs: {{allow: [{listed}]}}\nexpect:\n")


def errors_run(tmp_path: Path) -> dict[str, Any]:
    """One quiet run whose cell 1 counted 3 ERRORs of one template, cell 2 none."""
    rows = [
        {
            "logger": "kafka.coordinator.group.GroupCoordinator",
            "template": "[GroupCoordinator id=<n>] Failed to load ... no longer the leader",
            "level": "ERROR",
            "count": 3,
            "nodes": ["2"],
            "first_ts": 1,
            "example": LEADER_LINE,
            "detail": "",
            "allowed": False,
        }
    ]
    runs = [
        [
            summary(CELL_1, 60.1, 11.2, broker_errors=3, broker_errors_by_template=rows),
            summary(CELL_2, 80.0, 5.0, broker_errors=0, broker_errors_by_template=[]),
        ]
    ]
    return calibrate(tmp_path, "e", runs, 0, "2026-11-29T19:28:00+00:00", ALLOW_SPEC)


def test_broker_errors_are_judged_again_under_an_allow_list_added_since(tmp_path: Path) -> None:
    record = merged(None, errors_run(tmp_path))
    (cell,) = [c for c in record["calibrations"][0]["cells"] if c["cell"] == CELL_1]
    assert cell["broker_logs_allow"] == []
    errors = next(b for b in cell["bounds"] if b["metric"] == "broker_errors")
    assert errors["figures"] == [3] and errors["verdicts"] == ["fail"]
    assert [r["count"] for r in errors["counted"][0]] == [3]
    # the same spec today: still 3, still a failure
    assert rows(record, tmp_path, ALLOW_SPEC)[(CELL_1, "broker_errors")].status == "failed"
    # the line allowed since, with its evidence: counted again, 0, no run judged otherwise kept
    allowed = with_allow(ALLOW_SPEC, "is no longer the leader")
    row = rows(record, tmp_path, allowed)[(CELL_1, "broker_errors")]
    assert row.quiet == [0.0] and row.quiet_verdicts == ["pass"]
    assert row.rejudged == 1 and row.status == "ok"
    # an allow entry for another line changes nothing
    other = rows(record, tmp_path, with_allow(ALLOW_SPEC, "Disk error"))
    assert other[(CELL_1, "broker_errors")].status == "failed"
    assert other[(CELL_1, "broker_errors")].rejudged == 0


def test_an_older_record_without_templates_is_set_apart_not_passed(tmp_path: Path) -> None:
    record = merged(None, errors_run(tmp_path))
    for cell in record["calibrations"][0]["cells"]:
        for b in cell["bounds"]:
            b.pop("counted", None)  # as records were before they kept the templates
    allowed = with_allow(ALLOW_SPEC, "is no longer the leader")
    row = rows(record, tmp_path, allowed)[(CELL_1, "broker_errors")]
    assert row.older_allow == ["fail"] and row.quiet == []
    assert row.status == "older-allow"  # neither a pass nor a failure today's spec would give
    # and the docs' cell does not say it holds: no run left that today's list could judge
    margin = script("docs_calibration")._margin(row)
    assert margin == "unmeasured; 1 run(s) failed under an allow-list changed since"
    # a run that counted nothing needs no templates: 0 under any allow-list
    assert rows(record, tmp_path, allowed)[(CELL_2, "broker_errors")].quiet == [0.0]
    # with no allow-list recorded either, nothing says it changed: judged as recorded
    for cell in record["calibrations"][0]["cells"]:
        cell.pop("broker_logs_allow")
    assert rows(record, tmp_path, allowed)[(CELL_1, "broker_errors")].status == "failed"


def test_an_undecided_broker_errors_figure_stays_undecided(tmp_path: Path) -> None:
    record = merged(None, errors_run(tmp_path))
    (cell,) = [c for c in record["calibrations"][0]["cells"] if c["cell"] == CELL_1]
    errors = next(b for b in cell["bounds"] if b["metric"] == "broker_errors")
    errors.update(figures=[None], verdicts=["unknown"], counted=[None])  # no logs saved
    row = rows(record, tmp_path, with_allow(ALLOW_SPEC, "is no longer the leader"))
    assert row[(CELL_1, "broker_errors")].older_allow == []
    assert row[(CELL_1, "broker_errors")].quiet_verdicts == ["unknown"]
