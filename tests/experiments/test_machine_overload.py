"""The overload rule against a real cluster: a small cell whose timing bounds hold by their
values is `unknown`, naming the machine, beside CPU burners; its count is judged as always."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.common.burners import cpu_burners
from tests.experiments.cli import HERE, not_passed, run_single_cell

# Slow lane (about 2.5 min): the overload rule is tests/unit's on hand-built machine tables, the
# sampler's table in a real cell test_end_to_end's (nothing undecided on a quiet machine).
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]

SPEC = HERE / "machine-overload.yaml"
TIMING = ("ack_p99_ms", "unavailable_s")


def checks(summary: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {c["name"]: c for c in summary["checks"]}


def test_a_cell_beside_cpu_burners_is_unknown_naming_the_machine_and_its_count_judged(
    tmp_path: Path,
) -> None:
    """The quiet half (no timing figure left to the machine) is test_end_to_end's."""
    with cpu_burners(2, max_s=300):
        done, cell, cell_dir = run_single_cell(SPEC, tmp_path)
    summary = json.loads((cell_dir / "summary.json").read_text())
    assert summary["verdict"] == "unknown", not_passed(cell)
    assert done.returncode == 3  # unknown (docs/cli.md)
    judged = checks(summary)
    for metric in TIMING:
        assert judged[metric]["verdict"] == "unknown", judged[metric]
        assert "undecided: machine overloaded for" in judged[metric]["detail"]
        assert metric in summary["overloaded"]
        assert isinstance(summary[metric], int | float)  # the figure itself is kept
    assert judged["lost"]["verdict"] == "pass"  # counts are judged as always
    assert summary["machine"]["overloaded_s"] > 5
    # Whose load: the burners are this test's processes, not the cell's runner's, so they
    # are the rest of the machine (two spinning cores, less what the cell took from them).
    machine = summary["machine"]
    assert machine["rest_cores"] >= 1.0 and machine["harness_cores"] > 0, machine
    assert "the rest of the machine" in summary["overloaded"]["unavailable_s"]
