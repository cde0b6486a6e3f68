"""The incident catalogue: one row per experiment that carries an `incident:` section.

The rows live in the experiment files (claim, measured figures, the safe setting), so the
table of docs/incidents.md (scripts/docs_incidents.py) and `python -m harness incidents` are
generated from the files they describe and cannot drift from them (a unit test compares the
page with `markdown`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.results.calibration_record import headline, read_record, record_path
from harness.spec import load_spec

# Where the catalogue's experiments live, relative to the project root, in the order shown.
FOLDERS = (
    "experiments",
    "experiments/incidents",
    "experiments/operations",
    "experiments/network",
    "experiments/storage",
    "experiments/durability",
    "experiments/bugs",  # a bug entry may tell an incident too (docs/bugs.md)
)
BEGIN, END = "<!-- incidents:begin -->", "<!-- incidents:end -->"
CALIBRATED_LINK = "figures and margins in [Calibrated bounds](experiments.md#calibrated-bounds)"


@dataclass(frozen=True)
class Entry:
    file: str  # relative to the project root
    name: str
    claim: str
    measured: str
    safe: str
    calibrated: str = ""  # the calibration record's headline (experiments/calibrations/)


def catalogue(root: Path) -> list[Entry]:
    """Every experiment under FOLDERS with an `incident:` section, folder by folder, by name."""
    entries = []
    for folder in FOLDERS:
        for path in sorted((root / folder).glob("*.yaml")):
            spec = load_spec(path)
            if spec.incident is None:
                continue
            i = spec.incident
            rel = path.relative_to(root).as_posix()
            record = spec_record(path, spec.name)
            calibrated = headline(record) if record else ""
            entries.append(Entry(rel, spec.name, i.claim, i.measured, i.safe, calibrated))
    return entries


def spec_record(path: Path, name: str) -> dict[str, Any] | None:
    """The spec's calibration record (None: none yet); a damaged one is a ConfigError naming
    it, like a bad spec."""
    try:
        return read_record(record_path(path, name))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def table_cell(text: str) -> str:
    """Text as one Markdown table cell: one line, pipes escaped, "-" when empty."""
    return " ".join(text.split()).replace("|", "\\|") or "-"


def markdown(entries: list[Entry]) -> str:
    """The catalogue table of docs/incidents.md (between the BEGIN/END markers)."""
    lines = [
        "| incident | the claim, as people state it | what Kafka did in our runs | what makes it safe |",
        "|---|---|---|---|",
    ]
    for e in entries:
        measured = table_cell(e.measured)
        if e.calibrated:
            measured += f" *{e.calibrated[0].upper()}{e.calibrated[1:]}: {CALIBRATED_LINK}.*"
        lines.append(
            f"| [`{e.name}`]({e.file}) | {table_cell(e.claim)} | {measured} | {table_cell(e.safe)} |"
        )
    return "\n".join(lines) + "\n"


def readme_section(readme: str) -> str | None:
    """The generated part of a page, markers excluded (None when it has no markers)."""
    if BEGIN not in readme or END not in readme:
        return None
    return readme.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"
