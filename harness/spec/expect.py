"""Expectations: bounds on an outcome metric, written `lost: 0` or `max_stall_s: "< 30"`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, PlainSerializer

from harness.results.tables import COUNT_NAMES

Op = Literal["<", "<=", ">", ">=", "==", "!=", "exact"]

COUNT_METRICS = COUNT_NAMES
TIME_METRICS = ("max_stall_s", "unavailable_s")
RESUMPTION = "resumption"
# Spark consumer figures, summed over the Spark sets (per set with `.<set>`).
SPARK_METRICS = ("read_twice", "sink_duplicates")
# Metrics also measured per consumer set, written `<metric>.<set>`; the summary key holding
# the per-set values of each.
PER_SET_KEYS = {
    "stall_s": "stalls_by_set",
    "lost_never_consumed": "lost_never_consumed_by_set",
    "read_twice": "spark_by_set",
    "sink_duplicates": "spark_by_set",
    "data_loss_stop": "spark_by_set",
    "consumed_then_lost": "spark_by_set",
}
ALLOWED_METRICS = (
    *COUNT_METRICS,
    *TIME_METRICS,
    *SPARK_METRICS,
    *(f"{m}.<set>" for m in PER_SET_KEYS),
    RESUMPTION,
)


def split_per_set(metric: str) -> tuple[str, str] | None:
    """`stall_s.group` -> ("stall_s", "group"); None for a metric that names no set."""
    name, dot, consumer_set = metric.partition(".")
    if dot and name in PER_SET_KEYS:
        return name, consumer_set
    return None


_BOUND = re.compile(r"\s*(<=|>=|==|!=|<|>)?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*")


def format_number(value: float) -> str:
    """12.0 -> '12', 0.25 -> '0.25': counts read as counts, times keep their decimals."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Bound:
    """`op value`; op 'exact' (no value) is only for `resumption`."""

    op: Op
    value: float | None = None

    def holds(self, measured: float) -> bool:
        assert self.value is not None, "an 'exact' bound is not numeric"
        v = self.value
        return {
            "<": measured < v,
            "<=": measured <= v,
            ">": measured > v,
            ">=": measured >= v,
            "==": measured == v,
            "!=": measured != v,
        }[self.op]

    def __str__(self) -> str:
        if self.op == "exact":
            return "exact"
        assert self.value is not None
        return f"{self.op} {format_number(self.value)}"


def parse_bound(raw: Any) -> Any:
    """A bare number means `== number`; strings are `op number` or `exact`."""
    if raw is None or isinstance(raw, Bound):
        return raw
    if isinstance(raw, bool):
        raise ValueError(f"expected a number or a string like '< 30' (got {raw!r})")
    if isinstance(raw, int | float):
        if not math.isfinite(raw):
            raise ValueError(f"expected a finite number (got {raw!r})")
        return Bound("==", float(raw))
    if isinstance(raw, str):
        if raw.strip() == "exact":
            return Bound("exact")
        m = _BOUND.fullmatch(raw)
        if m:
            return Bound(m.group(1) or "==", float(m.group(2)))  # type: ignore[arg-type]
    raise ValueError(
        f"expected a number, 'exact', or '<op> <number>' with op one of < <= > >= == != (got {raw!r})"
    )


BoundField = Annotated[Bound, BeforeValidator(parse_bound), PlainSerializer(str, return_type=str)]
Expect = dict[str, BoundField | None]


def metric_problem(metric: str, bound: Bound | None, set_names: list[str]) -> str | None:
    """Why `metric: bound` cannot be checked, or None when it can."""
    if metric == RESUMPTION:
        if bound is not None and bound.op != "exact":
            return f"expected 'exact' (got '{bound}')"
        return None
    per_set = split_per_set(metric)
    if per_set is not None:
        name = per_set[1]
        if name not in set_names:
            return f"no consumer set named {name!r}; sets: {', '.join(set_names) or 'none'}"
    elif metric not in COUNT_METRICS + TIME_METRICS + SPARK_METRICS:
        return f"unknown metric; allowed: {', '.join(ALLOWED_METRICS)}"
    if bound is not None and bound.op == "exact":
        return "'exact' applies only to resumption; expected '<op> <number>'"
    return None
