"""A bound's margin (harness.verdict.margin) and a cell's margins (checks.margins)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.spec.expect import Bound, parse_bound
from harness.verdict.checks import margins
from harness.verdict.margin import has_margin, margin

NUMBERS = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False).filter(
    lambda x: x == 0 or abs(x) > 1e-6  # no subnormals: scaling them underflows
)
ORDERED = st.sampled_from(["<", "<=", ">", ">="])


@pytest.mark.parametrize(
    ("bound", "value", "expected"),
    [
        (">= 54", 60.1, 0.1015),  # the team's numbers
        ("< 15.3", 11.2, 0.268),
        ("< 30", 45.0, -0.3333),  # failing: negative
        ("<= 10", 10.0, 0.0),  # on the threshold
        (">= 0", 0.0, 0.0),  # both 0
    ],
)
def test_examples(bound: str, value: float, expected: float) -> None:
    assert margin(parse_bound(bound), value) == pytest.approx(expected, abs=5e-4)


def test_a_strict_bound_met_exactly_fails_at_zero() -> None:
    m = margin(parse_bound("> 0"), 0.0)
    assert m == 0.0 and math.copysign(1.0, m) == -1.0


def test_only_resolved_ordered_bounds_have_one() -> None:
    assert not has_margin(parse_bound("0")) and not has_margin(parse_bound("!= 3"))
    assert not has_margin(parse_bound(">= 0.8 * faults.0.duration_s"))  # not resolved
    assert has_margin(parse_bound(">= 0.8 * faults.0.duration_s").resolve(20.0))
    with pytest.raises(ValueError, match="no margin"):
        margin(parse_bound("0"), 0.0)


@given(ORDERED, NUMBERS, NUMBERS)
def test_the_sign_says_whether_the_bound_holds(op: str, threshold: float, value: float) -> None:
    bound = Bound(op, threshold)  # type: ignore[arg-type]
    m = margin(bound, value)
    assert -2.0 <= m <= 2.0  # distance over the larger magnitude
    if m > 0:
        assert bound.holds(value)
    if not bound.holds(value):
        assert m <= 0


@given(ORDERED, NUMBERS, NUMBERS, st.floats(min_value=1e-3, max_value=1e3))
def test_it_is_relative(op: str, threshold: float, value: float, scale: float) -> None:
    """Seconds or milliseconds, the same margin."""
    a = margin(Bound(op, threshold), value)  # type: ignore[arg-type]
    b = margin(Bound(op, threshold * scale), value * scale)  # type: ignore[arg-type]
    assert a == pytest.approx(b, abs=1e-9)


def test_a_cells_margins_from_its_figures_and_bounds() -> None:
    expect = {
        "lost": parse_bound("0"),  # no margin: left out
        "max_stall_s": parse_bound("< 30"),
        "stall_s.group": parse_bound(">= 0.8 * faults.0.duration_s").resolve(10.0),
        "unavailable_s": parse_bound("< 20"),  # undecided: None
        "recovered": Bound.flag(True),
        "duplicated": None,
    }
    summary = {
        "counts": {"lost": 0},
        "max_stall_s": 12.0,
        "stalls_by_set": {"group": {"stall_s": 10.0}},
        "unavailable_s": None,
    }
    assert margins(expect, summary) == {  # type: ignore[arg-type]
        "max_stall_s": 0.6,
        "stall_s.group": 0.2,
        "unavailable_s": None,
    }
