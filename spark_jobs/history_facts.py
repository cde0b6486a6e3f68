"""What the history says about whether a check can decide, the measuring window, and which
consumer sets ran (the Spark sets' starts and failures among them)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from harness.results import events as ev
from harness.results.consumers import set_of
from harness.results.events import Event


def events(history: list[Event], kind: str) -> list[Event]:
    return [e for e in history if e.get("kind") == kind]


def _final_read_gap(
    history: list[Event], kind: str, file: str, has_file: bool
) -> str | Event | None:
    """A final read's gap: why it is missing (str), its first incomplete event, or None."""
    if not has_file:
        return f"{file} missing"
    reads = events(history, kind)
    if not reads:
        return f"no {kind} event in history.jsonl"
    incomplete = [e for e in reads if e.get("complete") is not True]
    return incomplete[0] if incomplete else None


def log_undecided(history: list[Event], has_log: bool) -> str | None:
    """Why the final log read cannot be trusted to be the whole topic (None if it can)."""
    gap = _final_read_gap(history, ev.LOG_READ, "log.parquet", has_log)
    if isinstance(gap, dict):
        records = gap.get("records")
        return f"final log read incomplete (log.read complete=false, records={records})"
    return gap


def pipeline(history: list[Event]) -> dict[str, object] | None:
    """The first pipeline.start event's fields (output, input, group, guarantee, members),
    or None: the cell ran no pipeline, so the output checks have nothing to judge."""
    starts = events(history, ev.PIPELINE_START)
    if not starts:
        return None
    return {k: v for k, v in starts[0].items() if k not in ("ts", "kind")}


def unseen_sets(history: list[Event]) -> set[str]:
    """Sets whose consumption the harness cannot see: a command pipeline (a user's program,
    `pipeline.start` with pipeline_kind command) writes no `consumed` lines, so the consumer
    checks leave its set out (the output checks judge it); histories before the field: none."""
    started = pipeline(history)
    if started is not None and started.get("pipeline_kind") == "command":
        return {ev.PIPELINE_SET}
    return set()


def output_undecided(history: list[Event], has_output: bool) -> str | None:
    """Why the final read of the pipeline's output topic cannot be trusted to be the whole
    topic (None if it can): every output.read (one per isolation level) must be complete."""
    gap = _final_read_gap(history, ev.OUTPUT_READ, "output.parquet", has_output)
    if isinstance(gap, dict):
        return (
            f"final output read incomplete ({ev.OUTPUT_READ} isolation={gap.get('isolation')}"
            f" complete={json.dumps(gap.get('complete'))}, records={gap.get('records')})"
        )
    return gap


def drain_undecided(history: list[Event]) -> str | None:
    """Why the consumers cannot be said to have read to the end (None if they did)."""
    drains = events(history, ev.DRAIN_END)
    if not drains:
        return f"no {ev.DRAIN_END} event in history.jsonl"
    incomplete = [e for e in drains if e.get("complete") is not True]
    if not incomplete:
        return None
    reason = incomplete[0].get("reason")  # it ended at once: a member could not start
    if reason:
        return f"final drain incomplete (drain.end complete=false: {reason})"
    return f"final drain incomplete (drain.end complete=false, lag={incomplete[0].get('lag')})"


def set_drained(history: list[Event], set_name: str) -> bool:
    """Whether one consumer set reached the end: the drain completed, or the incomplete
    drain's `lag` shows nothing left for that set (another set was the one behind)."""
    drains = events(history, ev.DRAIN_END)
    if not drains:
        return False
    for e in drains:
        if e.get("complete") is True:
            continue
        lag = (e.get("lag") or {}).get(set_name)
        if not isinstance(lag, dict) or any(int(v) > 0 for v in lag.values()):
            return False
    return True


def workload_start(history: list[Event]) -> int | None:
    starts = [
        int(e["ts"]) for e in events(history, ev.PHASE) if e.get("phase") == ev.PHASE_WORKLOAD
    ]
    return min(starts) if starts else None


def drain_end(history: list[Event]) -> int | None:
    ends = [int(e["ts"]) for e in events(history, ev.DRAIN_END)]
    return max(ends) if ends else None


def consumer_sets(history: list[Event]) -> set[str]:
    """Sets named by consumer events: a set that never consumed still counts as a set."""
    return {
        set_of(str(e["consumer"]))
        for e in history
        if str(e.get("kind", "")).startswith(ev.CONSUMER_PREFIX) and e.get("consumer")
    }


def share_sets(history: list[Event]) -> dict[str, dict[str, int]]:
    """Share-group sets (a consumer.start with `share_group`) -> the brokers' settings their
    members ran under: delivery_limit and lock_ms (the last start's)."""
    out: dict[str, dict[str, int]] = {}
    for e in events(history, ev.CONSUMER_START):
        if e.get("share_group") and e.get("consumer"):
            out[set_of(str(e["consumer"]))] = {
                "delivery_limit": int(e.get("delivery_limit") or 5),
                "lock_ms": int(e.get("lock_ms") or 30_000),
            }
    return out


def read_committed_sets(history: list[Event]) -> set[str]:
    """Sets with a consumer.start whose `isolation` is read_committed (a start without the
    field, written before it existed, does not count)."""
    return {
        set_of(str(e["consumer"]))
        for e in events(history, ev.CONSUMER_START)
        if e.get("consumer") and e.get("isolation") == ev.READ_COMMITTED
    }


@dataclass(frozen=True)
class StepPeriod:
    """One step of an operation and the period it answers for (operation_steps)."""

    fault_id: int
    step_of: int
    fault: str
    target: str
    start_ms: int
    end_ms: int
    down_ms: int | None  # its own window (inject to heal); None: never healed
    phase: str | None = None  # a migration step's phase (upgrade steps have none)


def operation_steps(history: list[Event]) -> list[StepPeriod]:
    """The steps of the cell's operations: fault windows whose inject names the operation
    they belong to (`step_of`: an upgrade's node by node). Each step's period runs from its
    inject to the next step's of the same operation, the last one's to the operation's heal
    (its own heal if the operation never healed)."""
    heals = {e.get("fault_id"): int(e["ts"]) for e in events(history, ev.FAULT_HEAL)}
    injects = [e for e in events(history, ev.FAULT_INJECT) if e.get("step_of") is not None]
    out: list[StepPeriod] = []
    for i, e in enumerate(injects):
        start = int(e["ts"])
        later = [int(n["ts"]) for n in injects[i + 1 :] if n.get("step_of") == e["step_of"]]
        own = heals.get(e.get("fault_id"))
        end = later[0] if later else heals.get(e["step_of"], own)
        out.append(
            StepPeriod(
                fault_id=int(e["fault_id"]),
                step_of=int(e["step_of"]),
                fault=str(e.get("fault")),
                target=str(e.get("target")),
                start_ms=start,
                end_ms=max(start, end) if end is not None else start,
                down_ms=None if own is None else own - start,
                phase=None if e.get("phase") is None else str(e["phase"]),
            )
        )
    return out


@dataclass(frozen=True)
class SparkSetFacts:
    """What the history says about one Spark consumer set."""

    name: str
    consumer: str
    resumes: list[Event]  # spark.resume events in start order
    failure: Event | None  # the last spark.query.failed event


def spark_sets(history: list[Event]) -> list[SparkSetFacts]:
    by_consumer: dict[str, list[Event]] = {}
    for e in history:
        if str(e.get("kind", "")).startswith(ev.SPARK_PREFIX) and "consumer" in e:
            by_consumer.setdefault(str(e["consumer"]), []).append(e)
    out = []
    for consumer, found in sorted(by_consumer.items()):
        resumes = sorted(
            (e for e in found if e["kind"] == ev.SPARK_RESUME), key=lambda e: e["generation"]
        )
        failures = [e for e in found if e["kind"] == ev.SPARK_QUERY_FAILED]
        out.append(
            SparkSetFacts(set_of(consumer), consumer, resumes, failures[-1] if failures else None)
        )
    return out
