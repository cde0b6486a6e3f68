"""The bug suite's table (docs/bugs.md, `python -m harness incidents`): each published bug
under experiments/bugs/, the releases that have it and that fixed it, and what our quiet
calibration runs saw on each release, the way Jepsen's analyses print theirs.

Built from the experiment files' `bug:` sections and their calibration records
(experiments/calibrations/<name>.json), so the page cannot claim a run nobody recorded. A
cell on an affected release `pass`es when the bug showed (its expectations say the property
breaks there); a cell on a fixed release when the property held.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.report.catalogue import spec_record, table_cell
from harness.spec import load_spec
from harness.spec.bug import BugSpec
from harness.spec.matrix import expand_cells

FOLDER = "experiments/bugs"
# Enough runs to call a bug reproduced (docs/bugs.md): it showed in at least SHOWN of RUNS
# runs on each affected release, and the property held in all RUNS on each fixed one.
RUNS, SHOWN = 3, 2


@dataclass(frozen=True)
class Tally:
    """One release's quiet calibration runs: how many ended `pass`, of how many."""

    version: str
    side: str  # affected | fixed
    passed: int
    runs: int

    def text(self) -> str:
        word = "shown" if self.side == "affected" else "held"
        if not self.runs:
            return f"{self.version}: not run"
        return f"{self.version}: {word} {self.passed}/{self.runs}"

    @property
    def convincing(self) -> bool:
        if self.side == "affected":
            return self.runs >= RUNS and self.passed >= SHOWN
        return self.runs >= RUNS and self.passed == self.runs


@dataclass(frozen=True)
class BugEntry:
    file: str  # relative to the project root
    name: str
    bug: BugSpec
    tallies: tuple[Tally, ...]

    @property
    def reproduced_by_runs(self) -> bool:
        """Whether the recorded runs bear out `status: reproduced`."""
        return bool(self.tallies) and all(t.convincing for t in self.tallies)


def tallies(
    bug: BugSpec, cell_versions: Mapping[str, str], record: Mapping[str, Any] | None
) -> tuple[Tally, ...]:
    """Per release, the quiet runs of its cells: each cell's newest quiet calibration that
    ran it (a later `--cells` calibration of one cell replaces only that cell's runs)."""
    newest: dict[str, list[str]] = {}
    quiet = [c for c in (record or {}).get("calibrations", []) if not c.get("load")]
    for calibration in sorted(quiet, key=lambda c: str(c.get("started"))):
        for cell in calibration.get("cells", []):
            if cell.get("cell") in cell_versions:
                newest[cell["cell"]] = list(cell.get("verdicts") or [])
    by_version: dict[str, list[str]] = {}
    for cell_id, version in cell_versions.items():
        by_version.setdefault(version, []).extend(newest.get(cell_id, []))
    return tuple(
        Tally(v, side, sum(x == "pass" for x in by_version[v]), len(by_version[v]))
        for v in (*bug.affected, *bug.fixed)
        if v in by_version and (side := bug.side(v)) is not None
    )


def bug_entries(root: Path) -> list[BugEntry]:
    """Every experiment under experiments/bugs/, by file name; one without a `bug:` section
    is an error (the folder holds bugs only)."""
    entries = []
    for path in sorted((root / FOLDER).glob("*.yaml")):
        spec = load_spec(path)
        rel = path.relative_to(root).as_posix()
        if spec.bug is None:
            raise ConfigError(f"{rel}: no `bug:` section (experiments/bugs/ holds bugs only)")
        cells = expand_cells(spec, rel)
        record = spec_record(path, spec.name)
        versions = {c.id: c.spec.cluster.version for c in cells}
        entries.append(BugEntry(rel, spec.name, spec.bug, tallies(spec.bug, versions, record)))
    return entries


def markdown(entries: Sequence[BugEntry]) -> str:
    """The table of docs/bugs.md (between its generated markers)."""
    lines = [
        "| bug | mechanism | affected | fixed | our runs (quiet) | status | reproduce |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        b = e.bug
        runs = "<br>".join(t.text() for t in e.tallies) or "not calibrated yet"
        lines.append(
            f"| [{b.id}]({b.url}) | {table_cell(b.mechanism)} | {', '.join(b.affected)} | "
            f"{', '.join(b.fixed)} | {runs} | {b.status} | "
            f"[`{e.name}`]({e.file}): `python -m harness run {e.file}` |"
        )
    return "\n".join(lines) + "\n"


__all__ = ["FOLDER", "RUNS", "SHOWN", "BugEntry", "Tally", "bug_entries", "markdown", "tallies"]
