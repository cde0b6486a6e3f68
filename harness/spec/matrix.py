"""Expand a spec's `matrix:` into cells: the cartesian product of its axes, first key slowest.

An axis key is a dotted path through the spec's fields. Once the path reaches a free-form
mapping (`broker_config`, `topic.config`, `producer.config`, `consumer.config`, `expect`) the
rest of it, dots included, is one key: `cluster.broker_config.offsets.topic.replication.factor`.
List fields take an index: `faults.0.duration_s`.
"""

from __future__ import annotations

import copy
import fnmatch
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from harness.errors import ConfigError
from harness.spec.bug import bug_problems
from harness.spec.load import SpecError, loc_to_path, validation_problems
from harness.spec.models import Override, Spec
from harness.spec.paths import Segment, check_reachable, resolve_path, set_at
from harness.spec.problems import spec_problems

MAX_CELLS = 500
_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


@dataclass(frozen=True)
class Cell:
    """One runnable variant: folder-safe `id`, its axis values, and the full substituted spec."""

    id: str
    params: dict[str, Any] = field(hash=False)
    spec: Spec = field(hash=False)


@dataclass(frozen=True)
class _Axis:
    key: str  # as written in the matrix
    segments: tuple[Segment, ...]
    values: tuple[Any, ...]

    @property
    def error_path(self) -> str:
        return loc_to_path(self.segments)


def expand_cells(spec: Spec, source: str = "<spec>") -> list[Cell]:
    """Every cell, validated as a full spec; problems of all cells are raised together."""
    base = spec.model_dump(mode="json", exclude={"matrix"})
    matrix = spec.matrix
    if matrix is None or not matrix.axes:
        overrides: list[Override] = list(matrix.expect) if matrix else []
        if overrides:
            raise SpecError([f"{source}: matrix.expect: overrides need at least one axis"])
        base["expect"] = _cell_expect(base.get("expect") or {}, [], {})
        cell_spec, problems = _validate(base)
        _raise_problems(source, [("01_main", p) for p in problems], [], {"01_main"})
        assert cell_spec is not None
        return _bug_checked(spec, [Cell("01_main", {}, cell_spec)], source)

    axes = _axes(spec, base, source)
    _check_overrides(matrix.expect, axes, source)
    _check_when([("exclude", i, e) for i, e in enumerate(matrix.exclude)], axes, source)
    combos = [
        c
        for c in itertools.product(*(a.values for a in axes))
        if not _excluded({a.key: v for a, v in zip(axes, c, strict=True)}, matrix.exclude)
    ]
    if not combos:
        raise SpecError([f"{source}: matrix.exclude: every cell is excluded"])
    if len(combos) > MAX_CELLS:
        raise SpecError([f"{source}: matrix: {len(combos)} cells; at most {MAX_CELLS} allowed"])
    names = _short_names(axes)
    width = max(2, len(str(len(combos))))
    cells: list[Cell] = []
    failures: list[tuple[str, tuple[str, str]]] = []
    typed: set[str] = set()  # cells whose types passed, so their rules were checked
    for n, combo in enumerate(combos, start=1):
        cell_id = _cell_id(n, width, axes, names, combo)
        data = copy.deepcopy(base)
        params: dict[str, Any] = {}
        for axis, value in zip(axes, combo, strict=True):
            set_at(data, axis.segments, copy.deepcopy(value))
            params[axis.key] = value
        data["expect"] = _cell_expect(data.get("expect") or {}, matrix.expect, params)
        cell_spec, problems = _validate(data)
        failures += [(cell_id, p) for p in problems]
        if cell_spec is not None:
            typed.add(cell_id)
            cells.append(Cell(cell_id, params, cell_spec))
    _raise_problems(source, failures, axes, typed)
    return _bug_checked(spec, cells, source)


def _bug_checked(spec: Spec, cells: list[Cell], source: str) -> list[Cell]:
    """The cells, once a `bug:` section's rule holds over them (harness.spec.bug)."""
    problems = bug_problems(spec.bug, cells) if spec.bug is not None else []
    if problems:
        raise SpecError([f"{source}: {p}" for p in problems])
    return cells


def filter_cells(cells: list[Cell], pattern: str) -> list[Cell]:
    """`--cells a,b*`: comma-separated substrings or fnmatch globs on the cell id."""
    terms = [t.strip() for t in pattern.split(",") if t.strip()]

    def hit(cell_id: str, term: str) -> bool:
        if any(ch in term for ch in "*?["):
            return fnmatch.fnmatchcase(cell_id, term)
        return term in cell_id

    chosen = [c for c in cells if any(hit(c.id, t) for t in terms)]
    if not chosen:
        ids = "\n  ".join(c.id for c in cells)
        raise ConfigError(f"--cells {pattern!r} matches no cell; the cells are:\n  {ids}")
    return chosen


# --- axes ------------------------------------------------------------------------------------
def _axes(spec: Spec, base: dict[str, Any], source: str) -> list[_Axis]:
    assert spec.matrix is not None
    errors: list[str] = []
    axes: list[_Axis] = []
    for key, values in spec.matrix.axes.items():
        try:
            segments = resolve_path(key)
            check_reachable(base, segments)
        except ValueError as exc:
            errors.append(f"{source}: matrix.{key}: {exc}")
            continue
        if not values:
            errors.append(f"{source}: matrix.{key}: expected a non-empty list of values")
            continue
        axes.append(_Axis(key, segments, tuple(values)))
    if errors:
        raise SpecError(errors)
    return axes


# --- expectations ----------------------------------------------------------------------------
def _norm(value: Any) -> str:
    """Loose scalar identity for `when`: 1 == '1', true != 1."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _matches(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, list) and not isinstance(actual, list):
        return any(_norm(actual) == _norm(w) for w in wanted)
    if isinstance(actual, list | dict):
        return bool(actual == wanted)
    return _norm(actual) == _norm(wanted)


def when_matches(actual: Any, wanted: Any) -> bool:
    """Whether an axis value meets a `when` (or `exclude`) entry's wanted value (a value, or a
    list of values any of which will do)."""
    return _matches(actual, wanted)


def excluded_combinations(spec: Spec) -> list[dict[str, Any]]:
    """The axis values of every combination `matrix.exclude` leaves out (for `validate`)."""
    matrix = spec.matrix
    if matrix is None or not matrix.exclude:
        return []
    combos = (
        dict(zip(matrix.axes, c, strict=True)) for c in itertools.product(*matrix.axes.values())
    )
    return [params for params in combos if _excluded(params, matrix.exclude)]


def _excluded(params: dict[str, Any], exclude: list[dict[str, Any]]) -> bool:
    return any(
        all(k in params and _matches(params[k], v) for k, v in entry.items()) for entry in exclude
    )


def _check_overrides(overrides: list[Override], axes: list[_Axis], source: str) -> None:
    _check_when([("expect", i, o.when) for i, o in enumerate(overrides)], axes, source)


def _check_when(
    whens: list[tuple[str, int, dict[str, Any]]], axes: list[_Axis], source: str
) -> None:
    """Each `when` (an override's, or an `exclude` entry) names axes and values they have."""
    by_key = {a.key: a for a in axes}
    errors: list[str] = []
    for section, i, when in whens:
        if section == "exclude" and not when:
            errors.append(f"{source}: matrix.{section}[{i}]: expected at least one axis")
        for key, wanted in when.items():
            where = ".when" if section == "expect" else ""
            path = f"{source}: matrix.{section}[{i}]{where}.{key}"
            axis = by_key.get(key)
            if axis is None:
                errors.append(f"{path}: not a matrix axis; axes: {', '.join(by_key)}")
                continue
            if not any(_matches(v, wanted) for v in axis.values):
                shown = ", ".join(_norm(v) for v in axis.values)
                errors.append(f"{path}: {wanted!r} is not a value of this axis ({shown})")
    if errors:
        raise SpecError(errors)


def _cell_expect(
    expect: dict[str, Any], overrides: list[Override], params: dict[str, Any]
) -> dict[str, Any]:
    """Base expectations, then each matching override in order; null removes a bound."""
    out = dict(expect)
    for override in overrides:
        if all(_matches(params[k], v) for k, v in override.when.items()):
            out.update({k: (str(b) if b is not None else None) for k, b in override.expect.items()})
    return {k: v for k, v in out.items() if v is not None}


# --- cell ids --------------------------------------------------------------------------------
def _short_names(axes: list[_Axis]) -> list[str]:
    """Last field name (or the whole free-form key); the full key where two would clash."""

    def short(axis: _Axis) -> str:
        last = axis.segments[-1]
        if isinstance(last, int):
            return f"{axis.segments[-2]}.{last}"
        return last

    names = [short(a) for a in axes]
    return [a.key if names.count(n) > 1 else n for a, n in zip(axes, names, strict=True)]


def _cell_id(
    n: int, width: int, axes: list[_Axis], names: list[str], combo: tuple[Any, ...]
) -> str:
    parts = []
    for axis, name, value in zip(axes, names, combo, strict=True):
        if isinstance(value, dict | list):
            text = f"v{next(i for i, v in enumerate(axis.values) if v == value) + 1}"
        else:
            text = _norm(value)
        parts.append(f"{name}={text}")
    body = _UNSAFE.sub("-", "_".join(parts))[:200]
    return f"{n:0{width}d}_{body}"


# --- validation ------------------------------------------------------------------------------
def _validate(data: dict[str, Any]) -> tuple[Spec | None, list[tuple[str, str]]]:
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        return None, validation_problems(exc)
    return spec, spec_problems(spec)


def _raise_problems(
    source: str, failures: list[tuple[str, tuple[str, str]]], axes: list[_Axis], typed: set[str]
) -> None:
    """One line per distinct problem; cells named unless it is in every cell it could be in.

    Rules across fields are checked only in cells whose types passed (`typed`).
    """
    if not failures:
        return
    grouped: dict[tuple[str, str], list[str]] = {}
    for cell_id, problem in failures:
        grouped.setdefault(problem, []).append(cell_id)
    lines = []
    for (path, message), cell_ids in grouped.items():
        for axis in axes:
            ap = axis.error_path
            if path == ap or path.startswith((ap + ".", ap + "[")):
                path = f"matrix.{axis.key}"
                break
        everywhere = set(cell_ids) >= typed if set(cell_ids) & typed else False
        if axes and not everywhere:
            shown = ", ".join(cell_ids[:4]) + (", ..." if len(cell_ids) > 4 else "")
            where = f" (cell{'s' if len(cell_ids) > 1 else ''} {shown})"
        else:
            where = ""
        lines.append(f"{source}: {path}{where}: {message}")
    raise SpecError(lines)
