"""How far a measured figure is from its bound's threshold, relative to the larger of the two.

`margin(bound, value)` = (distance of `value` from the threshold, positive on the passing
side) / max(|threshold|, |value|): `>= 54` with 60.1 is 0.10, `< 15.3` with 11.2 is 0.27, and
a failing figure is negative. Only ordered bounds (`<`, `<=`, `>`, `>=`) have one: an `==` or
`!=` bound (a count's `lost: 0`) holds or not, with no distance to speak of. One definition
for the history's margins and for `harness calibrate`.
"""

from __future__ import annotations

from harness.spec.expect import Bound

ORDERED = ("<", "<=", ">", ">=")


def has_margin(bound: Bound) -> bool:
    """An ordered bound whose threshold is known (a relative one resolved for its cell)."""
    return bound.op in ORDERED and bound.threshold is not None


def margin(bound: Bound, value: float) -> float:
    """The signed relative margin of `value` against `bound` (`has_margin(bound)` must hold),
    within [-1, 1] when value and threshold share a sign (else [-2, 2]); 0 when both are 0, never positive when the bound fails (a strict
    bound met exactly: -0.0)."""
    threshold = bound.threshold
    if threshold is None or bound.op not in ORDERED:
        raise ValueError(f"no margin for bound {bound}: only a resolved <, <=, > or >= has one")
    result = relative_distance(bound.op, threshold, value)
    return result if bound.holds(value) else -abs(result)


def relative_distance(op: str, threshold: float, value: float) -> float:
    """(value's distance from the threshold, positive on the side `op` passes) / the larger
    of |threshold| and |value|; 0 when both are 0. The one formula (calibrate's too)."""
    distance = value - threshold if op in (">", ">=") else threshold - value
    scale = max(abs(threshold), abs(value))
    return distance / scale if scale else 0.0
