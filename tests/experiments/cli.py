"""The harness's CLI as the experiment tests run it: `python -m harness …` in a subprocess,
from the repository root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
