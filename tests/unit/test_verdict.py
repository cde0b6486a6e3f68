"""Verdicts against known answers: pass / fail / unknown, operators, resumption."""

from __future__ import annotations

from typing import Any

import pytest

from harness.spec import Bound, parse_bound
from harness.verdict.checks import Judgement, evaluate, overall


def summary(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "cell": "01_main",
        "counts": {
            "attempted": 1000,
            "acked": 990,
            "lost": 3,
            "lost_never_consumed": 0,
            "duplicated": 0,
            "reprocessed": None,
            "unacked_present": 2,
            "out_of_order": 0,
        },
        "max_stall_s": 12.5,
        "unavailable_s": None,
        "stalls_by_set": {"group": 12.5, "spark": None},
        "resumptions": [],
        "undecided": {"reprocessed": "the consumer crashed", "unavailable_s": "no acks at all"},
    }
    base.update(over)
    return base


def expect(**bounds: Any) -> dict[str, Bound | None]:
    return {k.replace("__", "."): parse_bound(v) for k, v in bounds.items()}


@pytest.mark.parametrize(
    ("bound", "verdict"),
    [
        (3, "pass"),
        ("== 0", "fail"),
        ("!= 0", "pass"),
        ("< 3", "fail"),
        ("<= 3", "pass"),
        ("> 2", "pass"),
        (">= 4", "fail"),
    ],
)
def test_operators(bound: object, verdict: str) -> None:
    [check] = evaluate(expect(lost=bound), summary())
    assert check.verdict == verdict
    assert check.detail == f"lost = 3, expected {parse_bound(bound)}"


def test_top_level_and_per_set_metrics() -> None:
    checks = evaluate(expect(max_stall_s="< 30", stall_s__group=">= 12.5"), summary())
    assert [c.as_dict() for c in checks] == [
        {"name": "max_stall_s", "verdict": "pass", "detail": "max_stall_s = 12.5, expected < 30"},
        {
            "name": "stall_s.group",
            "verdict": "pass",
            "detail": "stall_s.group = 12.5, expected >= 12.5",
        },
    ]


def test_spark_and_per_set_figures() -> None:
    """`<metric>.<set>` reads the per-set section of that metric; Spark sums are top level."""
    cell = summary(
        spark_by_set={"spark": {"data_loss_stop": 1, "sink_duplicates": 0, "read_twice": 40}},
        lost_never_consumed_by_set={"group": 0, "spark": 17},
        read_twice=40,
        sink_duplicates=0,
    )
    checks = evaluate(
        expect(
            data_loss_stop__spark=1,
            sink_duplicates=0,
            read_twice=">= 1",
            lost_never_consumed__spark=">= 1",
            lost_never_consumed__group=0,
            consumed_then_lost__spark=">= 1",
        ),
        cell,
    )
    assert [c.verdict for c in checks] == ["pass"] * 5 + ["unknown"]
    assert checks[0].detail == "data_loss_stop.spark = 1, expected == 1"
    assert checks[3].detail == "lost_never_consumed.spark = 17, expected >= 1"
    assert checks[5].detail.startswith("consumed_then_lost.spark undecided")


def test_undecided_metrics_are_unknown_with_the_reason() -> None:
    checks = evaluate(
        expect(reprocessed="<= 500", unavailable_s="< 5", stall_s__spark="< 1"), summary()
    )
    assert [c.verdict for c in checks] == ["unknown"] * 3
    assert checks[0].detail == "reprocessed undecided (the consumer crashed), expected <= 500"
    assert checks[1].detail == "unavailable_s undecided (no acks at all), expected < 5"
    assert checks[2].detail == "stall_s.spark undecided (not measured), expected < 1"


def test_missing_sections_are_unknown_not_pass() -> None:
    checks = evaluate(expect(lost=0, max_stall_s="< 30"), {"cell": "x"})
    assert [c.verdict for c in checks] == ["unknown", "unknown"]


def test_non_number_is_unknown() -> None:
    [check] = evaluate(expect(lost=0), summary(counts={"lost": "3"}))
    assert check.verdict == "unknown"


def test_null_bound_is_no_check() -> None:
    assert evaluate(expect(lost=None, duplicated=0), summary()) == [
        Judgement("duplicated", "pass", "duplicated = 0, expected == 0")
    ]


@pytest.mark.parametrize(
    ("resumptions", "verdict", "detail"),
    [
        (None, "unknown", "resumption undecided (not measured), expected exact"),
        ([], "unknown", "no consumer restarted, so resumption was not exercised"),
        ([{"exact": True}, {"exact": True}], "pass", "all 2 restart(s) resumed exactly"),
        ([{"exact": True}, {"exact": None}], "unknown", "1 of 2 restart(s) could not be judged"),
        (
            [{"exact": None}, {"exact": False, "consumer": "group/m0", "gap": 7}],
            "fail",
            "1 of 2 restart(s) did not resume exactly (first: consumer=group/m0, gap=7)",
        ),
        ([{"exact": False}], "fail", "1 of 1 restart(s) did not resume exactly"),
    ],
)
def test_resumption(resumptions: Any, verdict: str, detail: str) -> None:
    s = summary(resumptions=resumptions)
    if resumptions is None:
        del s["resumptions"]
    [check] = evaluate(expect(resumption="exact"), s)
    assert (check.name, check.verdict, check.detail) == ("resumption", verdict, detail)


def p(name: str = "a") -> Judgement:
    return Judgement(name, "pass", "")


def test_overall() -> None:
    f, u = Judgement("f", "fail", ""), Judgement("u", "unknown", "")
    assert overall([p(), p("b")]) == "pass"
    assert overall([p(), u]) == "unknown"
    assert overall([u, f, p()]) == "fail"
    assert overall([p()], extra=["unknown"]) == "unknown"
    assert overall([p()], extra=["fail"]) == "fail"
    assert overall([p()], extra=["pass"]) == "pass"


def test_no_expectations_is_unknown() -> None:
    assert overall([]) == "unknown"
    assert overall([], extra=["fail"]) == "fail"


def test_bad_extra_verdict() -> None:
    with pytest.raises(ValueError, match="not one of pass, fail, unknown"):
        overall([p()], extra=["ok"])
