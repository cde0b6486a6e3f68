"""The harness's CLI as the experiment tests run it: `python -m harness …` in a subprocess,
from the repository root."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent  # the experiment specs and suites these tests run
ROOT = HERE.parent.parent


def harness_command(*args: str | Path) -> list[str]:
    """The command line of `python -m harness ARGS` (run it with cwd=ROOT)."""
    return [sys.executable, "-m", "harness", *map(str, args)]


def harness(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run the CLI to the end, its output captured."""
    return subprocess.run(
        harness_command(*args),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=840,
    )


def run_single_cell(
    spec: Path, out: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], Path]:
    """`run SPEC --out OUT` of a one-cell spec: the finished process, the cell's entry in
    the run's summary.json, and the cell's folder."""
    done = harness("run", spec, "--out", out)
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    (cell,) = json.loads((run_dir / "summary.json").read_text())["cells"]
    return done, cell, run_dir / "cells" / cell["cell"]


def not_passed(cell: dict[str, Any]) -> str:
    """The cell's checks that did not pass, with their details, and its counts: an assertion
    message whose first line names what failed (CI shows a failure's last lines, and the
    short summary only its first characters)."""
    bad = [f"{c['name']}={c['verdict']}: {c.get('detail', '')}" for c in cell["checks"]]
    bad = [b for b, c in zip(bad, cell["checks"], strict=True) if c["verdict"] != "pass"]
    return f"not passed: {bad}; counts: {cell.get('counts')}"
