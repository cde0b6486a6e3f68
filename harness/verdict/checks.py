"""Verdicts: a cell's measured outcome against its spec's expectations (pass / fail / unknown).

A check that cannot decide (the metric was not measured, the checker gave up, the event it
is about never happened) is `unknown`, never `pass`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from harness.results.metrics import PER_SET_KEYS, RECOVERED, Figures, OutsideOverload
from harness.results.overload_rules import judged_outside
from harness.results.verdicts import VERDICTS, Verdict, worst
from harness.spec.expect import RESUMPTION, Bound, format_number, split_per_set, split_section
from harness.verdict.margin import has_margin, margin

__all__ = [
    "VERDICTS",
    "Judgement",
    "Verdict",
    "evaluate",
    "judged_value",
    "lookup",
    "margins",
    "overall",
    "recovery",
    "why_undecided",
]


@dataclass(frozen=True)
class Judgement:
    """One entry of the summary's `checks` list: an expectation, or a condition of the cell
    (run, recovery, faults, evidence), judged against the figures. A check
    (spark_jobs.check.Check) computes figures; a judgement only reads them."""

    name: str
    verdict: Verdict
    detail: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def evaluate(expect: Mapping[str, Bound | None], summary: Figures) -> list[Judgement]:
    """One check per bound, in the spec's order; a null bound is no check. `recovered` is
    not among them: it decides the `recovery` check (see `recovery`)."""
    checks = []
    for metric, bound in expect.items():
        if bound is None or metric == RECOVERED:
            continue
        if metric == RESUMPTION:
            checks.append(_resumption(summary))
        else:
            checks.append(_numeric(metric, bound, summary))
    return checks


def margins(expect: Mapping[str, Bound | None], summary: Figures) -> dict[str, float | None]:
    """Each ordered bound's margin (harness.verdict.margin) in the cell, rounded to 4
    decimals; None when its figure is undecided (or not a number). Bounds without a margin
    (`==`, `!=`, `exact`, true/false) are left out."""
    out: dict[str, float | None] = {}
    for metric, bound in expect.items():
        if bound is None or not has_margin(bound):
            continue
        value = judged_value(metric, summary, bound)
        number = float(value) if isinstance(value, int | float) else math.nan
        decided = not isinstance(value, bool) and math.isfinite(number)
        out[metric] = round(margin(bound, number), 4) if decided else None
    return out


def overall(checks: Iterable[Judgement], extra: Iterable[str] = ()) -> Verdict:
    """fail if anything failed, else unknown if anything is unknown, else pass.

    `extra` are verdicts from outside the expectations (e.g. "unknown" when recovery or the
    final drain did not complete). With no checks and no extra verdicts the answer is
    `unknown`: a cell that asserts nothing has not shown anything to hold.
    """
    return worst([*(c.verdict for c in checks), *extra])


def recovery(recovered: bool | None, detail: str, expected: bool | None = None) -> Judgement:
    """Did the cluster heal in the recovery phase (`recovery.end`)? Without an expectation
    a cluster that did not heal (or a cell that never got that far) undecides the cell: its
    figures were measured on a cluster still broken. With `recovered: true/false` expected,
    the outcome is checked against it."""
    wanted = "" if expected is None else f", expected recovered = {str(expected).lower()}"
    if recovered is None:
        reason = detail or "no recovery.end event: the cell never finished its recovery phase"
        return Judgement("recovery", "unknown", reason + wanted)
    said = f"the cluster {'healed' if recovered else 'did not heal'}"
    said += f": {detail}" if detail else ""
    verdict: Verdict
    if expected is None:
        verdict = "pass" if recovered else "unknown"
    else:
        verdict = "pass" if recovered == expected else "fail"
    return Judgement("recovery", verdict, said + wanted)


def lookup(metric: str, summary: Figures) -> object:
    """A metric's value: counts first, then the summary's top level; `<metric>.<set>` from
    the summary's per-set section of that metric; `<section>.<key>` from a summary section
    (SECTION_FIGURES: `lost_where.truncated`)."""
    named = split_section(metric)
    if named is not None:
        figures = summary.get(named[0])
        return figures.get(named[1]) if isinstance(figures, Mapping) else None
    per_set = split_per_set(metric)
    if per_set is not None:
        name, consumer_set = per_set
        section = summary.get(PER_SET_KEYS[name])
        values = section.get(consumer_set) if isinstance(section, Mapping) else None
        return values.get(name) if isinstance(values, Mapping) else values
    counts = summary.get("counts") or {}
    if metric in counts:
        return counts[metric]
    return summary.get(metric)


def why_undecided(metric: str, summary: Figures) -> str:
    """The summary's reason for an undecided figure: its own, its section's or its set's."""
    reasons = summary.get("undecided") or {}
    reason = reasons.get(metric)
    section = split_section(metric)
    if reason is None and section is not None:
        reason = reasons.get(section[0])
    per_set = split_per_set(metric)
    if reason is None and per_set is not None:
        name = per_set[0]
        reason = reasons.get(PER_SET_KEYS[name]) or reasons.get(
            "max_stall_s" if name == "stall_s" else name
        )
    return str(reason) if reason else "not measured"


def _numeric(metric: str, bound: Bound, summary: Figures) -> Judgement:
    value = lookup(metric, summary)
    shown = bound.shown()
    if value is None:
        reason = why_undecided(metric, summary)
        return Judgement(metric, "unknown", f"{metric} undecided ({reason}), expected {shown}")
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return Judgement(
            metric, "unknown", f"{metric} = {value!r} is not a number, expected {shown}"
        )
    if bound.threshold is None:
        return Judgement(metric, "unknown", f"expected {shown}: the bound was never resolved")
    overloaded = (summary.get("overloaded") or {}).get(metric)
    if overloaded:  # a timing figure the machine, not only Kafka, may have made
        return Judgement(
            metric,
            "unknown",
            f"{metric} = {format_number(float(value))} undecided: {overloaded}, expected {shown}",
        )
    outside = _deciding_outside(metric, bound, summary, float(value))
    if outside is not None:
        return _judged_outside(metric, bound, outside, summary)
    verdict: Verdict = "pass" if bound.holds(float(value)) else "fail"
    detail = f"{metric} = {format_number(float(value))}, expected {shown}"
    return Judgement(metric, verdict, detail + _schedule_note(metric, summary))


def judged_value(metric: str, summary: Figures, bound: Bound) -> object:
    """The value the verdict judges against `bound`: the figure over its samples outside
    the machine's overloaded seconds where that is what it is judged by, else the figure
    (`lookup`)."""
    value = lookup(metric, summary)
    if isinstance(value, bool) or not isinstance(value, int | float) or bound.threshold is None:
        return value
    outside = _deciding_outside(metric, bound, summary, float(value))
    return value if outside is None else outside["value"]


def _deciding_outside(
    metric: str, bound: Bound, summary: Figures, value: float
) -> OutsideOverload | None:
    """The figure over its samples outside the machine's overloaded seconds, when that is
    what judges it (harness.results.overload_rules, the SAMPLES rule, and the overload may
    have decided the verdict of `value`, the figure over all of them); else None."""
    entries = summary.get("outside_overload")
    entry = entries.get(metric) if isinstance(entries, Mapping) else None
    if not judged_outside(entry) or not _overload_may_decide(bound, bound.holds(value)):
        return None
    return entry


def _overload_may_decide(bound: Bound, whole_holds: bool) -> bool:
    """Whether the overload may have decided a sampled figure's verdict, so that its samples
    outside overload judge it instead. An overload only lengthens latencies: a figure under
    an upper bound (`<`) that holds over all its samples holds, and one over a lower bound
    (`>`) that fails over all of them fails; only the other outcomes may be the machine's."""
    if bound.op in ("<", "<="):
        return not whole_holds
    if bound.op in (">", ">="):
        return whole_holds
    return True


def _judged_outside(
    metric: str, bound: Bound, entry: OutsideOverload, summary: Figures
) -> Judgement:
    """Judged over the samples the overload did not reach; the detail says both figures.
    Those samples lean short (a long wait is the likelier to touch an overloaded second), so
    a lower bound they miss is undecided, not failed: the figure is not Kafka's for sure."""
    value = float(entry["value"] or 0)
    n, k = entry["samples"], entry["overloaded_samples"]
    verdict: Verdict = "pass" if bound.holds(value) else "fail"
    if verdict == "fail" and bound.op in (">", ">="):
        verdict = "unknown"
    detail = (
        f"{metric} = {format_number(value)} over the {n - k:,} samples outside the machine's"
        f" overloaded seconds ({format_number(float(entry['whole']))} over all {n:,};"
        f" {k:,} taken while overloaded), expected {bound.shown()}"
    )
    return Judgement(metric, verdict, detail + _schedule_note(metric, summary))


def _schedule_note(metric: str, summary: Figures) -> str:
    """The producer's schedule slip during a rate-dependent figure's window, as a note:
    the figure stands, but was measured on a producer that sent late."""
    notes = summary.get("schedule_notes")
    note = notes.get(metric) if isinstance(notes, Mapping) else None
    return f" (note: {note})" if note else ""


def _resumption(summary: Figures) -> Judgement:
    """exact: every restart resumed at the committed offset / checkpoint."""
    restarts = summary.get("resumptions")
    if restarts is None:
        reason = why_undecided(RESUMPTION, summary)
        return Judgement(RESUMPTION, "unknown", f"resumption undecided ({reason}), expected exact")
    if not restarts:
        return Judgement(
            RESUMPTION, "unknown", "no consumer restarted, so resumption was not exercised"
        )
    exact = [r.get("exact") if isinstance(r, Mapping) else None for r in restarts]
    n = len(exact)
    if False in exact:
        bad = [r for r, e in zip(restarts, exact, strict=True) if e is False]
        first = ", ".join(f"{k}={v}" for k, v in bad[0].items() if k != "exact")
        detail = f"{len(bad)} of {n} restart(s) did not resume exactly"
        detail += f" (first: {first})" if first else ""
        return Judgement(RESUMPTION, "fail", detail)
    if None in exact:
        return Judgement(
            RESUMPTION, "unknown", f"{exact.count(None)} of {n} restart(s) could not be judged"
        )
    return Judgement(RESUMPTION, "pass", f"all {n} restart(s) resumed exactly")
