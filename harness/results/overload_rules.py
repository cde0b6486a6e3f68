"""Which timing figures the machine's overload leaves undecided, and why (the reasons the
summary's `overloaded` holds).

A timing figure says as much about the machine as about Kafka when the machine was
overloaded while it was measured (harness.results.machine: the overloaded spans). One rule
judges each figure (RULES, by how it is made):

* WINDOW_SHARE, a duration or a sum over a window (a stall, unavailability, offline or
  unowned seconds, the producer's seconds behind or blocked): undecided when that window
  held at least OVERLOAD_MIN_S of overloaded time and at least OVERLOAD_SHARE of it.
* ONE_WINDOW, a maximum that is one window of its own (the longest redelivery wait, the
  most a record was behind its schedule), recorded by its check under `timing_windows`:
  undecided when OVERLOAD_SHARE of that window was overloaded, however short.
* SAMPLES, a quantile or maximum of per-record samples (the ack latencies): the latency
  check computes it again over the samples no overloaded span reached (`outside_overload`);
  the verdict judges that figure when enough samples remain (OUTSIDE_MIN_SAMPLES,
  OUTSIDE_MIN_SHARE), and the figure is undecided when too few do. A share of the window
  does not tell: a p99 is its slowest 1 % of samples, and a start-up overload over a quarter
  of a window held all of them (a measured `fail` blamed Kafka for it).

An undecided figure goes under the summary's `overloaded` with the reason made here and the
verdict judges it `unknown` (harness.verdict.checks). Counts are never affected. Thresholds
and the measurements behind them: docs/results.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from harness.results.machine import Machine, Span, describe_overload, overlap_ms
from harness.results.metrics import (
    BROKER_PREFIX,
    LATENCY_METRICS,
    PER_SET_KEYS,
    OutsideOverload,
    Window,
)

# A figure is undecided when its window held at least this much overloaded time, and at
# least this share of the window (WINDOW_SHARE; ONE_WINDOW: the share alone).
OVERLOAD_MIN_S = 5.0
OVERLOAD_SHARE = 0.5
# A sampled figure (SAMPLES) is judged over its samples outside overload when at least this
# many remain: a nearest-rank p99 over fewer than 100 samples is their maximum, one record.
OUTSIDE_MIN_SAMPLES = 100
# ... and at least this share of its samples: fewer, and those left are a minority picked by
# when they were sent (the machine's quiet seconds), no longer the part the bound was
# written for.
OUTSIDE_MIN_SHARE = 0.5


def overload_reason(machine: Machine, windows: Sequence[Span]) -> str | None:
    """WINDOW_SHARE: why a figure measured over `windows` is undecided, or None when the
    machine was fit."""
    total = sum(max(0, b - a) for a, b in windows)
    over = overlap_ms(machine.spans, windows)
    if total <= 0 or over < OVERLOAD_MIN_S * 1000 or over < OVERLOAD_SHARE * total:
        return None
    return describe_overload(machine, windows)


def one_window_reason(machine: Machine, windows: Sequence[Span]) -> str | None:
    """ONE_WINDOW: why a maximum that is its window is undecided, or None. No minimum time:
    a 2 s wait half spent waiting for a core is half the machine's."""
    total = sum(max(0, b - a) for a, b in windows)
    if total <= 0 or overlap_ms(machine.spans, windows) < OVERLOAD_SHARE * total:
        return None
    return describe_overload(machine, windows)


def enough_outside(entry: OutsideOverload) -> bool:
    """Whether the samples outside overload are enough to judge a SAMPLES figure by."""
    left = entry["samples"] - entry["overloaded_samples"]
    return left >= OUTSIDE_MIN_SAMPLES and left >= OUTSIDE_MIN_SHARE * entry["samples"]


def judged_outside(entry: OutsideOverload | None) -> bool:
    """Whether the verdict judges the figure over its samples outside overload (`value`)
    rather than over all of them: some were overloaded, and enough were not."""
    return (
        entry is not None
        and entry["overloaded_samples"] > 0
        and entry["value"] is not None
        and enough_outside(entry)
    )


def samples_reason(
    machine: Machine, windows: Sequence[Span], entry: OutsideOverload | None
) -> str | None:
    """SAMPLES: why a figure is undecided (too few samples left outside overload), or None
    (none was overloaded, or enough were not: the verdict judges those)."""
    if entry is None or entry["overloaded_samples"] == 0 or enough_outside(entry):
        return None
    n, k = entry["samples"], entry["overloaded_samples"]
    left = n - k
    short = [f"fewer than {OUTSIDE_MIN_SAMPLES}"] if left < OUTSIDE_MIN_SAMPLES else []
    short += ["under half of them"] if left < OUTSIDE_MIN_SHARE * n else []
    return (
        f"{describe_overload(machine, windows)}: {k:,} of the figure's {n:,} samples were"
        f" taken while it was overloaded, {left:,} outside ({', '.join(short)}): too few to"
        " judge it by"
    )


# --- Which rule judges each timing figure, over which window ----------------------------------
WINDOW_SHARE, ONE_WINDOW, SAMPLES = "window share", "one window", "samples"
# WINDOW_SHARE over the workload: sums and durations over the whole run.
WORKLOAD_FIGURES = (
    "unavailable_s",
    "producer_behind_s",  # the seconds the producer was behind, over its whole schedule
    "producer_blocked_s",  # its waits in the client, summed
    f"{BROKER_PREFIX}under_replicated_s",
    f"{BROKER_PREFIX}offline_partitions_s",
    f"{BROKER_PREFIX}produce_p99_ms_max",  # the brokers' own p99s over time, not our samples
    f"{BROKER_PREFIX}fetch_p99_ms_max",
    "isr.under_replicated_s",
)
# WINDOW_SHARE per consumer set (`<figure>.<set>`), and the longest stall of all.
PER_SET_TIMING = ("stall_s", "unowned_s")
STALLS = ("max_stall_s",)
# ONE_WINDOW: a maximum whose check records its window (`timing_windows`), per set or not.
ONE_WINDOW_FIGURES = ("producer_behind_max_s", "redelivery_wait_s")
# SAMPLES: the ack latencies. Their windows (the fault windows, the workload without them,
# the workload) only describe the machine in the reason.
FAULTED_FIGURES = ("ack_p99_ms_faulted",)
STEADY_FIGURES = ("ack_p99_ms_steady",)
SAMPLED_FIGURES = LATENCY_METRICS
# figure (a per-set one by its name before the set) -> the one rule that judges it
RULES: dict[str, str] = {
    **dict.fromkeys((*WORKLOAD_FIGURES, *PER_SET_TIMING, *STALLS), WINDOW_SHARE),
    **dict.fromkeys(ONE_WINDOW_FIGURES, ONE_WINDOW),
    **dict.fromkeys(SAMPLED_FIGURES, SAMPLES),
}
_RULED = (*WORKLOAD_FIGURES, *PER_SET_TIMING, *STALLS, *ONE_WINDOW_FIGURES, *SAMPLED_FIGURES)
assert len(RULES) == len(_RULED), "a figure under two rules"
assert set(FAULTED_FIGURES + STEADY_FIGURES) <= set(LATENCY_METRICS)
assert set(PER_SET_TIMING) <= set(PER_SET_KEYS) and "redelivery_wait_s" in PER_SET_KEYS


def rule_of(metric: str) -> str | None:
    """The overload rule that judges a figure as an expectation names it (`stall_s.group`,
    `broker.under_replicated_s`); None: no rule (a count, or a figure no rule knows)."""
    if metric in RULES:
        return RULES[metric]
    name, dot, _ = metric.partition(".")
    return RULES.get(name) if dot and name in PER_SET_KEYS else None


def minus(window: Span, holes: Iterable[Span]) -> list[Span]:
    """`window` without the holes (sorted, non-overlapping pieces)."""
    pieces = [window]
    for ha, hb in sorted(holes):
        out: list[Span] = []
        for a, b in pieces:
            if hb <= a or ha >= b:
                out.append((a, b))
                continue
            if ha > a:
                out.append((a, ha))
            if hb < b:
                out.append((hb, b))
        pieces = out
    return pieces


def figure_windows(
    workload: Span,
    faults: Sequence[Span],
    stalls: Sequence[Window | dict[str, object]],
    sets: Sequence[str],
) -> dict[str, list[Span]]:
    """Each timing figure an expectation can name -> the windows it was measured over (the
    ONE_WINDOW figures' come from their checks: `recorded_windows`).

    A stall is its set's longest window (the figure is that window's length: an overload
    elsewhere did not make it); `max_stall_s` the longest of all. The steady ack figure is
    the workload without the fault windows; the faulted one the fault windows."""
    out: dict[str, list[Span]] = {key: [workload] for key in WORKLOAD_FIGURES}
    out.update({key: [workload] for key in SAMPLED_FIGURES})
    faulted = [(max(a, workload[0]), min(b, workload[1])) for a, b in faults]
    out.update({key: [w for w in faulted if w[1] > w[0]] for key in FAULTED_FIGURES})
    out.update(dict.fromkeys(STEADY_FIGURES, minus(workload, faulted)))
    longest: dict[str, Span] = {}
    for w in stalls:
        s, a, b = str(w.get("set")), int(w["start_ms"]), int(w["end_ms"])  # type: ignore[call-overload]
        if s not in longest or b - a > longest[s][1] - longest[s][0]:
            longest[s] = (a, b)
    for s in sets:
        out[f"unowned_s.{s}"] = [workload]
        if s in longest:
            out[f"stall_s.{s}"] = [longest[s]]
    if longest:
        out["max_stall_s"] = [max(longest.values(), key=lambda w: w[1] - w[0])]
    return out


def recorded_windows(
    timing_windows: Mapping[str, Sequence[Sequence[int]]],
) -> dict[str, list[Span]]:
    """The summary's `timing_windows` (JSON lists) as spans."""
    return {
        metric: [(int(w[0]), int(w[1])) for w in windows]
        for metric, windows in timing_windows.items()
    }


def overloaded_figures(
    machine: Machine,
    windows: Mapping[str, list[Span]],
    sampled: Mapping[str, OutsideOverload] | None = None,
) -> dict[str, str]:
    """metric -> why it is undecided, each figure by its own rule (RULES): `windows` its
    windows, `sampled` the summary's `outside_overload` (the SAMPLES figures' samples)."""
    sampled = sampled or {}
    out: dict[str, str] = {}
    for metric, spans in windows.items():
        rule = rule_of(metric)
        if rule == SAMPLES:
            reason = samples_reason(machine, spans, sampled.get(metric))
        elif not spans:
            continue
        elif rule == ONE_WINDOW:
            reason = one_window_reason(machine, spans)
        else:
            reason = overload_reason(machine, spans)
        if reason is not None:
            out[metric] = reason
    return out
