"""The index page's explore section: the explore runs' folders directly under the results
folder (`harness explore`'s default `results/<UTC start>-explore-<spec>`, or the nightly's),
the newest of each spec, as ExploreView. A folder whose summary.json is an explore summary
that cannot be read is left out, noted and listed as damaged, like a suite folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import ValidationError

from harness.explore.coverage import PHASES, coverage_grid
from harness.explore.states import STATES
from harness.explore.summary import EXPLORE_SUMMARY, ExploreSummary, read_summary
from harness.report.index_page import ExploreView
from harness.results.layout import SuitePaths
from harness.suite.index_inputs import Damage

# The keys only an explore run's summary.json has (a run's or a suite's has none of them).
EXPLORE_KEYS = ("trials", "coverage", "violations", "need")


def _href(*parts: str) -> str:
    return "/".join(quote(p, safe="=,+@") for p in parts)


def _looks_explored(path: Path) -> bool:
    try:
        doc: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and all(k in doc for k in EXPLORE_KEYS)


def explore_folders(
    results: Path, notes: list[str], damaged: list[Damage]
) -> list[tuple[Path, ExploreSummary]]:
    """The newest explore run of each spec under `results` (by its `started`), by spec name."""
    newest: dict[str, tuple[Path, ExploreSummary]] = {}
    folders = sorted(p for p in results.iterdir() if p.is_dir()) if results.is_dir() else []
    for folder in folders:
        path = folder / EXPLORE_SUMMARY
        if SuitePaths(folder).suite.is_file() or not _looks_explored(path):
            continue
        try:
            summary = read_summary(path)
        except (OSError, ValueError, ValidationError) as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            notes.append(f"{folder.name}/{EXPLORE_SUMMARY} left out: {why}")
            damaged.append(Damage(f"{path}: not an explore summary ({why})"))
            continue
        if summary.spec not in newest or newest[summary.spec][1].started <= summary.started:
            newest[summary.spec] = (folder, summary)
    return [newest[spec] for spec in sorted(newest)]


def _repro_href(results: Path, folder: Path, file: str | None) -> str | None:
    """A violation's minimal-repro.yaml as an href from index.html (None: not under
    `results`). The summary names it as explore wrote it (relative to where it ran): found
    by its place in the explore folder (`violations/...`) when the folder has moved."""
    if not file:
        return None
    path = Path(file)
    candidates = [path] if path.is_absolute() else []
    if "violations" in path.parts:
        candidates.append(folder / Path(*path.parts[path.parts.index("violations") :]))
    for candidate in candidates:
        try:
            rel = candidate.resolve().relative_to(results.resolve())
        except (ValueError, OSError):
            continue
        if (results / rel).is_file():
            return _href(*rel.parts)
    return None


def _spent(budget: dict[str, Any]) -> str:
    cells, elapsed = budget.get("cells_run"), budget.get("elapsed_s")
    minutes = f", {round(elapsed / 60)} min" if isinstance(elapsed, int | float) else ""
    return f"{cells if isinstance(cells, int) else '?'} cell(s) run{minutes}"


def explore_view(results: Path, folder: Path, summary: ExploreSummary) -> ExploreView:
    violations = []
    for v in summary.violations:
        shrunk = v.shrunk
        said = (
            f"trial {v.trial} ({v.cell}), not shrunk"
            if shrunk is None
            else f"trial {v.trial} ({v.cell}), shrunk {len(v.original)} -> "
            f"{len(shrunk.faults)} fault(s), reproduced {shrunk.reproduced}"
        )
        violations.append(
            (
                v.property,
                said,
                _repro_href(results, folder, None if shrunk is None else shrunk.file),
            )
        )
    rows = [(r.kind, r.role, r.phase, r.trials) for r in summary.coverage]
    states = [*STATES, *(s for s in summary.reached if s not in STATES)]
    return ExploreView(
        spec=summary.spec,
        run=folder.name,
        started=summary.started,
        verdict=summary.verdict,
        trials=len(summary.trials),
        spent=_spent(summary.budget),
        summary_href=_href(*folder.relative_to(results).parts, EXPLORE_SUMMARY),
        violations=violations,
        phases=PHASES,
        coverage=[(k, r, [c[p] for p in PHASES]) for k, r, c in coverage_grid(rows)],
        states=[(s, summary.reached.get(s)) for s in states],
        unconfirmed=[
            (
                v.property,
                f"trial {v.trial} ({v.cell}), reproduced "
                + (v.shrunk.reproduced if v.shrunk is not None else "- (not shrunk)"),
            )
            for v in summary.unconfirmed
        ],
        curve=[p.states for p in summary.curve],
    )


def explore_views(results: Path, notes: list[str], damaged: list[Damage]) -> list[ExploreView]:
    """The page's explore section (empty: no explore run here)."""
    return [explore_view(results, f, s) for f, s in explore_folders(results, notes, damaged)]
