"""evidence: the cell's tables against what its history says was written and read. A review:
it reads the other checks' merged figures and undecides those a disagreeing table feeds.

Every figure is computed from the tables; the history says, independently, how many records
the producer attempted and had acknowledged (`producer.end`), how many the final reads
returned (`log.read`, `output.read`) and how many rows of each table the collect phase wrote
(`tables.written`, with each consumer's rows). A folder whose tables disagree with its own
history (an emptied or truncated ledger, a log of another length than the read that wrote
it, a seq in the ledger twice, rows of one consumer missing) is damaged or not this run's:
the figures computed from the disagreeing table are undecided, with both numbers in the
reason — never a pass. Histories written before `tables.written` existed are checked on
what they have.

Row counts come from the Parquet footers and, per consumer, from the `consumer` column
read a batch at a time (no Spark job: these are counts of the files, not of the records).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pyarrow.compute as pc
import pyarrow.parquet as pq

from harness.results import events as ev
from harness.results.events import Event
from harness.results.layout import CellPaths
from harness.results.metrics import (
    COUNT_NAMES,
    LATENCY_METRICS,
    PER_SET_KEYS,
    SCHEDULE_METRICS,
    SPARK_METRICS,
    Figures,
)
from spark_jobs.check import REVIEW, Check, merge
from spark_jobs.context import CellContext

# Which figures a table's damage undecides: the ledger and the log feed every figure; the
# consumers' tables all but the producer's and the log's own; the output the pipeline's.
PRODUCER_FIGURES = (
    "attempted",
    "acked",
    "failed",
    "lost",
    "duplicated",
    "unacked_present",
    "nonmonotonic_send",
    "unavailable_s",
    *LATENCY_METRICS,
    *SCHEDULE_METRICS,
)
OUTPUT_FIGURES = ("output_duplicates", "output_lost", "output_aborted")
TOP_FIGURES = (
    "max_stall_s",
    "unavailable_s",
    *LATENCY_METRICS,
    *SCHEDULE_METRICS,
    *SPARK_METRICS,
    "resumptions",
)
TABLES = ("ledger", "consumed", "commits", "log", "output")


def run(ctx: CellContext) -> Figures:
    return evidence(ctx.cell_dir, ctx.data.history, ctx.summary, ctx.ledger_duplicates)


@dataclass(frozen=True)
class Disagreement:
    table: str  # one of TABLES
    reason: str


def file_rows(cell_dir: Path) -> dict[str, int | None]:
    """Rows of each table by its footer; None: no such file (or not Parquet: the checks that
    read it say so)."""
    paths = CellPaths(cell_dir)
    files = {
        "ledger": paths.ledger,
        "consumed": paths.consumed,
        "commits": paths.commits,
        "log": paths.log,
        "output": paths.output,
    }
    rows: dict[str, int | None] = dict.fromkeys(files)
    for name, path in files.items():
        if path.is_file() and path.stat().st_size > 0:
            with contextlib.suppress(Exception):
                rows[name] = int(pq.read_metadata(path).num_rows)
    return rows


def rows_by_consumer(path: Path) -> dict[str, int]:
    """consumed.parquet's rows per `consumer`, a batch at a time (bounded memory)."""
    counts: Counter[str] = Counter()
    if not path.is_file() or path.stat().st_size == 0:
        return {}
    for batch in pq.ParquetFile(path).iter_batches(columns=["consumer"], batch_size=1 << 20):
        for item in pc.value_counts(batch.column(0)).to_pylist():
            counts[str(item["values"])] += int(item["counts"])
    return dict(counts)


def _of(history: Iterable[Event], kind: str) -> list[Event]:
    return [e for e in history if e.get("kind") == kind]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def disagreements(
    history: list[Event],
    rows: dict[str, int | None],
    counts: Mapping[str, int | None],
    ledger_duplicates: int | None,
    by_consumer: dict[str, int] | None,
) -> tuple[list[Disagreement], list[str]]:
    """What disagrees, and what was compared (for the check's detail). Pure: the history,
    the files' row counts, the checks' counts (`acked`), the ledger's seqs seen more than
    once, the consumed rows per consumer (None: not counted)."""
    bad: list[Disagreement] = []
    agreed: list[str] = []
    _producer(history, rows.get("ledger"), counts, ledger_duplicates, bad, agreed)
    for table, kind in (("log", ev.LOG_READ), ("output", ev.OUTPUT_READ)):
        _final_read(history, table, kind, rows.get(table), bad, agreed)
    written = _of(history, ev.TABLES_WRITTEN)
    if written:
        _written(written[-1], rows, by_consumer, bad, agreed)
    return bad, agreed


def _producer(
    history: list[Event],
    ledger_rows: int | None,
    counts: Mapping[str, int | None],
    duplicates: int | None,
    bad: list[Disagreement],
    agreed: list[str],
) -> None:
    if ledger_rows is None:
        return  # no ledger: its figures are undecided already (ledger.parquet missing)
    if duplicates:
        bad.append(Disagreement("ledger", f"{duplicates} seq(s) appear in the ledger twice"))
    ends = [e for e in _of(history, ev.PRODUCER_END) if _int(e.get("attempted")) is not None]
    if not ends:
        # The in-process producer always says it; a producer process killed on its way
        # (producer-crash) may leave its last words unsaid.
        if not _of(history, ev.PRODUCER_LAUNCH):
            said = f"ledger.parquet has {ledger_rows} rows, no {ev.PRODUCER_END} says how many"
            bad.append(Disagreement("ledger", said + " were sent"))
        return
    attempted = sum(int(e["attempted"]) for e in ends)
    acked = sum(_int(e.get("acked")) or 0 for e in ends)
    # One producer that ran to its end said everything it sent; incarnations killed on the
    # way (a producer-crash) said nothing, so their rows come on top.
    whole = len(ends) == 1 and len(_of(history, ev.PRODUCER_LAUNCH)) <= 1
    rows = (
        "ledger.parquet has {have} rows, producer.end says {said} attempted",
        "ledger {have} rows {relation} producer.end attempted {said}",
    )
    _hold(ledger_rows, attempted, whole, bad, agreed, rows)
    ledger_acked = _int(counts.get("acked"))
    if ledger_acked is not None:
        oks = (
            "the ledger has {have} records acked, producer.end says {said}",
            "acked {have} {relation} producer.end acked {said}",
        )
        _hold(ledger_acked, acked, whole, bad, agreed, oks)


def _hold(
    have: int,
    said: int,
    whole: bool,
    bad: list[Disagreement],
    agreed: list[str],
    texts: tuple[str, str],
) -> None:
    """The ledger's `have` against producer.end's `said`: equal for a whole producer, at
    least it when killed incarnations added rows no end counts. `texts`: what to say when
    they disagree, and when they agree."""
    relation = "=" if whole else ">="
    if (have != said) if whole else (have < said):
        bad.append(Disagreement("ledger", texts[0].format(have=have, said=said)))
    else:
        agreed.append(texts[1].format(have=have, said=said, relation=relation))


def _final_read(
    history: list[Event],
    table: str,
    kind: str,
    file_rows: int | None,
    bad: list[Disagreement],
    agreed: list[str],
) -> None:
    """The file holds what the read_uncommitted read returned (a read_committed one only
    flags those rows). An incomplete read undecides its figures already."""
    reads = [
        e
        for e in _of(history, kind)
        if e.get("complete") is True and e.get("isolation") in (None, ev.READ_UNCOMMITTED)
    ]
    if not reads or file_rows is None:
        return
    said = _int(reads[-1].get("records"))
    if said is None:
        return
    if said != file_rows:
        bad.append(
            Disagreement(table, f"{table}.parquet has {file_rows} rows, {kind} says {said} read")
        )
    else:
        agreed.append(f"{table} {file_rows} rows = {kind} records")


def _written(
    event: Event,
    rows: dict[str, int | None],
    by_consumer: dict[str, int] | None,
    bad: list[Disagreement],
    agreed: list[str],
) -> None:
    before = len(bad)
    for table in TABLES:
        said = _int(event.get(table))
        if said is None:
            continue
        have = rows.get(table)
        if have != said:
            shown = "no readable file" if have is None else f"{have} rows"
            bad.append(
                Disagreement(
                    table, f"{table}.parquet has {shown}, {ev.TABLES_WRITTEN} says {said} written"
                )
            )
    per_member = event.get("consumed_by")
    if isinstance(per_member, dict) and by_consumer is not None:
        for name in sorted(set(per_member) | set(by_consumer)):
            said, have = _int(per_member.get(name)) or 0, by_consumer.get(name, 0)
            if said != have:
                bad.append(
                    Disagreement(
                        "consumed",
                        f"consumed.parquet has {have} rows of {name}, "
                        f"{ev.TABLES_WRITTEN} says {said} written",
                    )
                )
    if len(bad) == before:
        agreed.append(f"every table's rows = {ev.TABLES_WRITTEN}")


def undone(summary: Figures, bad: list[Disagreement]) -> Figures:
    """The figures each disagreeing table feeds, undecided naming why (a reason already
    there stays): a part to merge into the summary (spark_jobs.check.merge)."""
    counts = summary.get("counts") or {}
    reasons = dict(summary.get("undecided") or {})
    new_counts: dict[str, int | None] = {}
    new_reasons: dict[str, str] = {}
    out: dict[str, object] = {}

    def undecided(name: str, reason: str) -> None:
        if name not in reasons:
            reasons[name] = new_reasons[name] = reason

    for d in bad:
        reason = f"evidence: {d.reason}"
        if d.table in ("ledger", "log"):
            names: tuple[str, ...] = (*COUNT_NAMES, *TOP_FIGURES)
        elif d.table == "output":
            names = OUTPUT_FIGURES
        else:
            names = tuple(n for n in (*COUNT_NAMES, *TOP_FIGURES) if n not in PRODUCER_FIGURES)
        for name in names:
            if name in counts:
                new_counts[name] = None
            elif name in summary:
                out[name] = None
            undecided(name, reason)
        if d.table != "output":
            for key in set(PER_SET_KEYS.values()):
                out[key] = {}
                undecided(key, reason)
    part = cast(Figures, out)
    if new_counts:
        part["counts"] = new_counts
    if new_reasons:
        part["undecided"] = new_reasons
    return part


def undecide(summary: Figures, bad: list[Disagreement]) -> None:
    """Make the figures each disagreeing table feeds undecided, naming why (in place)."""
    merge(summary, undone(summary, bad))


def evidence(
    cell_dir: Path, history: list[Event], summary: Figures, duplicates: int | None
) -> Figures:
    """Compare, undecide what disagrees, and give `evidence`: what was compared and what
    disagreed (the verdict's `evidence` check reads it)."""
    if not history:
        # No history.jsonl: the `run` check undecides the cell; the figures stay as measured.
        return {"evidence": {"compared": [], "disagreements": ["no history to hold the tables to"]}}
    rows = file_rows(cell_dir)
    written = _of(history, ev.TABLES_WRITTEN)
    wants_members = bool(written) and isinstance(written[-1].get("consumed_by"), dict)
    by_consumer = rows_by_consumer(CellPaths(cell_dir).consumed) if wants_members else None
    counts = summary.get("counts") or {}
    bad, agreed = disagreements(history, rows, counts, duplicates, by_consumer)
    if not written:
        agreed.append(f"no {ev.TABLES_WRITTEN} in the history (written before it existed)")
    part = undone(summary, bad)
    part["evidence"] = {"compared": agreed, "disagreements": [d.reason for d in bad]}
    return part


CHECK = Check(
    "evidence", needs=("summary", "ledger_duplicates"), decides=("evidence",), run=run, lane=REVIEW
)
