"""The generated docs are what the generator writes: docs/incidents.md and README.md's
incident rows equal what `scripts/docs_incidents.py` renders, and README.md stays a front page."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[2]


def generator() -> ModuleType:
    """scripts/docs_incidents.py, loaded as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "docs_incidents", ROOT / "scripts" / "docs_incidents.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("docs_incidents", module)
    spec.loader.exec_module(module)
    return module


def test_the_committed_pages_equal_the_generated_ones() -> None:
    gen = generator()
    for rel, text in gen.expected(ROOT).items():
        committed = (ROOT / rel).read_text(encoding="utf-8")
        assert committed == text, f"{rel} is stale: run `python scripts/docs_generated.py`"
    assert gen.stale(ROOT) == []


def test_every_incident_has_a_headline_row_in_the_readme() -> None:
    gen = generator()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for entry in gen.catalogue(ROOT):
        assert f"| [`{entry.name}`]({entry.file}) |" in readme, entry.name


def test_a_stale_page_is_named_and_rewritten(tmp_path: Path) -> None:
    gen = generator()
    (tmp_path / "experiments" / "incidents").mkdir(parents=True)
    (tmp_path / "experiments" / "incidents" / "x.yaml").write_text(
        "name: x\nproducer: {records: 1}\nexpect: {lost: 0}\n"
        "incident: {claim: 'a | b', measured: m, safe: s}\n"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "incidents.md").write_text("old\n")
    (tmp_path / "README.md").write_text(f"# r\n\n{gen.ROWS_BEGIN}\nold\n{gen.ROWS_END}\n\ntail\n")
    assert gen.stale(tmp_path) == [gen.PAGE, gen.README]
    for rel, text in gen.expected(tmp_path).items():
        (tmp_path / rel).write_text(text)
    assert gen.stale(tmp_path) == []
    readme = (tmp_path / "README.md").read_text()
    assert "| [`x`](experiments/incidents/x.yaml) | a \\| b |" in readme
    assert readme.endswith("\n\ntail\n")
    page = (tmp_path / "docs" / "incidents.md").read_text()
    assert "| [`x`](experiments/incidents/x.yaml) | a \\| b | m | s |" in page


def test_a_readme_without_markers_is_an_error(tmp_path: Path) -> None:
    gen = generator()
    (tmp_path / "README.md").write_text("# r\n")
    with pytest.raises(ValueError, match="incident-rows"):
        gen.expected(tmp_path)


def test_the_readme_is_a_front_page() -> None:
    # issue 26: the README is what a user reads first; everything else lives in docs/
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines (at most 250: move detail to docs/)"
