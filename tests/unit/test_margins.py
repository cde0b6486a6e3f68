"""The arithmetic of `harness calibrate`: margins as the team computes them, readable rounding in
the safe direction, and suggestions that always keep 30 % from every figure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.verdict.margins import (
    MARGIN_GOAL,
    goal_threshold,
    margin,
    meets_goal,
    readable,
    suggest_factor,
    suggest_threshold,
    worst_figure,
    worst_margin,
)


@pytest.mark.parametrize(
    ("op", "threshold", "figure", "percent"),
    [
        (">=", 54, 60.1, 10),
        (">=", 35, 42.6, 18),
        ("<", 15.3, 11.2, 27),
        (">=", 72, 102.4, 30),
    ],
)
def test_the_teams_margins(op: str, threshold: float, figure: float, percent: int) -> None:
    assert round(margin(op, threshold, figure) * 100) == percent


def test_a_failing_figure_has_a_negative_margin_and_an_equality_none_to_spare() -> None:
    assert margin("<", 30, 40) == pytest.approx(-0.25)
    assert margin(">=", 54, 27) == pytest.approx(-0.5)
    assert margin("==", 0, 0) == 0.0
    assert margin("==", 0, 3) == -1.0
    assert margin("!=", 0, 2) == 1.0
    assert margin("<=", 0, 0) == 0.0  # both 0: on the threshold


def test_the_worst_figure_is_the_one_nearest_to_failing() -> None:
    assert worst_figure("<", 30, [10, 25, 20]) == 25
    assert worst_figure(">=", 30, [40, 35, 50]) == 35
    assert worst_margin(">=", 54, [61.0, 60.1, 70.0]) == pytest.approx(6.1 / 60.1)
    assert worst_margin("<", 1, []) is None


@pytest.mark.parametrize(
    ("value", "up", "integer", "expected"),
    [
        (16.0, True, False, 16.0),
        (16.002, True, False, 17.0),
        (42.07, False, False, 42.0),
        (71.68, False, False, 71.0),
        (7477.0, True, False, 7500.0),
        (0.01234, True, False, 0.013),
        (0.01234, False, False, 0.012),
        (10.000000000000002, True, False, 10.0),  # float noise is not a reason to round up
        (7.14, True, True, 8.0),
        (1050.0, False, True, 1000.0),
        (-14.29, False, False, -15.0),
        (0.0, True, False, 0.0),
    ],
)
def test_readable(value: float, up: bool, integer: bool, expected: float) -> None:
    assert readable(value, up, integer) == expected


def test_suggestions_round_away_from_the_figures() -> None:
    assert suggest_threshold("<", 11.2) == 16.0  # 16.0 exactly
    assert suggest_threshold(">=", 60.1) == 42.0  # 42.07 down
    assert suggest_threshold(">=", 102.4) == 71.0
    assert suggest_threshold("<=", 300, integer=True) == 430.0
    assert suggest_threshold("<", 0) is None  # nothing is a fraction away from 0
    assert suggest_threshold("<", -10) == -7.0  # a ceiling above a negative figure
    assert suggest_factor(">=", 40, 50) == 0.56  # 28 / 50
    assert suggest_factor("<", 20, 40) == 0.72  # 28.57 / 40 = 0.714 up
    assert suggest_factor(">=", 40, 50, offset=-3) == 0.62  # (28 + 3) / 50
    assert suggest_factor(">=", 40, 0) is None


figures = st.lists(
    st.floats(min_value=1e-6, max_value=1e9, allow_nan=False, allow_infinity=False),
    min_size=1,
    max_size=6,
)
ops = st.sampled_from(["<", "<=", ">", ">="])


@given(op=ops, values=figures, integer=st.booleans())
def test_a_suggested_threshold_keeps_the_goal_from_every_figure(
    op: str, values: list[float], integer: bool
) -> None:
    if integer:
        values = [float(round(v)) or 1.0 for v in values]
    # the worst figure under any threshold of this direction
    worst = max(values) if op in ("<", "<=") else min(values)
    suggested = suggest_threshold(op, worst, integer=integer)
    assert suggested is not None
    if op in (">", ">=") and suggested <= 0:
        return  # a floor at 0 holds nothing: calibration says so instead of suggesting it
    assert all(meets_goal(margin(op, suggested, v)) for v in values)
    if integer:
        assert suggested == int(suggested)


@given(
    op=ops,
    values=figures,
    ref=st.floats(min_value=0.01, max_value=1e6) | st.floats(min_value=-1e6, max_value=-0.01),
    offset=st.floats(min_value=-100, max_value=100),
)
def test_a_suggested_factor_keeps_the_goal_from_every_figure(
    op: str, values: list[float], ref: float, offset: float
) -> None:
    worst = max(values) if op in ("<", "<=") else min(values)
    factor = suggest_factor(op, worst, ref, offset)
    assert factor is not None
    threshold = factor * ref + offset
    assert all(meets_goal(margin(op, threshold, v)) for v in values)


@given(op=ops, worst=st.floats(min_value=-1e9, max_value=1e9).filter(lambda x: abs(x) > 1e-6))
def test_the_goal_threshold_sits_exactly_at_the_goal(op: str, worst: float) -> None:
    threshold = goal_threshold(op, worst)
    assert threshold is not None
    assert margin(op, threshold, worst) == pytest.approx(MARGIN_GOAL)
