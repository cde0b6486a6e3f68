"""Verification throughput: the Spark checks against a plain pandas count, same data, same process.

A synthetic cell of N ledger rows (benchmarks/synthetic_cell.py: 6 partitions; 0.1 % of
acked records missing from the log, 0.1 % written twice, a producer pause, a group member
replaced half way that re-reads 1 %; every figure known by construction) is written once
as the contract Parquet files (in a child process, so its arrays do not count in our
memory). Then, alternating, `--repeat` times:
- spark_counts: the Spark checks' lost and duplicated counts (spark_jobs.seq_blocks),
- spark_all: every check of the cell (`verify_cell`: counts, resumptions, stalls, …),
- pandas_counts: a straightforward pandas version of the lost/duplicated counts (the
  baseline only; not a second implementation in the product).
- cli_verify (`--cli`): `python -m harness verify` of a result folder holding the cell (a
  fresh process each time: the JVM's start, the session, every check, the summary and the
  report, as a user pays for them).
`--per-check` also times each check of the table alone, warm, over the same cell (its own
Spark jobs, none of the others' beside it: what the check costs, not its share of a parallel
compose). Throughput is ledger rows per second of wall time, median of the repeats; reading
the files is inside each timing. Every answer is compared with the known one (spark_all: every figure
`synthetic_cell.figures` lists), so a fast wrong answer cannot win. Peak memory: the pandas
count in a fresh process (its max RSS) beside the Spark JVM's peak RSS (VmHWM) plus this
driver process's.

Usage: python benchmarks/verify_throughput.py [--rows 1000000 10000000] [--repeat 3]
       [--master local[2]] [--cli] [--per-check] [--out benchmarks/results/verify_throughput.md]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic_cell import figures, write_cell


def pandas_counts(cell: Path) -> dict[str, int]:
    """Baseline: acked seqs missing from the log; seqs the log holds more than once."""
    ledger = pd.read_parquet(cell / "ledger.parquet", columns=["seq", "status"])
    log = pd.read_parquet(cell / "log.parquet", columns=["seq"])
    acked = ledger.loc[ledger["status"] == "ok", "seq"]
    lost = int((~acked.isin(log["seq"])).sum())
    counts = log["seq"].value_counts()
    return {"lost": lost, "duplicated": int((counts > 1).sum())}


def spark_counts(spark: Any, cell: Path) -> dict[str, int]:
    """The product's lost and duplicated counts (spark_jobs.seq_blocks, as verify_cell
    computes them), without the other checks."""
    from spark_jobs import seq_blocks as sb
    from spark_jobs.cell_data import read_cell

    data = read_cell(spark, cell)
    assert data.ledger is not None and data.log is not None
    blocks = sb.block_facts(data.ledger, data.log, None, []).cache()
    try:
        facts = sb.totals(blocks, [])
        dups = sb.duplicated(blocks, data.log).count() if facts["dup_blocks"] else 0
    finally:
        blocks.unpersist()
    return {"lost": facts["lost"], "duplicated": dups}


def spark_all(spark: Any, cell: Path) -> dict[str, Any]:
    from spark_jobs.verify import verify_cell

    return figures(verify_cell(spark, cell))


# The spec of the result folder `--cli` verifies: one cell (01_main) whose files are the
# synthetic cell's (6 partitions, the default group set).
RUN_SPEC = """name: synthetic
topic: {partitions: 6}
producer: {records: %d, rate: 5000}
expect: {}
"""
CELL_ID = "01_main"


def cli_verify(run: Path) -> dict[str, Any]:
    """`harness verify` of the result folder in a fresh process; the cell's lost and
    duplicated counts from the summary it rewrote."""
    subprocess.run(
        [sys.executable, "-m", "harness", "verify", str(run)],
        check=False,  # its exit code is the verdict's (the spec expects nothing: unknown)
        capture_output=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    summary = json.loads((run / "cells" / CELL_ID / "summary.json").read_text())
    counts = summary["counts"]
    return {"lost": counts["lost"], "duplicated": counts["duplicated"]}


def per_check(spark: Any, cell: Path) -> dict[str, float]:
    """Each check of the table alone over one context of the cell: its seconds."""
    from spark_jobs.cell_data import read_cell
    from spark_jobs.checks import CHECKS
    from spark_jobs.context import CellContext
    from spark_jobs.verify import compose, shuffle_partitions

    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(cell)))
    seconds: dict[str, float] = {}
    for check in CHECKS:
        ctx = CellContext(spark, read_cell(spark, cell), cell, 1000)
        try:
            t0 = time.perf_counter()
            compose([check], ctx)
            seconds[check.name] = time.perf_counter() - t0
        finally:
            ctx.close()
    return seconds


def timed(fn: Callable[[], dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    t0 = time.perf_counter()
    answer = fn()
    return time.perf_counter() - t0, answer


def _child(argv: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, __file__, *argv], check=True, capture_output=True, text=True
    )
    return done.stdout.strip().splitlines()[-1]


def write_known_cell(cell: Path, rows: int) -> dict[str, Any]:
    """The synthetic cell written in a child process (its arrays stay out of our memory);
    its known figures."""
    known: dict[str, Any] = json.loads(_child(["--write", str(cell), str(rows)]))
    return known


def emit(table: str, out: Path | None) -> None:
    """Print the table; also write it to `out` when given."""
    print(table)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(table + "\n")


def _peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _self_peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default=None, help="Spark master (default local[2])")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--cli", action="store_true", help="also time `harness verify`")
    parser.add_argument("--per-check", action="store_true", help="also time each check alone")
    parser.add_argument("--write", nargs=2, metavar=("CELL", "ROWS"), help=argparse.SUPPRESS)
    parser.add_argument("--pandas-peak", metavar="CELL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:  # child: write the cell, print its known figures
        print(json.dumps(write_cell(Path(args.write[0]), int(args.write[1]))))
        return
    if args.pandas_peak:  # child: the pandas count alone, print its peak RSS
        pandas_counts(Path(args.pandas_peak))
        print(_self_peak_mib())
        return

    from spark_jobs.session import spark_session

    spark = spark_session("kafka-chaos-bench-verify", master=args.master)
    jvm = spark.sparkContext._gateway.proc.pid  # type: ignore[union-attr]
    lines = [
        "| ledger rows | method | median s | rows/s | speed vs pandas (x) | peak MiB |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    check_lines = ["", "| ledger rows | check (alone, warm) | median s |", "|---:|---|---:|"]
    try:
        for rows in args.rows:
            with tempfile.TemporaryDirectory() as tmp:
                run = Path(tmp) / "run"
                cell = run / "cells" / CELL_ID
                truth = write_known_cell(cell, rows)
                (run / "spec.yaml").write_text(RUN_SPEC % rows)
                counts_truth = {k: truth[k] for k in ("lost", "duplicated")}
                methods: dict[str, tuple[Callable[[], dict[str, Any]], dict[str, Any]]] = {
                    "pandas_counts": (partial(pandas_counts, cell), counts_truth),
                    "spark_counts": (partial(spark_counts, spark, cell), counts_truth),
                    "spark_all": (partial(spark_all, spark, cell), truth),
                }
                if args.cli:
                    methods["cli_verify"] = (partial(cli_verify, run), counts_truth)
                times: dict[str, list[float]] = {m: [] for m in methods}
                spark_counts(spark, cell)  # warm the JVM once, untimed
                for _ in range(args.repeat):
                    for name, (fn, known) in methods.items():
                        seconds, answer = timed(fn)
                        if answer != known:
                            raise SystemExit(f"{name} answered {answer}, expected {known}")
                        times[name].append(seconds)
                        print(f"{rows:>11,} {name:14} {seconds:8.2f} s", flush=True)
                if args.per_check:
                    runs = [per_check(spark, cell) for _ in range(args.repeat)]
                    for name in runs[0]:
                        med = statistics.median(r[name] for r in runs)
                        check_lines.append(f"| {rows:,} | {name} | {med:.2f} |")
                pandas_peak = float(_child(["--pandas-peak", str(cell)]))
                spark_peak = _peak_mib(jvm) + _self_peak_mib()
                base = statistics.median(times["pandas_counts"])
                for name in methods:
                    med = statistics.median(times[name])
                    peak = pandas_peak if name == "pandas_counts" else spark_peak
                    lines.append(
                        f"| {rows:,} | {name} | {med:.2f} | {rows / med:,.0f} "
                        f"| {base / med:.2f} | {peak:,.0f} |"
                    )
    finally:
        spark.stop()
    emit("\n".join(lines + (check_lines if args.per_check else [])), args.out)


if __name__ == "__main__":
    main()
