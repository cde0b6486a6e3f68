"""Bounds relative to the spec's own numbers: parsed, validated per cell, resolved per cell,
and able to fail (a stall bound that follows the outage when the outage changes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.errors import ConfigError
from harness.spec import expand_cells, load_spec, parse_bound, parse_spec, spec_to_yaml
from harness.verdict.cell_verdict import resolved_expect, summarize
from tests.unit.test_cell_verdict import history, metrics

SPEC = """
name: rel
producer: {duration_s: 90}
faults: [{at_s: 10, kind: kill, target: "broker:1", duration_s: 60}]
expect:
  stall_s.group: ">= 0.8 * faults.0.duration_s"
  max_stall_s: "< producer.duration_s - 10"
matrix:
  faults.0.duration_s: [20, 60]
"""


@pytest.mark.parametrize(
    ("text", "op", "value", "ref", "factor"),
    [
        (">= 0.8 * faults.0.duration_s", ">=", 0.0, "faults.0.duration_s", 0.8),
        ("< faults.0.duration_s - 5", "<", -5.0, "faults.0.duration_s", 1.0),
        ("<2*producer.duration_s+1.5", "<", 1.5, "producer.duration_s", 2.0),
        ("< 30", "<", 30.0, None, 1.0),
    ],
)
def test_parse(text: str, op: str, value: float, ref: str | None, factor: float) -> None:
    bound = parse_bound(text)
    assert (bound.op, bound.value, bound.ref, bound.factor) == (op, value, ref, factor)


@pytest.mark.parametrize(
    "text", ["0.8 * faults.0.duration_s", ">= faults.0.duration_s * x", ">= 2 *"]
)
def test_malformed_relative_bounds_are_errors(text: str) -> None:
    with pytest.raises(ValueError, match="spec path"):
        parse_bound(text)


def test_each_cell_resolves_its_own_threshold() -> None:
    cells = expand_cells(parse_spec(yaml.safe_load(SPEC), "rel.yaml"), "rel.yaml")
    thresholds = [{m: b.threshold for m, b in resolved_expect(c.spec).items() if b} for c in cells]
    assert thresholds == [
        {"stall_s.group": 16.0, "max_stall_s": 80.0},
        {"stall_s.group": 48.0, "max_stall_s": 80.0},
    ]


def test_an_unresolved_relative_bound_cannot_pass() -> None:
    bound = parse_bound(">= 0.5 * faults.0.duration_s")
    assert bound.threshold is None
    with pytest.raises(AssertionError):
        bound.holds(100.0)
    assert bound.resolve(60).holds(30.0) and not bound.resolve(60).holds(29.9)


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ('">= 0.8 * faults.3.duration_s"', "index 3 is beyond the spec's list of 1"),
        ('">= 0.8 * faults.0.to"', "faults.0.to is unset, not a number"),
        ('">= 0.8 * faults.0.duraton_s"', "has no field 'duraton_s'"),
        ('">= cluster.mode"', "cluster.mode is 'kraft', not a number"),
    ],
)
def test_references_that_name_no_number_are_errors(expect: str, message: str) -> None:
    text = SPEC.split("expect:")[0] + f"expect: {{max_stall_s: {expect}}}\n"
    with pytest.raises(ConfigError) as err:
        expand_cells(parse_spec(yaml.safe_load(text), "rel.yaml"), "rel.yaml")
    assert "expect.max_stall_s" in str(err.value) and message in str(err.value)


def test_a_relative_bound_round_trips_and_decides_the_verdict(tmp_path: Path) -> None:
    [_, long_outage] = expand_cells(parse_spec(yaml.safe_load(SPEC), "rel.yaml"), "rel.yaml")
    path = tmp_path / "spec.yaml"
    path.write_text(spec_to_yaml(long_outage.spec, 7))
    assert "'>= 0.8 * faults.0.duration_s'" in path.read_text()
    [cell] = expand_cells(load_spec(path))
    cell_dir = tmp_path / "cells" / cell.id
    cell_dir.mkdir(parents=True)
    (cell_dir / "history.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in history(True, "ok"))
    )
    figures = metrics() | {"stalls_by_set": {"group": 40.0}, "max_stall_s": 40.0}
    summary = summarize(cell, cell_dir, figures)
    stall = next(c for c in summary["checks"] if c["name"] == "stall_s.group")
    # 40 s would pass an absolute ">= 16" (the 20 s cell); here the outage was 60 s.
    assert stall == {
        "name": "stall_s.group",
        "verdict": "fail",
        "detail": "stall_s.group = 40, expected >= 48 (= 0.8 * faults.0.duration_s)",
    }
    assert summary["verdict"] == "fail"


@pytest.mark.parametrize(
    "text", [">= 0.0005 * cluster.brokers - 0.25", "< 1e-05 * producer.rate + 7"]
)
def test_the_written_form_parses_back_to_the_same_bound(text: str) -> None:
    bound = parse_bound(text)
    assert parse_bound(str(bound)) == bound  # spec.yaml keeps the text; verify reads it back
