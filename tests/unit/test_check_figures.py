"""The figures the checks declare (each check's `decides`, in its module under
spark_jobs/checks/) against the summary's vocabulary (harness/results/metrics.py), which
the verdict and the report read without Spark: a figure named on one side only fails here.

harness.results cannot import the checks (they import it), so the two lists are held to
each other here rather than one generated from the other."""

from __future__ import annotations

from collections import Counter

from harness.results import metrics as m
from spark_jobs.check import BY_KEY
from spark_jobs.checks import CHECKS

# Figures keys that are the summary's bookkeeping, not a figure: what every check may write
# (merged by key: counts, undecided, failed_checks, timing_windows).
BOOKKEEPING = set(BY_KEY)


def _decided() -> Counter[str]:
    return Counter(name for check in CHECKS for name in check.decides)


def _sections() -> set[str]:
    return {f"{section}.{name}" for section, names in m.SECTION_FIGURES.items() for name in names}


def test_every_figure_of_the_summary_is_decided_by_exactly_one_check() -> None:
    decided = _decided()
    keys = set(m.Figures.__annotations__) - BOOKKEEPING
    declared = {
        *m.COUNT_NAMES,
        *m.TIME_METRICS,
        *m.LATENCY_METRICS,
        *m.BROKER_LOG_METRICS,
        *m.SPARK_METRICS,
        *m.PER_SET_KEYS.values(),  # the summary key holding a per-set figure
        # the section's summary key (broker, lost_where), but for the verdict step's own
        *(s for s in m.SECTION_FIGURES if s not in m.HISTORY_SECTIONS),
        *keys,
    }
    missing = sorted(name for name in declared if name not in decided)
    assert not missing, f"declared in harness/results/metrics.py, decided by no check: {missing}"
    # Kafka's own figures are each decided (or undecided with a reason) under their own name.
    broker = {f"{m.BROKER_PREFIX}{name}" for name in m.BROKER_FIGURES}
    assert not sorted(broker - set(decided))
    twice = sorted(name for name, n in decided.items() if n > 1)
    assert not twice, f"decided by more than one check: {twice}"


def test_every_figure_a_check_decides_is_declared_in_the_summary() -> None:
    declared = {
        *m.COUNT_NAMES,
        *(set(m.Figures.__annotations__) - BOOKKEEPING),
        *m.PER_SET_KEYS,  # a per-set figure's own name: the reason under `undecided`
        *_sections(),  # `broker.<figure>`, `lost_where.<place>`
    }
    for check in CHECKS:
        stray = sorted(set(check.decides) - declared)
        assert not stray, f"the {check.name} check decides figures metrics.py lacks: {stray}"


def test_a_count_is_never_also_a_top_level_key() -> None:
    """The verdict looks a figure up by its name: under `counts` or at the top, never both."""
    assert not set(m.COUNT_NAMES) & set(m.Figures.__annotations__)
    assert len(m.COUNT_NAMES) == len(set(m.COUNT_NAMES))
