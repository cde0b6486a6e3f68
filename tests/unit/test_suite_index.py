"""results/index.html built from hand-built suite folders and history (the page model, the
`index` verb, the suite runner writing it); the browser test is test_index_browser.py."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from urllib.parse import unquote

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.cli.terminal import EXIT_PASS, EXIT_USAGE
from harness.errors import ConfigError
from harness.report.index_page import CellView, IndexPage, render_index
from harness.results.layout import figure_history
from harness.suite.index import build_index, write_index
from harness.suite.runner import run_suite
from tests.unit.index_folders import append_night, nightly_results, run_id, write_suite_folder
from tests.unit.suite_folders import FakeRunner, cell_summary
from tests.unit.test_suite_runner import plan

runner = CliRunner()


def by_cell(page: IndexPage) -> dict[str, CellView]:
    return {f"{c.experiment}/{c.cell}": c for c in page.cells}


def test_the_latest_run_what_changed_and_links(tmp_path: Path) -> None:
    latest = nightly_results(tmp_path)
    page = build_index(tmp_path)
    assert (page.suite, page.run_id, page.verdict) == ("nightly", run_id(10), "fail")
    assert page.previous_run == run_id(9) and page.nights == 7 and not page.notes
    assert page.duration == "1 h 02 min" and page.started == "2026-11-11T01:00:00+00:00"
    cells = by_cell(page)
    acks1, acks2 = cells["acks/01_acks=1"], cells["acks/02_acks=all"]
    rf1, rf3 = cells["offsets/01_rf=1"], cells["offsets/02_rf=3"]
    assert acks1.flipped_from_pass and [f.name for f in acks1.flags] == ["lost"]
    assert acks1.flags[0].note == "lost 12: above the last 7 night(s) (all 0)"
    # the group's stall says what max_stall_s says: flagged once
    assert [f.name for f in acks2.flags] == ["max_stall_s"] and not acks2.flipped
    assert [f.text for f in acks2.columns] == ["0", "0", "0", "30.0", "1.0"]
    assert [f.flagged for f in acks2.columns] == [False, False, False, True, False]
    assert rf1.flipped and not rf1.flipped_from_pass and not rf1.flags
    assert rf3.new and not rf3.changed
    assert [c.cell for c in page.changed] == ["01_acks=1", "02_acks=all", "01_rf=1"]
    # links are relative to index.html and lead to the files
    for c in page.cells:
        assert c.report_href is not None and (tmp_path / unquote(c.report_href)).is_file()
    assert acks1.report_href == (
        f"{latest.name}/experiments/{run_id(10)}-acks/cells/01_acks=1/report.html"
    )
    assert [label for label, _ in page.links] == [
        "summary.md",
        "junit.xml",
        "suite.yaml",
        "history.parquet",
    ]
    for e in page.experiments:
        assert e.run_href is not None and (tmp_path / unquote(e.run_href)).is_file()
        assert e.trend_svg is not None and e.trend_svg.startswith("<svg")
    assert [r.run_id for r in page.earlier] == [run_id(n) for n in range(9, 0, -1)]
    assert page.earlier[0].href is None and page.earlier[0].verdict == "fail"


def test_a_change_of_harness_since_the_previous_run_is_said(tmp_path: Path) -> None:
    """A flip across a change of harness may be ours: the page says the commit changed."""
    before, after = "6048c915ca3e65d17a16a188dce28ef70d191ac1", "56b6543" + "0" * 33
    append_night(tmp_path, 1, {"acks": [cell_summary("01")]}, harness=before)
    write_suite_folder(tmp_path, 2, {"acks": [cell_summary("01", "fail")]}, harness=after)
    page = build_index(tmp_path)
    assert (page.harness, page.previous_harness) == (after, before) and page.harness_changed
    html = render_index(page)
    assert 'id="harness-changed"' in html and "6048c915ca3e" in html
    assert f'<code id="harness">{after[:12]}</code>' in html
    # the same commit, or a night that does not say: nothing to say
    write_suite_folder(tmp_path, 3, {"acks": [cell_summary("01")]}, harness=after)
    assert not build_index(tmp_path).harness_changed
    write_suite_folder(tmp_path, 4, {"acks": [cell_summary("01")]})
    with warnings.catch_warnings():  # four nights over three days: daily ticks, no warning
        warnings.simplefilter("error")
        page = build_index(tmp_path)
    assert page.experiments[0].trend_svg is not None  # (a warning raised would leave it out)
    assert page.harness is None and not page.harness_changed
    assert 'id="harness' not in render_index(page)


def test_nights_widens_the_range(tmp_path: Path) -> None:
    nightly_results(tmp_path)
    page = build_index(tmp_path, nights=9)  # night 1 (30 s) is in the range now
    assert not by_cell(page)["acks/02_acks=all"].flags


def test_the_first_run_has_nothing_to_compare(tmp_path: Path) -> None:
    write_suite_folder(tmp_path, 1, {"acks": [cell_summary("01"), cell_summary("02", "fail")]})
    page = build_index(tmp_path)
    assert page.previous_run is None and not page.changed and page.earlier == []
    assert all(c.new for c in page.cells)
    html = render_index(page)
    assert "nothing to compare with yet" in html and 'data-change="new"' not in html


def test_earlier_suite_folders_count_without_the_history(tmp_path: Path) -> None:
    write_suite_folder(tmp_path, 1, {"acks": [cell_summary("01")]}, history=False)
    write_suite_folder(tmp_path, 2, {"acks": [cell_summary("01", "fail", lost=4)]}, history=False)
    page = build_index(tmp_path)
    (cell,) = page.cells
    assert cell.flipped_from_pass and cell.flags[0].name == "lost"
    assert page.earlier[0].href == f"{run_id(1)}/summary.md"


def test_other_suites_folders_are_not_the_past(tmp_path: Path) -> None:
    write_suite_folder(tmp_path, 1, {"acks": [cell_summary("01", "fail")]}, suite="weekly")
    write_suite_folder(tmp_path, 2, {"acks": [cell_summary("01")]})
    page = build_index(tmp_path)
    assert page.suite == "nightly" and page.previous_run is None


def test_history_alone_without_folders(tmp_path: Path) -> None:
    append_night(tmp_path, 1, {"acks": [cell_summary("01")]})
    append_night(tmp_path, 2, {"acks": [cell_summary("01", "fail", lost=2)]})
    page = build_index(tmp_path)
    assert page.run_id == run_id(2) and page.previous_run == run_id(1)
    (cell,) = page.cells
    assert cell.flipped_from_pass and cell.report_href is None
    assert any("not here" in n for n in page.notes)


def test_an_unreadable_history_is_noted_and_the_page_still_written(tmp_path: Path) -> None:
    write_suite_folder(tmp_path, 1, {"acks": [cell_summary("01")]}, history=False)
    figure_history(tmp_path).write_text("not parquet")
    page = build_index(tmp_path)
    assert page.cells and any("history.parquet cannot be read" in n for n in page.notes)
    assert write_index(tmp_path).is_file()


def test_nothing_to_index_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nothing to index"):
        build_index(tmp_path)
    result = runner.invoke(app, ["index", str(tmp_path)])
    assert result.exit_code == EXIT_USAGE and "nothing to index" in result.output


def test_the_index_verb_writes_the_page(tmp_path: Path) -> None:
    nightly_results(tmp_path)
    result = runner.invoke(app, ["index", str(tmp_path), "--nights", "9"])
    assert result.exit_code == EXIT_PASS, result.output
    html = (tmp_path / "index.html").read_text()
    assert f"index: {tmp_path / 'index.html'}" in result.output.replace("\n", "")
    assert "last 9 night(s)" in html and html.count("<svg") == 2
    assert not list(tmp_path.glob(".index.html.*"))  # replaced whole, no temp file left


def test_every_suite_run_writes_the_index(tmp_path: Path) -> None:
    said: list[str] = []
    out = tmp_path / "results"
    first = run_suite(plan(tmp_path), out, FakeRunner(), said.append)
    assert first.index == out / "index.html" and first.index_error == ""
    second = run_suite(plan(tmp_path), out, FakeRunner({"plain/01_version=3.9.2": "fail"}), print)
    assert second.index == out / "index.html"
    page = build_index(out)
    assert page.run_id == second.folder.name and page.previous_run == first.folder.name
    assert [c.cell for c in page.changed] == ["01_version=3.9.2"]
    assert page.changed[0].flipped_from_pass


def test_a_page_that_cannot_be_written_does_not_fail_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(results: Path, nights: int = 7) -> Path:
        raise RuntimeError("template went missing")

    monkeypatch.setattr("harness.suite.runner.write_index", broken)
    result = run_suite(plan(tmp_path), tmp_path / "results", FakeRunner(), print)
    assert result.index is None and "template went missing" in result.index_error
    assert result.history is not None
    summary = json.loads((result.folder / "summary.json").read_text())
    assert summary["verdict"] == "pass"
