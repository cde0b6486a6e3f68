"""How far a bound's figures sit from its threshold, and the bound that would sit 30 % away
from them: the arithmetic of `harness calibrate` (harness.verdict.calibration).

    margin = distance of the worst figure from the threshold (positive on the passing side)
             / max(|threshold|, |figure|)

`>= 54` with 60.1 -> 10 %; `>= 35` with 42.6 -> 18 %; `< 15.3` with 11.2 -> 27 %; `>= 72`
with 102.4 -> 30 %. Dividing by the larger of the two keeps the margin within [-1, 1] and
makes it the same whichever side the threshold is on: what fraction of the figure (or the
threshold) the noise may eat before the verdict flips.

A suggested threshold sits exactly MARGIN_GOAL away from the worst figure (upper bound:
worst / 0.7, lower: worst * 0.7), then rounded to SIGNIFICANT_DIGITS in the safe direction
(away from the figures), so that its margin is never below the goal.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Literal

from harness.verdict.margin import relative_distance

MARGIN_GOAL = 0.30
SIGNIFICANT_DIGITS = 2
# Float noise: 1 - 7 / (7 / 0.7) is 0.29999999999999993, which meets a 30 % goal.
_TOLERANCE = 1e-9

Direction = Literal["upper", "lower", "equal", "unequal"]
_DIRECTIONS: dict[str, Direction] = {
    "<": "upper",
    "<=": "upper",
    ">": "lower",
    ">=": "lower",
    "==": "equal",
    "!=": "unequal",
}


def direction(op: str) -> Direction:
    """Which side of the threshold a passing figure lies on: `<` -> upper (a ceiling)."""
    return _DIRECTIONS[op]


def margin(op: str, threshold: float, figure: float) -> float:
    """The figure's margin against `op threshold`: positive when it passes, negative when it
    fails (an equality holds with 0 and fails below it; 0 when both are 0)."""
    side = direction(op)
    if side in ("upper", "lower"):
        return relative_distance(op, threshold, figure)
    distance = -abs(figure - threshold) if side == "equal" else abs(figure - threshold)
    scale = max(abs(threshold), abs(figure))
    return distance / scale + 0.0 if scale else 0.0  # + 0.0: a held equality is 0, not -0


def worst_figure(op: str, threshold: float, figures: Iterable[float]) -> float | None:
    """The figure with the smallest margin (None: no figure)."""
    return min(figures, key=lambda f: margin(op, threshold, f), default=None)


def worst_margin(op: str, threshold: float, figures: Iterable[float]) -> float | None:
    """The bound's margin over several runs: its worst figure's (None: no figure)."""
    worst = worst_figure(op, threshold, figures)
    return None if worst is None else margin(op, threshold, worst)


def meets_goal(value: float | None) -> bool:
    """A margin of at least MARGIN_GOAL (give or take float noise)."""
    return value is not None and value >= MARGIN_GOAL - _TOLERANCE


def readable(value: float, up: bool, integer: bool = False) -> float:
    """`value` to SIGNIFICANT_DIGITS, rounded up (toward +inf) or down; `integer`: then to a
    whole number the same way (a count's bound). 16.002 -> 17 up, 42.07 -> 42 down."""
    if value == 0 or not math.isfinite(value):
        return value
    # 12 digits first: 10.000000000000002 is 10, not a reason to round up to 11.
    exact = Decimal(f"{value:.12g}")
    step = Decimal(1).scaleb(exact.adjusted() - (SIGNIFICANT_DIGITS - 1))
    rounded = float(exact.quantize(step, rounding=ROUND_CEILING if up else ROUND_FLOOR))
    if integer:
        rounded = float(math.ceil(rounded) if up else math.floor(rounded))
    return rounded


def goal_threshold(op: str, worst: float) -> float | None:
    """The threshold exactly MARGIN_GOAL away from `worst` on the passing side of an upper or
    lower bound; None when `worst` is 0 (no threshold is a fraction away from nothing)."""
    if worst == 0:
        return None
    keep = 1 - MARGIN_GOAL
    widen = direction(op) == "upper"
    # A ceiling goes above the worst figure, a floor below it, whatever its sign.
    return worst / keep if (worst > 0) == widen else worst * keep


def suggest_threshold(op: str, worst: float, integer: bool = False) -> float | None:
    """A readable threshold for `op` with at least MARGIN_GOAL margin from `worst` (and so
    from every figure no worse than it); None when `worst` is 0."""
    raw = goal_threshold(op, worst)
    if raw is None:
        return None
    return readable(raw, up=direction(op) == "upper", integer=integer)


def suggest_factor(op: str, worst: float, ref_value: float, offset: float = 0.0) -> float | None:
    """For a relative bound `op factor * ref + offset`: a readable factor whose threshold has
    at least MARGIN_GOAL margin from `worst`; None when `worst` or the reference is 0."""
    raw = goal_threshold(op, worst)
    if raw is None or ref_value == 0:
        return None
    # A larger factor raises the threshold when the reference is positive.
    up = (direction(op) == "upper") == (ref_value > 0)
    return readable((raw - offset) / ref_value, up=up)
