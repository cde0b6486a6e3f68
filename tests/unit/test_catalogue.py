"""The incident catalogue: rows from the experiment files, the docs' table equal to them."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from harness.cli import app
from harness.report.catalogue import catalogue, markdown, readme_section

ROOT = Path(__file__).parents[2]


def test_the_docs_table_is_the_generated_one() -> None:
    # docs/incidents.md holds the table between the catalogue's markers (README.md holds only
    # the headline rows: tests/unit/test_docs_incidents.py)
    section = readme_section((ROOT / "docs" / "incidents.md").read_text(encoding="utf-8"))
    assert section is not None, "docs/incidents.md has no incidents:begin/end markers"
    assert section == markdown(catalogue(ROOT)), (
        "docs/incidents.md's incident catalogue is stale: run `python scripts/docs_generated.py`"
    )


def test_every_incident_experiment_has_a_row_with_a_claim_and_the_safe_setting() -> None:
    entries = {e.file: e for e in catalogue(ROOT)}
    for path in sorted((ROOT / "experiments" / "incidents").glob("*.yaml")):
        entry = entries.get(path.relative_to(ROOT).as_posix())
        assert entry is not None, f"{path.name} has no incident: section"
        assert entry.claim and entry.safe and entry.measured, path.name


def test_markdown_escapes_pipes_and_joins_lines(tmp_path: Path) -> None:
    (tmp_path / "experiments" / "incidents").mkdir(parents=True)
    (tmp_path / "experiments" / "incidents" / "x.yaml").write_text(
        "name: x\nproducer: {records: 1}\nexpect: {lost: 0}\n"
        "incident: {claim: 'a | b', measured: \"one\\ntwo\", safe: s}\n"
    )
    table = markdown(catalogue(tmp_path))
    assert "| [`x`](experiments/incidents/x.yaml) | a \\| b | one two | s |" in table


def test_incidents_command_prints_the_markdown() -> None:
    result = CliRunner().invoke(app, ["incidents", "--markdown"])
    assert result.exit_code == 0, result.output
    assert "consumer-offsets-rf1" in result.output
