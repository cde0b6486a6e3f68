"""Which (kind, target role, workload phase) an explore run tried: its summary's coverage.

The phase is where the fault starts in the producer's planned workload, in thirds (early,
middle, late): a pause in the first seconds and one near the end are different experiments.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

PHASES = ("early", "middle", "late")


def phase_of(at_s: float, workload_s: float) -> str:
    """The third of the workload `at_s` falls in (late from the workload's end on)."""
    if workload_s <= 0:
        return PHASES[-1]
    return PHASES[min(len(PHASES) - 1, int(3 * at_s / workload_s))]


def coverage_table(tried: Iterable[tuple[str, str, str]]) -> list[dict[str, str | int]]:
    """One row per (kind, role, phase) tried, with how many times; sorted."""
    counts = Counter(tried)
    return [
        {"kind": kind, "role": role, "phase": phase, "trials": n}
        for (kind, role, phase), n in sorted(counts.items())
    ]


def coverage_grid(
    rows: Iterable[tuple[str, str, str, int]],
) -> list[tuple[str, str, dict[str, int]]]:
    """The short form of the coverage rows (kind, role, phase, trials): one line per (kind,
    role), its trials per phase (every phase present, 0 when none), sorted."""
    grid: dict[tuple[str, str], dict[str, int]] = {}
    for kind, role, phase, n in rows:
        cells = grid.setdefault((kind, role), dict.fromkeys(PHASES, 0))
        cells[phase] = cells.get(phase, 0) + n
    return [(kind, role, cells) for (kind, role), cells in sorted(grid.items())]
