"""Expectations: bounds on an outcome metric, written `lost: 0`, `max_stall_s: "< 30"` or
`ack_p99_ms: "< 5000"`; `resumption: exact`; `recovered: false` (the cluster is expected
not to heal). A bound may be relative to a number of the spec itself, so that it keeps
its meaning when someone changes the schedule: `stall_s.group: ">= 0.8 * faults.0.duration_s"`
(`[factor *] <spec path> [+|- number]`), resolved per cell (harness.spec.relative).

The figures themselves are the result folder's (harness.results.metrics); this module says
how a spec bounds them."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, PlainSerializer

from harness.results.metrics import (
    BROKER_LOG_METRICS,
    COUNT_NAMES,
    LATENCY_METRICS,
    PER_SET_KEYS,
    QUORUM_METRICS,
    RECOVERED,
    SCHEDULE_METRICS,
    SECTION_FIGURES,
    SPARK_METRICS,
    TIME_METRICS,
)

Op = Literal["<", "<=", ">", ">=", "==", "!=", "exact", "is"]

COUNT_METRICS = COUNT_NAMES
RESUMPTION = "resumption"
# Metrics written `<metric>.<set>` read the summary section PER_SET_KEYS names.
ALLOWED_METRICS = (
    *COUNT_METRICS,
    *TIME_METRICS,
    *LATENCY_METRICS,
    *SCHEDULE_METRICS,
    *SPARK_METRICS,
    *BROKER_LOG_METRICS,
    *QUORUM_METRICS,
    *(f"{m}.<set>" for m in PER_SET_KEYS),
    *(f"{section}.{key}" for section, keys in SECTION_FIGURES.items() for key in keys),
    RESUMPTION,
    RECOVERED,
)
__all__ = [
    "ALLOWED_METRICS",
    "COUNT_METRICS",
    "LATENCY_METRICS",
    "PER_SET_KEYS",
    "RECOVERED",
    "RESUMPTION",
    "SPARK_METRICS",
    "TIME_METRICS",
    "Bound",
    "Expect",
    "format_number",
    "metric_problem",
    "parse_bound",
    "parse_expectation",
    "split_per_set",
    "split_section",
]


def split_per_set(metric: str) -> tuple[str, str] | None:
    """`stall_s.group` -> ("stall_s", "group"); None for a metric that names no set."""
    name, dot, consumer_set = metric.partition(".")
    if dot and name in PER_SET_KEYS:
        return name, consumer_set
    return None


def split_section(metric: str) -> tuple[str, str] | None:
    """`lost_where.truncated` -> ("lost_where", "truncated"): a key of a summary section
    (SECTION_FIGURES); None for any other metric."""
    section, dot, key = metric.partition(".")
    if dot and key in SECTION_FIGURES.get(section, ()):
        return section, key
    return None


_UNSIGNED = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER = rf"[-+]?{_UNSIGNED}"
_OP = r"(<=|>=|==|!=|<|>)"
_BOUND = re.compile(rf"\s*{_OP}?\s*({_NUMBER})\s*")
# `op [factor *] path [+|- number]`; a path starts with a letter (a number is never one).
_RELATIVE = re.compile(
    rf"\s*{_OP}\s*(?:({_NUMBER})\s*\*\s*)?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_.-]+)*)"
    rf"\s*(?:([-+])\s*({_UNSIGNED}))?\s*"
)


def format_number(value: float) -> str:
    """12.0 -> '12', 0.25 -> '0.25': counts read as counts, times keep their decimals."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _exact(value: float) -> str:
    return str(int(value)) if value == int(value) and abs(value) < 1e15 else repr(value)


@dataclass(frozen=True)
class Bound:
    """`op value`; op 'exact' (no value) is only for `resumption`; op 'is' (value 1 for
    true, 0 for false) only for `recovered`. A relative bound has a `ref` (a dotted spec
    path): its threshold is `factor * <ref's value> + value`, known once `resolved`."""

    op: Op
    value: float | None = None
    ref: str | None = None
    factor: float = 1.0
    resolved: float | None = None  # the threshold of a relative bound, in one cell

    @property
    def relative(self) -> bool:
        return self.ref is not None

    def resolve(self, ref_value: float) -> Bound:
        """This relative bound with its threshold for a cell whose `ref` is `ref_value`."""
        assert self.ref is not None and self.value is not None
        threshold = self.factor * ref_value + self.value
        return Bound(self.op, self.value, self.ref, self.factor, threshold)

    @property
    def threshold(self) -> float | None:
        """What the measured figure is compared with (None for an unresolved relative bound)."""
        return self.resolved if self.relative else self.value

    @classmethod
    def flag(cls, value: bool) -> Bound:
        return cls("is", 1.0 if value else 0.0)

    @property
    def expected_flag(self) -> bool | None:
        """true / false for an 'is' bound, None for any other."""
        return bool(self.value) if self.op == "is" else None

    def holds(self, measured: float) -> bool:
        v = self.threshold
        assert v is not None and self.op not in ("exact", "is"), "not a resolved numeric bound"
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
        if self.op == "is":
            return "true" if self.value else "false"
        assert self.value is not None
        if self.ref is None:
            return f"{self.op} {format_number(self.value)}"
        return f"{self.op} {self.expression}"

    @property
    def expression(self) -> str:
        """The right-hand side as written: `0.8 * faults.0.duration_s`, `producer.duration_s - 5`."""
        assert self.ref is not None and self.value is not None
        # Exact (shortest round-trip) numbers: this text is what spec.yaml keeps, and what
        # `verify` parses again (format_number's 3 decimals would turn 0.0005 into 0.001).
        text = self.ref if self.factor == 1 else f"{_exact(self.factor)} * {self.ref}"
        if self.value:
            text += f" {'-' if self.value < 0 else '+'} {_exact(abs(self.value))}"
        return text

    def shown(self) -> str:
        """For a verdict's detail: a relative bound with the threshold it had in this cell."""
        if self.relative and self.resolved is not None:
            return f"{self.op} {format_number(self.resolved)} (= {self.expression})"
        return str(self)


def parse_bound(raw: Any) -> Any:
    """A bare number means `== number`; strings are `op number` or `exact`."""
    if raw is None or isinstance(raw, Bound):
        return raw
    if isinstance(raw, bool):
        raise ValueError(f"expected a number or a string like '< 30' (got {raw!r})")
    if isinstance(raw, int | float):
        return Bound("==", _finite(raw, raw))
    if isinstance(raw, str):
        if raw.strip() == "exact":
            return Bound("exact")
        m = _BOUND.fullmatch(raw)
        if m:
            return Bound(m.group(1) or "==", _finite(m.group(2), raw))  # type: ignore[arg-type]
        r = _RELATIVE.fullmatch(raw)
        if r:
            op, factor, ref, sign, offset = r.groups()
            value = _finite(offset or 0, raw) * (-1 if sign == "-" else 1)
            scale = _finite(factor, raw) if factor else 1.0
            return Bound(op, value, ref, scale)  # type: ignore[arg-type]
    raise ValueError(
        "expected a number, 'exact', '<op> <number>' or '<op> [factor *] <spec path> [+|- number]'"
        f" with op one of < <= > >= == != (got {raw!r})"
    )


def _finite(number: str | float, raw: Any) -> float:
    """A bound's number as a float; inf, nan or one past float's range (`1e999`, a 400-digit
    integer) cannot be a threshold, so it is refused naming what was written."""
    try:
        value = float(number)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):
        shown = repr(raw) if len(repr(raw)) <= 60 else f"{repr(raw)[:57]}..."
        raise ValueError(f"expected a finite number (got {shown})")
    return value


_FLAGS = {"true": True, "false": False}


def parse_expectation(raw: Any) -> Any:
    """What an `expect:` value may be: a bound (`parse_bound`), or true / false (also as
    the strings a matrix override or an expanded spec.yaml carries)."""
    if isinstance(raw, bool):
        return Bound.flag(raw)
    if isinstance(raw, str) and raw.strip() in _FLAGS:
        return Bound.flag(_FLAGS[raw.strip()])
    return parse_bound(raw)


def _dump(bound: Bound) -> str | bool:
    """A flag as YAML true / false, any other bound as its text."""
    flag = bound.expected_flag
    return str(bound) if flag is None else flag


BoundField = Annotated[
    Bound, BeforeValidator(parse_expectation), PlainSerializer(_dump, return_type=str | bool)
]
Expect = dict[str, BoundField | None]


def metric_problem(metric: str, bound: Bound | None, set_names: list[str]) -> str | None:
    """Why `metric: bound` cannot be checked, or None when it can."""
    if metric == RESUMPTION:
        if bound is not None and bound.op != "exact":
            return f"expected 'exact' (got '{bound}')"
        return None
    if metric == RECOVERED:
        if bound is not None and bound.op != "is":
            return f"expected true or false (got '{bound}')"
        return None
    if bound is not None and bound.op == "is":
        return f"true/false applies only to {RECOVERED}; expected '<op> <number>'"
    per_set = split_per_set(metric)
    if split_section(metric) is not None:
        pass
    elif per_set is not None:
        name = per_set[1]
        if name not in set_names:
            return f"no consumer set named {name!r}; sets: {', '.join(set_names) or 'none'}"
    elif metric not in (
        COUNT_METRICS
        + TIME_METRICS
        + LATENCY_METRICS
        + SCHEDULE_METRICS
        + SPARK_METRICS
        + BROKER_LOG_METRICS
        + QUORUM_METRICS
    ):
        return f"unknown metric; allowed: {', '.join(ALLOWED_METRICS)}"
    if bound is not None and bound.op == "exact":
        return "'exact' applies only to resumption; expected '<op> <number>'"
    return None
