"""docs/incidents.md and README.md's incident rows, from the experiment files.

The catalogue lives in the experiments' `incident:` sections; `harness.report.catalogue` turns
them into the table `python -m harness incidents --markdown` prints. This module renders that
table into docs/incidents.md (between its markers) and the headline rows (incident, claim)
into README.md, so neither can drift from the files; `scripts/docs_generated.py` writes them
with the other generated docs, and `tests/unit/test_docs_incidents.py` fails when a committed
page differs from what it writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout: the harness beside it
    sys.path.insert(0, str(ROOT))

from harness.report.catalogue import BEGIN, END, Entry, catalogue, markdown  # noqa: E402

PAGE = Path("docs/incidents.md")
README = Path("README.md")
ROWS_BEGIN, ROWS_END = "<!-- incident-rows:begin -->", "<!-- incident-rows:end -->"

INTRO = """# Incident catalogue

Each row is a story people tell about Kafka, an experiment that reproduces it on a real
cluster, what Kafka did in our runs, and the setting that makes it safe. The page is
generated from the experiment files' `incident:` sections (`python scripts/docs_generated.py`,
the same table as `python -m harness incidents --markdown`; a unit test keeps it equal), so a
row cannot drift from the experiment it describes. Figures are from our runs on a two-core
machine; each incident's description (in its file) says how they were measured, and each
experiment's expectations make it fail loudly the day Kafka stops misbehaving. What each
file runs: [Shipped experiments](experiments.md).

"""


def page(entries: list[Entry]) -> str:
    """docs/incidents.md, whole."""
    return f"{INTRO}{BEGIN}\n{markdown(entries)}{END}\n"


def headline_rows(entries: list[Entry]) -> str:
    """README.md's rows: each incident linked to its experiment file, with its claim."""
    lines = ["| incident | the claim, as people state it |", "|---|---|"]
    for e in entries:
        claim = " ".join(e.claim.split()).replace("|", "\\|")
        lines.append(f"| [`{e.name}`]({e.file}) | {claim} |")
    return "\n".join(lines) + "\n"


def readme(text: str, entries: list[Entry]) -> str:
    """README.md with its rows between the markers replaced (ValueError without markers)."""
    if ROWS_BEGIN not in text or ROWS_END not in text:
        raise ValueError(f"{README}: no {ROWS_BEGIN} … {ROWS_END} markers")
    head, rest = text.split(ROWS_BEGIN, 1)
    tail = rest.split(ROWS_END, 1)[1]
    return f"{head}{ROWS_BEGIN}\n{headline_rows(entries)}{ROWS_END}{tail}"


def expected(root: Path) -> dict[Path, str]:
    """Every generated file and the text it must hold."""
    entries = catalogue(root)
    return {
        PAGE: page(entries),
        README: readme((root / README).read_text(encoding="utf-8"), entries),
    }


def stale(root: Path) -> list[Path]:
    """The generated files whose committed text differs from what this script writes."""
    return [
        rel
        for rel, text in expected(root).items()
        if not (root / rel).is_file() or (root / rel).read_text(encoding="utf-8") != text
    ]
