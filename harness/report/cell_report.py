"""One cell's report.html: a single static file a person can read without the harness."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
import pyarrow.parquet as pq

from harness.report.broker_errors import broker_errors_section
from harness.report.broker_plot import broker_plot_png
from harness.report.broker_section import broker_rows
from harness.report.log_tails import read_broker_logs, tails_around
from harness.report.lost_where import lost_where_section
from harness.report.story import story
from harness.report.timeline import plot_timeline, png_data_uri, time_span, utc
from harness.results import events as ev
from harness.results.history_reader import read_jsonl
from harness.results.layout import RAW_FILES, CellPaths
from harness.results.machine import read_machine
from harness.results.metrics import COUNT_NAMES, ISR_FIGURES, LATENCY_METRICS
from harness.results.verdicts import as_verdict
from harness.results.windows import fault_windows

LEDGER_COLUMNS = ["seq", "status", "send_ts", "ack_ts"]
CONSUMED_COLUMNS = ["seq", "consumer", "ts"]
# History kinds too chatty for the events table (they are in the plot already).
QUIET_KINDS = {ev.PRODUCER_ERRORS, ev.PRODUCER_BLOCKED}
MAX_EVENT_ROWS = 300
# What each ack latency figure is over: (the part of spark_jobs.checks.latency, its words).
LATENCY_ROWS = {
    "ack_p50_ms": ("all", "median, all acked records"),
    "ack_p99_ms": ("all", "p99, all acked records"),
    "ack_max_ms": ("all", "slowest acked record"),
    "ack_p99_ms_faulted": ("faulted", "p99, records sent while a fault window was open"),
    "ack_p99_ms_steady": (
        "steady",
        "p99, records sent outside every fault window and recovery, from the first ack on",
    ),
    "ack_p99_ms_recovering": (
        "recovering",
        "p99, records sent after a heal until every partition had its full ISR again",
    ),
}


def fmt(value: Any) -> str:
    """None is undecided ("?"), floats get one decimal, containers become JSON."""
    if value is None:
        return "?"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, dict | list):
        return json.dumps(value, default=str)
    return str(value)


def generic_table(rows: list[Any]) -> tuple[list[str], list[list[str]]]:
    """Columns = union of keys in first-seen order; free-form check outputs fit without a schema."""
    columns: list[str] = []
    for row in rows:
        if isinstance(row, dict):
            columns += [k for k in row if k not in columns]
    if not columns:
        return ["value"], [[fmt(row)] for row in rows]
    return columns, [
        [fmt(row.get(c)) if isinstance(row, dict) else fmt(row) for c in columns] for row in rows
    ]


def _generation_waits(waits: object) -> list[Any]:
    """The summary's generation_waits with readable times and partition lists (as given when
    a row is not what the check writes)."""
    out: list[Any] = []
    for w in waits if isinstance(waits, list) else []:
        if isinstance(w, dict):
            ts, parts = w.get("ts"), w.get("partitions")
            w = {
                **w,
                "ts": utc(ts) if isinstance(ts, int) else ts,
                "partitions": ",".join(map(str, parts)) if isinstance(parts, list) else parts,
            }
        out.append(w)
    return out


class _Inputs:
    """What could be read from the cell folder, and what could not (said in the report)."""

    def __init__(self, cell_dir: Path) -> None:
        paths = CellPaths(cell_dir)
        self.problems: list[str] = []
        self.summary = self._summary(paths.summary)
        self.ledger = self._parquet(
            paths.ledger, LEDGER_COLUMNS, "no acked/error series and no lag"
        )
        self.consumed = self._parquet(
            paths.consumed, CONSUMED_COLUMNS, "no consumption series and no lag"
        )
        self.events = self._history(paths.history)
        self.overloaded = self._overloaded(paths.machine)
        brokers = paths.brokers
        self.logs = read_broker_logs(brokers) if brokers.is_dir() else {}
        if not self.logs:
            self.problems.append("missing: brokers/*.log (no broker log tails)")

    def _overloaded(self, path: Path) -> list[tuple[int, int]]:
        """The machine's overloaded spans (none without a machine table: from before it)."""
        try:
            machine = read_machine(path)
        except Exception as exc:
            self.problems.append(f"unreadable: {path.name} ({type(exc).__name__}: {exc})")
            return []
        return [] if machine is None else machine.spans

    def _summary(self, path: Path) -> dict[str, Any]:
        if not path.is_file():
            self.problems.append(f"missing: {path.name} (no verdict, counts or checks)")
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            self.problems.append(f"unreadable: {path.name} ({exc})")
            return {}
        if not isinstance(data, dict):
            self.problems.append(f"unreadable: {path.name} (not a JSON object)")
            return {}
        return data

    def _parquet(self, path: Path, columns: list[str], effect: str) -> pd.DataFrame | None:
        if not path.is_file():
            self.problems.append(f"missing: {path.name} ({effect})")
            return None
        try:
            return pq.read_table(path, columns=columns).to_pandas()
        except Exception as exc:  # pyarrow raises several types; any means "cannot draw"
            self.problems.append(f"unreadable: {path.name} ({type(exc).__name__}: {exc})")
            return None

    def _history(self, path: Path) -> list[dict[str, Any]]:
        if not path.is_file():
            self.problems.append(f"missing: {path.name} (no phases, fault windows or log tails)")
            return []
        events, bad = read_jsonl(path)
        if bad:
            self.problems.append(f"unreadable: {bad} line(s) of {path.name} skipped")
        return events


def _plot(inputs: _Inputs) -> tuple[str | None, str | None]:
    """Data URI of the timeline, or the reason there is none: a plot bug must not lose the report."""
    try:
        return png_data_uri(
            plot_timeline(inputs.ledger, inputs.consumed, inputs.events, inputs.overloaded)
        ), None
    except Exception as exc:
        return None, f"timeline plot failed: {type(exc).__name__}: {exc}"


def _broker_plot(inputs: _Inputs, cell_dir: Path) -> tuple[str | None, str | None]:
    """Data URI of Kafka's own metrics over time (on the timeline's axis), or the sentence
    saying why there is none."""
    try:
        span = time_span(inputs.ledger, inputs.consumed, inputs.events)
        png, note = broker_plot_png(CellPaths(cell_dir).metrics, inputs.events, span)
    except Exception as exc:  # a plot bug must not lose the report
        return None, f"broker metrics plot failed: {type(exc).__name__}: {exc}"
    return (png_data_uri(png), None) if png is not None else (None, note)


def _skipped(events: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Planned faults that never fired (their target could not be resolved), for the table."""
    return [
        {
            "id": f"#{fmt(e.get('index'))}",  # the fault's place in the spec, as the nemesis says
            "label": f"{e.get('fault', 'fault')} {e.get('target', '?')}",
            "inject": utc(int(e["ts"])),
            "heal": f"skipped: {e.get('reason', '')}",
            "duration": "-",
        }
        for e in events
        if e["kind"] == ev.FAULT_SKIPPED
    ]


def _faults(inputs: _Inputs) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """Fault windows (and skipped faults) for the table, and broker log tails around each
    inject and heal."""
    rows, tails = [], []
    for window in fault_windows(inputs.events):
        end = window.end_ms
        rows.append(
            {
                "id": "-" if window.fault_id is None else fmt(window.fault_id),
                "label": window.label,
                "inject": utc(window.start_ms),
                "heal": "not healed" if end is None else utc(end),
                "duration": "-" if end is None else f"{(end - window.start_ms) / 1000:.1f} s",
            }
        )
        crash = window.fault_id is None  # a consumer crash: no broker fault id
        moments = [("crash" if crash else "inject", window.start_ms)]
        if end is not None:
            moments.append(("restart" if crash else "heal", end))
        which = "" if crash else f" (fault {fmt(window.fault_id)})"
        for what, ts in moments:
            tails.append(
                {
                    "title": f"{what} {window.label}{which} at {utc(ts)} UTC",
                    "brokers": tails_around(inputs.logs, ts),
                }
            )
    rows += _skipped(inputs.events)
    return sorted(rows, key=lambda r: r["inject"]), tails


# What each figure of the summary's `isr` section is (harness.results.isr).
ISR_ROWS = {
    "isr_shrinks": "partition states whose ISR was smaller than the partition's previous one",
    "isr_expands": "partition states whose ISR was larger than the partition's previous one",
    "min_isr_size": "the smallest ISR seen",
    "under_replicated_s": "seconds during which some partition's ISR was smaller than its replicas",
    "failed_polls": "polls of the partition states that failed (skipped)",
}


def _isr(summary: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(figure, what it is, value) of the summary's `isr` section; none without one."""
    section = summary.get("isr")
    if not isinstance(section, dict):
        return []
    names = [*ISR_FIGURES, "failed_polls"]
    return [(name, ISR_ROWS.get(name, ""), fmt(section.get(name))) for name in names]


def _section(summary: dict[str, Any], name: str) -> dict[str, Any]:
    """A section of the summary, or nothing when it is absent or of another shape."""
    section = summary.get(name)
    return section if isinstance(section, dict) else {}


def _latency(summary: dict[str, Any], undecided: dict[str, Any]) -> list[tuple[str, ...]]:
    """(figure, what it is over and how many records, value, why undecided) per latency figure."""
    parts = summary.get("ack_latency") or {}
    rows: list[tuple[str, ...]] = []
    for name in LATENCY_METRICS:
        part, words = LATENCY_ROWS[name]
        acked = (parts.get(part) or {}).get("acked")
        over = words if acked is None else f"{words} ({acked})"
        rows.append((name, over, fmt(summary.get(name)), str(undecided.get(name, ""))))
    return rows


def _context(cell_dir: Path) -> dict[str, Any]:
    inputs = _Inputs(cell_dir)
    summary = inputs.summary
    verdict = as_verdict(summary.get("verdict"))
    counts = summary.get("counts") or {}
    undecided = summary.get("undecided") or {}
    count_rows = [
        (name, fmt(counts.get(name)), str(undecided.get(name, "")))
        for name in [*COUNT_NAMES, *(k for k in counts if k not in COUNT_NAMES)]
    ]
    plot_uri, plot_error = _plot(inputs)
    broker_plot_uri, broker_plot_note = _broker_plot(inputs, cell_dir)
    faults, tails = _faults(inputs)
    events = [e for e in inputs.events if e["kind"] not in QUIET_KINDS]
    return {
        "cell_id": summary.get("cell") or cell_dir.name,
        "verdict": verdict,
        "duration_s": summary.get("duration_s"),
        "problems": inputs.problems,
        "story": story(summary, inputs.events),
        "params": sorted((summary.get("params") or {}).items()),
        "counts": count_rows,
        "undecided": sorted(
            (k, str(v))
            for k, v in undecided.items()
            if k not in counts and k not in LATENCY_METRICS
        ),
        "checks": summary.get("checks") or [],
        "max_stall_s": summary.get("max_stall_s"),
        "unavailable_s": summary.get("unavailable_s"),
        "latency": _latency(summary, undecided),
        "isr": _isr(summary),
        "isr_shrinks": _section(summary, "isr").get("isr_shrinks"),
        "broker_isr_shrinks": _section(summary, "broker").get("isr_shrinks"),
        "broker": broker_rows(summary),
        "lost_where": lost_where_section(summary),
        "stalls_by_set": sorted((summary.get("stalls_by_set") or {}).items()),
        "resumptions": generic_table(summary.get("resumptions") or []),
        "spark": generic_table(
            [
                {"set": name, **figures}
                for name, figures in (summary.get("spark_by_set") or {}).items()
            ]
        ),
        "reprocessed": generic_table(summary.get("reprocessed_by_generation") or []),
        "steps": generic_table(
            [
                {
                    "step": s.get("target"),
                    "phase": s.get("phase") or "",
                    "from": utc(int(s["start_ms"])) if s.get("start_ms") else "",
                    "down_s": s.get("down_s"),
                    "unavailable_s": s.get("unavailable_s"),
                    **{f"stall_s.{k}": v for k, v in (s.get("stall_s") or {}).items()},
                }
                for s in summary.get("operation_steps") or []
            ]
        ),
        "ownership": generic_table(
            [
                {"set": name, **figures}
                for name, figures in (summary.get("ownership_by_set") or {}).items()
            ]
        ),
        "generation_waits": generic_table(_generation_waits(summary.get("generation_waits"))),
        "pipeline": generic_table([summary["pipeline"]] if summary.get("pipeline") else []),
        "plot_uri": plot_uri,
        "plot_error": plot_error,
        "broker_plot_uri": broker_plot_uri,
        "broker_plot_note": broker_plot_note,
        "faults": faults,
        "tails": tails,
        "events": [
            (utc(int(e["ts"])), e["kind"], {k: v for k, v in e.items() if k not in ("ts", "kind")})
            for e in events[:MAX_EVENT_ROWS]
        ],
        "events_omitted": max(0, len(events) - MAX_EVENT_ROWS),
        "files": [name for name in RAW_FILES if (cell_dir / name).is_file()],
        "broker_logs": sorted(inputs.logs),
        "broker_errors": broker_errors_section(summary, inputs.events),
    }


def _template() -> jinja2.Template:
    source = resources.files("harness.report").joinpath("templates/cell.html.j2").read_text("utf-8")
    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    env.filters["fmt"] = fmt
    return env.from_string(source)


def write_cell_report(cell_dir: Path) -> Path:
    """Write `cell_dir/report.html` from whatever the cell folder holds; missing inputs are named."""
    paths = CellPaths(cell_dir)
    out = paths.report
    paths.write_text(out, _template().render(**_context(cell_dir)))
    return out
